package catalogdb

import (
	"fmt"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// temporalNumber is a temporal operand used as a number, read as
// MariaDB reads it there: a DATETIME(p) or TIMESTAMP(p) as the DECIMAL
// YYYYMMDDhhmmss.f of p digits (FROM_UNIXTIME(1.5) + 0 is
// 19700101000001.5), a DATE as YYYYMMDD, a TIME(p) as the signed
// hhmmss.f of p digits (CAST('-10:00' AS TIME) + 0 is -100000).
// go-mysql-server read a DATETIME as its Unix seconds
// (CAST(... AS SIGNED)), dropped its fraction (+ and -), or read each
// as 0 (unary minus, a TIME in arithmetic).
type temporalNumber struct {
	*expression.UnaryExpression
	kind      temporalKind
	precision int
}

var _ sql.Expression = temporalNumber{}

// temporalKind is the kind of a temporal type read as a number.
type temporalKind int

const (
	notTemporal  temporalKind = iota
	datetimeKind              // DATETIME and TIMESTAMP
	dateKind
	timeKind
)

// temporalOf is the kind and the digits of a second of t.
func temporalOf(t sql.Type) (temporalKind, int) {
	switch x := t.(type) {
	case timeType:
		return timeKind, x.fsp
	case sql.DatetimeType:
		switch {
		case types.IsDateType(t):
			return dateKind, 0
		case types.IsDatetimeType(t), types.IsTimestampType(t):
			return datetimeKind, x.Precision()
		}
	}
	if types.IsTimespan(t) {
		return timeKind, 0
	}
	return notTemporal, 0
}

// asNumber is e read as a number (a temporalNumber) when e is temporal,
// else e and false.
func asNumber(e sql.Expression) (sql.Expression, bool) {
	kind, p := temporalOf(e.Type())
	if kind == notTemporal {
		return e, false
	}
	return temporalNumber{&expression.UnaryExpression{Child: e}, kind, p}, true
}

// numericTemporals is e with its temporal operands read as numbers
// (temporalNumber) when e is a unary minus, an arithmetic (+, -, *, /,
// DIV, %) of a temporal with a number, or a cast to a number
// (SIGNED, UNSIGNED, DECIMAL, DOUBLE); nil when it is none of these or
// has no temporal operand. A cast to an integer cuts the fraction
// (CAST(FROM_UNIXTIME(1.5) AS SIGNED) is 19700101000001). d + INTERVAL n DAY stays date arithmetic.
func numericTemporals(e sql.Expression) (sql.Expression, error) {
	switch x := e.(type) {
	case *expression.UnaryMinus:
		if child, ok := asNumber(x.Child); ok {
			return expression.NewUnaryMinus(child), nil
		}
		return nil, nil
	case *expression.Convert:
		if !types.IsNumber(x.Type()) {
			return nil, nil
		}
		child, ok := asNumber(x.Child)
		if !ok {
			return nil, nil
		}
		if types.IsInteger(x.Type()) { // cut, not rounded, as MariaDB
			n := child.(temporalNumber)
			n.precision = 0
			child = n
		}
		return x.WithChildren(child)
	case expression.Comparer:
		return nil, temporalComparison(x)
	case *expression.Arithmetic, *expression.Div, *expression.IntDiv, *expression.Mod:
	default:
		return nil, nil
	}
	children := e.Children()
	l, r := children[0], children[1]
	_, lInterval := l.(*expression.Interval)
	_, rInterval := r.(*expression.Interval)
	if lInterval || rInterval {
		return nil, nil
	}
	var lok, rok bool
	switch {
	case types.IsNumber(r.Type()):
		l, lok = asNumber(l)
	case types.IsNumber(l.Type()):
		r, rok = asNumber(r)
	}
	if !lok && !rok {
		return nil, nil
	}
	return e.WithChildren(l, r)
}

// temporalComparison refuses (1235) a comparison of a temporal with a
// number: MariaDB compares them as temporals (CAST('10:00' AS TIME) > 5
// is 1), go-mysql-server's answer was 0.
func temporalComparison(c expression.Comparer) error {
	l, r := c.Left(), c.Right()
	lk, _ := temporalOf(l.Type())
	rk, _ := temporalOf(r.Type())
	if (lk != notTemporal && types.IsNumber(r.Type())) || (rk != notTemporal && types.IsNumber(l.Type())) {
		return &Error{Code: 1235, State: "42000", Msg: fmt.Sprintf("not supported over the catalog: %s compares a date or time with a number, which the catalog engine does not compare as MariaDB; compare it with a quoted value (x > '00:00:05') or the number with x + 0", c)}
	}
	return nil
}

// Eval implements sql.Expression.
func (n temporalNumber) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := n.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	switch v.(type) {
	case time.Time, types.Timespan:
	default:
		if v, _, err = n.Child.Type().Convert(ctx, v); err != nil || v == nil {
			return nil, err
		}
	}
	var digits string
	switch x := v.(type) {
	case time.Time:
		if n.kind == dateKind {
			return decimal.RequireFromString(x.Format("20060102")), nil
		}
		digits = fmt.Sprintf("%s.%06d", x.Format("20060102150405"), x.Nanosecond()/1000)
	case types.Timespan:
		us, sign := x.AsMicroseconds(), ""
		if us < 0 {
			us, sign = -us, "-"
		}
		s := us / 1e6
		digits = fmt.Sprintf("%s%d%02d%02d.%06d", sign, s/3600, s/60%60, s%60, us%1e6)
	default:
		return nil, fmt.Errorf("catalogdb: a %T as a number", v)
	}
	cut := len(digits) - 6 + n.precision
	if n.precision == 0 {
		cut-- // the point
	}
	return decimal.RequireFromString(digits[:cut]), nil
}

// Type implements sql.Expression: DECIMAL(14 + p, p) of a DATETIME,
// DECIMAL(8, 0) of a DATE, DECIMAL(9 + p, p) of a TIME.
func (n temporalNumber) Type() sql.Type {
	switch n.kind {
	case dateKind:
		return types.MustCreateDecimalType(8, 0)
	case timeKind:
		return types.MustCreateDecimalType(uint8(9+n.precision), uint8(n.precision))
	}
	return types.MustCreateDecimalType(uint8(14+n.precision), uint8(n.precision))
}

// String implements sql.Expression.
func (n temporalNumber) String() string { return n.Child.String() }

// WithChildren implements sql.Expression.
func (n temporalNumber) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(n, len(children), 1)
	}
	return temporalNumber{&expression.UnaryExpression{Child: children[0]}, n.kind, n.precision}, nil
}
