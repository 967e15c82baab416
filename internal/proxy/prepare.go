package proxy

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dpproxy/dpproxy/internal/bind"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// MySQL column types that hold text (include/field_types.h).
var textTypes = map[byte]bool{15: true, 245: true, 247: true, 248: true, 249: true, 250: true, 251: true, 252: true, 253: true, 254: true}

// MySQL column types of dates and times (include/field_types.h), and the
// typed literal that writes a value of each: TIMESTAMP, DATE, TIME,
// DATETIME, NEWDATE.
var temporalLiterals = map[byte]string{7: "TIMESTAMP", 10: "DATE", 11: "TIME", 12: "TIMESTAMP", 14: "DATE"}

// MySQL column types of floating-point numbers, and their bits: FLOAT,
// DOUBLE.
var floatBits = map[byte]int{4: 32, 5: 64}

// Limits on SQL-level prepared statements, per session, as for the
// protocol's (internal/wire/stmt.go).
const (
	maxPreparedStatements = 1024     // like a per-connection max_prepared_stmt_count
	maxPreparedTextBytes  = 16 << 20 // the texts of the session's prepared statements
)

// prepare keeps the text of a SQL-level PREPARE.
func (s *Session) prepare(ctx context.Context, st *sqlrewrite.Prepare) (*Result, error) {
	text := st.SQL
	if st.Var != "" {
		lit, typ, null, err := s.userVariable(ctx, st.Var)
		if err != nil {
			return nil, err
		}
		if null || !textTypes[typ] {
			return nil, dperr.New(dperr.InvalidValue, "PREPARE FROM @%s: the variable must hold the statement's text", st.Var)
		}
		text = lit
	}
	old, replaced := s.prepared[st.Name]
	if !replaced && len(s.prepared) >= maxPreparedStatements {
		return nil, dperr.New(dperr.TooManyPrepared, "Can't create more than max_prepared_stmt_count statements (current value: %d)", maxPreparedStatements)
	}
	if s.preparedBytes-len(old)+len(text) > maxPreparedTextBytes {
		return nil, dperr.New(dperr.TooLarge, "The prepared statements of this connection would hold more than %d bytes of text; deallocate some first", maxPreparedTextBytes)
	}
	if s.prepared == nil {
		s.prepared = map[string]string{}
	}
	s.prepared[st.Name] = text
	s.preparedBytes += len(text) - len(old)
	s.setWarnings(nil)
	return &Result{}, nil
}

// executePrepared binds the USING variables to a prepared text and runs it as
// any statement: it is parsed, routed and planned like the client's own SQL.
func (s *Session) executePrepared(ctx context.Context, st *sqlrewrite.ExecutePrepared) (*Result, error) {
	text, ok := s.prepared[st.Name]
	if !ok {
		return nil, dperr.New(dperr.UnknownStatement, "Unknown prepared statement handler (%s) given to EXECUTE", st.Name)
	}
	args := make([]sqlrewrite.Argument, len(st.Using))
	for i, name := range st.Using {
		arg, err := s.usingArgument(ctx, name)
		if err != nil {
			return nil, err
		}
		args[i] = arg
	}
	bound, err := sqlrewrite.BindParameters(text, args)
	if err != nil {
		return nil, err
	}
	labels, err := s.markerLabelsOf(ctx, text)
	if err != nil {
		return nil, err
	}
	stmt, err := s.parse(ctx, bound)
	if err != nil {
		return nil, err
	}
	switch stmt.(type) {
	case *sqlrewrite.Prepare, *sqlrewrite.ExecutePrepared, *sqlrewrite.Deallocate:
		return nil, dperr.New(dperr.Unsupported, "This command is not supported in the prepared statement protocol yet")
	}
	res, err := s.execute(ctx, stmt)
	if err == nil {
		relabel(res, labels)
	}
	return res, err
}

