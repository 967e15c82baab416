package catalogdb

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// Precision limits of the types a CAST or CONVERT may name, as MariaDB
// has them: a DATETIME or TIME of at most maxPrecision digits of a
// second, a DECIMAL of at most maxDecimalPrecision digits, of which at
// most maxDecimalScale after the point.
const (
	maxDecimalPrecision = 65
	maxDecimalScale     = 38
)

// maxEngineDecimalScale is the most digits after the point of a DECIMAL
// the catalog engine computes: go-mysql-server answered CAST(1.5 AS
// DECIMAL(40, 31)) as 1.5, ignoring the type, where MariaDB writes 31
// digits.
const maxEngineDecimalScale = 30

// castPrecisionError is MariaDB's error for a CAST or CONVERT to a type
// whose precision or scale is past its limit, or nil: 1426
// (ER_TOO_BIG_PRECISION) for DATETIME(7), TIME(7) or DECIMAL(66), 1425
// (ER_TOO_BIG_SCALE) for DECIMAL(40, 39), each naming the converted
// expression as MariaDB does (a string literal by its value), 1427
// (ER_M_BIGGER_THAN_D) for DECIMAL(5, 6), in MariaDB's order; and 1235
// for a DECIMAL scale MariaDB takes but the engine does not
// (maxEngineDecimalScale). The engine panicked on DATETIME(7), answered
// TIME(7) with 6 digits and DECIMAL(70) as if it were DECIMAL(65), so
// backstop checks this before it runs.
func castPrecisionError(n *sqlparser.ConvertExpr) *Error {
	if n.Type == nil {
		return nil
	}
	limit := func(v *sqlparser.SQLVal, most int64) bool {
		if v == nil {
			return false
		}
		l, err := strconv.ParseInt(string(v.Val), 10, 64)
		return err != nil || l > most
	}
	switch strings.ToLower(n.Type.Type) {
	case "datetime", "time":
		if limit(n.Type.Length, maxPrecision) {
			return tooBig(1426, "precision", n.Expr, maxPrecision)
		}
	case "decimal":
		if limit(n.Type.Length, maxDecimalPrecision) {
			return tooBig(1426, "precision", n.Expr, maxDecimalPrecision)
		}
		if limit(n.Type.Scale, maxDecimalScale) {
			return tooBig(1425, "scale", n.Expr, maxDecimalScale)
		}
		if n.Type.Length != nil && n.Type.Scale != nil {
			m, _ := strconv.ParseInt(string(n.Type.Length.Val), 10, 64)
			if d, _ := strconv.ParseInt(string(n.Type.Scale.Val), 10, 64); m < d {
				return &Error{Code: 1427, State: "42000", Msg: "For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column '')"}
			}
		}
		if limit(n.Type.Scale, maxEngineDecimalScale) {
			return &Error{Code: 1235, State: "42000", Msg: fmt.Sprintf("not supported over the catalog: CAST to DECIMAL with %s digits after the point; the catalog engine computes at most %d: write DECIMAL(M, %d)", n.Type.Scale.Val, maxEngineDecimalScale, maxEngineDecimalScale)}
		}
	}
	return nil
}

// tooBig is MariaDB's ER_TOO_BIG_PRECISION (code 1426, what "precision")
// or ER_TOO_BIG_SCALE (1425, "scale") for the expression e.
func tooBig(code uint16, what string, e sqlparser.Expr, most int) *Error {
	name := sqlparser.String(e)
	if v, ok := e.(*sqlparser.SQLVal); ok && v.Type == sqlparser.StrVal {
		name = string(v.Val)
	}
	return &Error{Code: code, State: "42000", Msg: fmt.Sprintf("Too big %s specified for '%s'. Maximum is %d", what, name, most)}
}

// castCharsetError is 1235 for a CAST or CONVERT to text of a character
// set other than utf8mb4 and utf8mb3 (CHAR CHARACTER SET latin1, CHAR
// ASCII, CHAR UNICODE), which go-mysql-server ignores (HEX(CAST('é' AS
// CHAR CHARACTER SET latin1)) was C3A9, MariaDB's E9), naming CONVERT(x
// USING cs), which converts; nil otherwise.
func castCharsetError(n *sqlparser.ConvertExpr) *Error {
	if n.Type == nil || n.Type.Charset == "" {
		return nil
	}
	switch cs := strings.ToLower(n.Type.Charset); cs {
	case "utf8mb4", "utf8mb3", "utf8":
		return nil
	default:
		switch cs {
		case "ascii":
			cs = "latin1" // CHAR ASCII
		case "unicode":
			cs = "ucs2" // CHAR UNICODE
		}
		return &Error{Code: 1235, State: "42000", Msg: fmt.Sprintf("not supported over the catalog: CAST to CHAR of the character set %s; write CONVERT(x USING %s)", n.Type.Charset, cs)}
	}
}
