package catalogdb

import (
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// maxDateFormat is the longest format, in bytes, DATE_FORMAT,
// TIME_FORMAT and FROM_UNIXTIME(n, format) take over the catalog.
// go-mysql-server formats with lestrrat-go/strftime, which joins each
// piece of verbatim text to the one before by copying both, so the time
// is quadratic in the format's length, and it never reads the
// statement's context, whose deadline the engine checks only between
// rows: an independent review's DATE_FORMAT('2020-01-01',
// REPEAT('%Y', 200000)) held one of the engine's four statement slots
// for 107 s, and four such statements at once kept every user's SHOW
// TABLES waiting past its deadline (3024). A MySQL format is a few dozen
// bytes; 1024 is far more than any needs and formats in well under a
// millisecond. STR_TO_DATE's parser and GET_FORMAT are linear and keep
// go-mysql-server's.
const maxDateFormat = 1024

// errLongFormat is the refusal of a format longer than maxDateFormat.
func errLongFormat(name string, n int) *Error {
	return &Error{Code: 1235, State: "42000", Msg: fmt.Sprintf(
		"not supported over the catalog: %s with a format of %d bytes; a format may have at most %d bytes", name, n, maxDateFormat)}
}

// formatFunctions replace go-mysql-server's DATE_FORMAT and TIME_FORMAT
// with ones that refuse a format longer than maxDateFormat before
// formatting (clockFromUnixtime checks FROM_UNIXTIME's).
var formatFunctions = map[string]sql.Function{
	"date_format": sql.Function2{Name: "date_format", Fn: func(date, format sql.Expression) sql.Expression {
		return &boundedFormat{BinaryExpressionStub: expression.BinaryExpressionStub{LeftChild: date, RightChild: format}, name: "DATE_FORMAT", inner: function.NewDateFormat(date, format)}
	}},
	"time_format": sql.Function2{Name: "time_format", Fn: func(t, format sql.Expression) sql.Expression {
		return &boundedFormat{BinaryExpressionStub: expression.BinaryExpressionStub{LeftChild: t, RightChild: format}, name: "TIME_FORMAT", inner: function.NewTimeFormat(t, format)}
	}},
}

// boundedFormat is DATE_FORMAT or TIME_FORMAT (inner, go-mysql-server's)
// with its format bounded by maxDateFormat.
type boundedFormat struct {
	expression.BinaryExpressionStub
	name  string
	inner sql.Expression
}

var _ sql.FunctionExpression = (*boundedFormat)(nil)

// FunctionName implements sql.FunctionExpression.
func (f boundedFormat) FunctionName() string { return f.inner.(sql.FunctionExpression).FunctionName() }

// Description implements sql.FunctionExpression.
func (f boundedFormat) Description() string { return f.inner.(sql.FunctionExpression).Description() }

// Type implements sql.Expression.
func (f boundedFormat) Type() sql.Type { return f.inner.Type() }

// IsNullable implements sql.Expression.
func (f boundedFormat) IsNullable() bool { return f.inner.IsNullable() }

// CollationCoercibility implements sql.CollationCoercible.
func (f boundedFormat) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return f.inner.(sql.CollationCoercible).CollationCoercibility(ctx)
}

// String implements sql.Expression.
func (f boundedFormat) String() string { return f.inner.String() }

// Eval implements sql.Expression: each argument is evaluated once, the
// format checked, then go-mysql-server's function formats the values.
func (f boundedFormat) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	date, err := f.LeftChild.Eval(ctx, row)
	if err != nil || date == nil {
		return nil, err
	}
	format, err := f.RightChild.Eval(ctx, row)
	if err != nil || format == nil {
		return nil, err
	}
	if err := checkFormat(ctx, f.name, format); err != nil {
		return nil, err
	}
	inner, err := f.inner.WithChildren(expression.NewLiteral(date, f.LeftChild.Type()), expression.NewLiteral(format, f.RightChild.Type()))
	if err != nil {
		return nil, err
	}
	return inner.Eval(ctx, row)
}

// checkFormat refuses a format of name longer than maxDateFormat once
// read as text.
func checkFormat(ctx *sql.Context, name string, format any) error {
	text, _, err := types.LongText.Convert(ctx, format)
	if err != nil {
		return nil // the function reports it
	}
	if s, ok := text.(string); ok && len(s) > maxDateFormat {
		return errLongFormat(name, len(s))
	}
	return nil
}

// WithChildren implements sql.Expression.
func (f boundedFormat) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 2 {
		return nil, sql.ErrInvalidChildrenNumber.New(f, len(children), 2)
	}
	fn := formatFunctions[f.inner.(sql.FunctionExpression).FunctionName()].(sql.Function2)
	return fn.Fn(children[0], children[1]), nil
}