// ExecutePrepared runs bound, the text of the protocol prepared statement
// prepared with its arguments in place of its ? markers, as Execute does,
// and names its columns as relabel does.
func (s *Session) ExecutePrepared(ctx context.Context, prepared, bound string) (*Result, error) {
	labels, err := s.markerLabelsOf(ctx, prepared)
	if err != nil {
		s.setWarnings(errorWarning(err))
		return nil, err
	}
	res, err := s.Execute(ctx, bound)
	if err == nil {
		relabel(res, labels)
	}
	return res, err
}

// relabel names each column of res, the answer of a prepared statement,
// by labels, the names its select list gives after its ? markers as the
// prepared text writes them ("1 + ?", "?": markerLabelsOf), as MySQL and
// MariaDB name it, where the executed text named it after the values
// bound ("1 + 5", "5"). A result whose columns are not one per label
// keeps its names, as does one without labels.
func relabel(res *Result, labels []string) {
	if res == nil || labels == nil {
		return
	}
	if len(res.Typed) == len(labels) {
		res.Typed = slices.Clone(res.Typed)
		for i, l := range labels {
			if l != "" {
				res.Typed[i].Name = l
			}
		}
	} else if res.Typed == nil && len(res.Columns) == len(labels) {
		res.Columns = slices.Clone(res.Columns)
		for i, l := range labels {
			if l != "" {
				res.Columns[i] = l
			}
		}
	}
}

// Bounds of the session's cache of marker labels: texts, and their bytes.
const (
	maxMarkerLabelTexts = 64
	maxMarkerLabelBytes = 1 << 20
)

// markerLabelsOf is s.parser.MarkerLabels(prepared), which depends on the
// text alone (not on settings, configuration or data), kept for the
// session's next executions of the same prepared statement: it was a
// second parse of every execution. The cache holds at most
// maxMarkerLabelTexts texts of maxMarkerLabelBytes together, and starts
// afresh when it would hold more. A text longer than largeStatementBytes
// has none (its result keeps its names); another not in the cache is
// parsed behind the parse gate, whose error a wait that ends returns.
// Callers must not modify the result.
func (s *Session) markerLabelsOf(ctx context.Context, prepared string) ([]string, error) {
	if len(prepared) > largeStatementBytes {
		return nil, nil
	}
	if labels, ok := s.markerLabels[prepared]; ok {
		return labels, nil
	}
	release, err := s.engine.parses.enter(ctx, s.user, int64(len(prepared)))
	if err != nil {
		return nil, err
	}
	labels := s.parser.MarkerLabels(prepared)
	release()
	if len(s.markerLabels) >= maxMarkerLabelTexts || s.markerLabelBytes+len(prepared) > maxMarkerLabelBytes {
		s.markerLabels, s.markerLabelBytes = nil, 0
	}
	if s.markerLabels == nil {
		s.markerLabels = make(map[string][]string)
	}
	s.markerLabels[prepared] = labels
	s.markerLabelBytes += len(prepared)
	return labels, nil
}

// deallocate forgets a prepared text.
func (s *Session) deallocate(st *sqlrewrite.Deallocate) (*Result, error) {
	text, ok := s.prepared[st.Name]
	if !ok {
		return nil, dperr.New(dperr.UnknownStatement, "Unknown prepared statement handler (%s) given to DEALLOCATE PREPARE", st.Name)
	}
	delete(s.prepared, st.Name)
	s.preparedBytes -= len(text)
	s.setWarnings(nil)
	return &Result{}, nil
}

// usingArgument is the argument that binds the user variable name to a
// marker of EXECUTE ... USING. Its literal is of the variable's type, as
// the binary protocol's argument of that type is bound (internal/wire
// sqlLiteral): a string quoted; a DATETIME, TIMESTAMP, DATE or TIME as
// its typed literal (TIMESTAMP '2024-01-02 03:04:05'; bare, it did not
// parse); a DOUBLE or FLOAT with an exponent (2.5e+00), since 2.5 is a
// DECIMAL literal and ROUND(2.5) is 3 where MariaDB rounds the DOUBLE 2.5
// to 2; integers, decimals and NULL as the catalog engine writes them.
// Its Limit is usingLimit's, and a BIGINT -9223372036854775808 is its
// Minimum.
func (s *Session) usingArgument(ctx context.Context, name string) (sqlrewrite.Argument, error) {
	lit, typ, null, err := s.userVariable(ctx, name)
	if err != nil || null {
		return sqlrewrite.Argument{Literal: "NULL", Limit: "0"}, err
	}
	arg := sqlrewrite.Argument{Literal: lit, Limit: usingLimit(lit, typ), Minimum: typ == mysqlLongLong && lit == strconv.FormatInt(math.MinInt64, 10)}
	quoted := "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(lit) + "'"
	if textTypes[typ] {
		arg.Literal = quoted
	} else if t, ok := temporalLiterals[typ]; ok {
		arg.Literal = t + " " + quoted
	} else if bits, ok := floatBits[typ]; ok {
		f, err := strconv.ParseFloat(lit, bits)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return arg, dperr.New(dperr.InvalidValue, "EXECUTE USING @%s: %s is not a number MySQL can hold", name, lit)
		}
		arg.Literal = strconv.FormatFloat(f, 'e', -1, bits)
	}
	return arg, nil
}

// MySQL column types of BIGINT and of decimals (include/field_types.h).
const (
	mysqlLongLong   = 8
	mysqlDecimal    = 0
	mysqlNewDecimal = 246
)

// usingLimit is the unsigned integer a LIMIT or OFFSET marker reads lit,
// the text of a user variable of MySQL column type typ, as in MariaDB
// 10.11's EXECUTE ... USING, or "" where MariaDB refuses it there with
// 1210: a DOUBLE or FLOAT truncated (2.9 is 2, -0.5 is 0; -1 and from
// 2^63 up refused); a DECIMAL rounded half away from zero (2.5 is 3,
// -0.5 refused; past a BIGINT, the greatest BIGINT); a string, and a
// date or time (which MariaDB's variables hold as text), by its leading
// integer (bind.LeadingInteger: '2.9' is 2, 'abc' 0, '2024-01-02' 2024;
// a negative one, and from 2^63 up, refused); an integer as it is, a
// negative one refused. A NULL is 0 (usingArgument).
func usingLimit(lit string, typ byte) string {
	var n bind.Integer
	switch _, temporal := temporalLiterals[typ]; {
	case textTypes[typ] || temporal:
		if n = bind.LeadingInteger(lit); n.Over || n.Mag > math.MaxInt64 {
			return ""
		}
	case floatBits[typ] != 0:
		f, err := strconv.ParseFloat(lit, 64)
		if err != nil || f <= -1 || f >= 0x1p63 || math.IsNaN(f) {
			return ""
		}
		return strconv.FormatUint(uint64(math.Max(f, 0)), 10)
	case typ == mysqlDecimal || typ == mysqlNewDecimal:
		if n = bind.RoundDecimal(lit); n.Over || n.Mag > math.MaxInt64 {
			n = bind.Integer{Neg: n.Neg, Mag: math.MaxInt64}
		}
	default:
		if _, err := strconv.ParseUint(lit, 10, 64); err != nil {
			return ""
		}
		return lit
	}
	if n.Neg {
		return ""
	}
	return strconv.FormatUint(n.Mag, 10)
}

// userVariable reads a user variable from the catalog engine: its value's
// text and MySQL column type, or null for an unset variable or a NULL.
func (s *Session) userVariable(ctx context.Context, name string) (v string, typ byte, null bool, err error) {
	r, err := s.catalog.Query(ctx, "SELECT @`"+strings.ReplaceAll(name, "`", "``")+"`")
	if err != nil {
		return "", 0, false, catalogError(err)
	}
	if len(r.Rows) != 1 || len(r.Columns) != 1 {
		return "", 0, false, dperr.New(dperr.Internal, "internal error: @%s gave no value", name)
	}
	v, ok := r.Rows[0][0].(string)
	if !ok {
		return "", 0, true, nil
	}
	return v, r.Columns[0].Type, false, nil
}
