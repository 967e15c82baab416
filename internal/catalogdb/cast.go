package catalogdb

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

// castParser is go-mysql-server's parser, except that the operand of
// each CAST or CONVERT to CHAR(n), DATETIME[(p)] or TIME[(p)] in what it
// parses is a castAs that casts it as MariaDB does (castAs says how).
// go-mysql-server's planbuilder drops a cast whose operand already has
// its result type (factory.go's buildConvert: CAST('abcdef' AS CHAR(3))
// was 'abcdef', its operand being LONGTEXT, as its CHAR(3) is); a castAs
// announces that type while it is planned, so go-mysql-server's cast is
// dropped and the castAs left to do the work (asMariaDB then gives it its
// own type).
type castParser struct{ sql.Parser }

// ParseSimple implements sql.Parser.
func (p castParser) ParseSimple(query string) (sqlparser.Statement, error) {
	stmt, err := p.Parser.ParseSimple(query)
	return castsAsMariaDB(stmt), err
}

// Parse implements sql.Parser.
func (p castParser) Parse(ctx *sql.Context, query string, multi bool) (sqlparser.Statement, string, string, error) {
	stmt, parsed, rest, err := p.Parser.Parse(ctx, query, multi)
	return castsAsMariaDB(stmt), parsed, rest, err
}

// ParseWithOptions implements sql.Parser.
func (p castParser) ParseWithOptions(ctx context.Context, query string, delimiter rune, multi bool, options sqlparser.ParserOptions) (sqlparser.Statement, string, string, error) {
	stmt, parsed, rest, err := p.Parser.ParseWithOptions(ctx, query, delimiter, multi, options)
	return castsAsMariaDB(stmt), parsed, rest, err
}

// ParseOneWithOptions implements sql.Parser.
func (p castParser) ParseOneWithOptions(ctx context.Context, query string, options sqlparser.ParserOptions) (sqlparser.Statement, int, error) {
	stmt, next, err := p.Parser.ParseOneWithOptions(ctx, query, options)
	return castsAsMariaDB(stmt), next, err
}

// castsAsMariaDB makes the operand of each cast of stmt (nil or not) that
// castAs handles an injected castTarget, and returns stmt.
func castsAsMariaDB(stmt sqlparser.Statement) sqlparser.Statement {
	if stmt == nil {
		return nil
	}
	_ = inspect(reflect.ValueOf(stmt), func(node sqlparser.SQLNode) error {
		if n, ok := node.(*sqlparser.ConvertExpr); ok && n.Type != nil {
			if t, ok := castTargetOf(n); ok {
				t.operand = n.Expr
				n.Expr = sqlparser.InjectedExpr{Expression: t, Children: sqlparser.Exprs{n.Expr}}
			}
		}
		return nil
	})
	return stmt
}

// castTargetOf is the target of the cast n when castAs handles it: CHAR(n)
// (NCHAR(n)) with a length, DATETIME and TIME with a precision of at most
// maxPrecision or none (backstop refuses a larger one).
func castTargetOf(n *sqlparser.ConvertExpr) (*castTarget, bool) {
	t := &castTarget{kind: strings.ToLower(n.Type.Type)}
	if _, done := n.Expr.(sqlparser.InjectedExpr); done {
		return nil, false
	}
	length := -1
	if n.Type.Length != nil {
		l, err := strconv.Atoi(string(n.Type.Length.Val))
		if err != nil {
			return nil, false
		}
		length = l
	}
	switch t.kind {
	case expression.ConvertToChar, expression.ConvertToNChar:
		t.kind = expression.ConvertToChar
		if length < 0 || length > maxBuiltString {
			return nil, false
		}
	case expression.ConvertToDatetime, expression.ConvertToTime:
		if length > maxPrecision {
			return nil, false
		}
		length = max(length, 0)
	default:
		return nil, false
	}
	t.length = length
	return t, true
}

// castTarget is the injected operand of a cast castAs handles: its
// kind (expression.ConvertToChar, ConvertToDatetime or ConvertToTime)
// and length (characters of a CHAR, digits of a second of the others).
type castTarget struct {
	kind    string
	length  int
	operand sqlparser.Expr // the operand as parsed, for String
}

// String is the operand's text, so that the cast formats as it was written.
func (t *castTarget) String() string { return sqlparser.String(t.operand) }

// WithResolvedChildren implements sqlparser.Injectable: the castAs of the
// operand, planned.
func (t *castTarget) WithResolvedChildren(children []any) (any, error) {
	if len(children) != 1 {
		return nil, fmt.Errorf("a cast has one operand, not %d", len(children))
	}
	operand, ok := children[0].(sql.Expression)
	if !ok {
		return nil, fmt.Errorf("a cast's operand %T is no expression", children[0])
	}
	return &castAs{UnaryExpression: expression.UnaryExpression{Child: operand}, kind: t.kind, length: t.length}, nil
}

// castAs is CAST(x AS CHAR(n)), CAST(x AS DATETIME(p)) or CAST(x AS
// TIME(p)) as MariaDB 10.11 casts:
//   - CHAR(n): x's text cut to its first n characters, with warning 1292
//     "Truncated incorrect CHAR(n) value: '…'" when that cuts any (the
//     whole text, as catalog.ErrConvText writes it), typed VARCHAR(n) (TEXT past
//     maxVarcharChars); go-mysql-server cut n bytes and never warned;
//   - DATETIME(p), TIME(p): x read to the microsecond, a text's digits
//     past the sixth dropped with note 1292 "Truncated incorrect datetime
//     value: '…'" (time), then cut, not rounded, to p digits:
//     CAST('10:00:00.9999' AS TIME(2)) is 10:00:00.99, where
//     go-mysql-server rounded (DATETIME) or kept all six digits (TIME,
//     whose precision it dropped: CAST('10:00' AS TIME(6)) was 10:00:00).
//
// It announces go-mysql-server's type of the cast until asMariaDB marks
// it planned (castParser says why), its own after.
type castAs struct {
	expression.UnaryExpression
	kind    string
	length  int
	planned bool
}

var _ sql.Expression = (*castAs)(nil)
var _ sql.CollationCoercible = (*castAs)(nil)

// maxVarcharChars is the largest CHAR(n) whose cast is a VARCHAR, as in
// MariaDB: its utf8mb4 bytes, four a character, fit in 65535.
const maxVarcharChars = 65535 / 4

// Type implements sql.Expression.
func (c *castAs) Type() sql.Type {
	switch {
	case c.kind == expression.ConvertToDatetime:
		return types.MustCreateDatetimeType(sqltypes.Datetime, c.length)
	case c.kind == expression.ConvertToTime:
		return timeOf(c.length, c.planned)
	case !c.planned:
		return types.LongText
	case c.length <= maxVarcharChars:
		return types.MustCreateString(sqltypes.VarChar, int64(c.length), sql.Collation_Default)
	}
	return types.MustCreateString(sqltypes.Text, int64(c.length)*4, sql.Collation_Default)
}

// CollationCoercibility implements sql.CollationCoercible, as
// go-mysql-server's cast does.
func (c *castAs) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	if c.kind == expression.ConvertToChar {
		return ctx.GetCollation(), 2
	}
	return sql.Collation_binary, 5
}

// IsNullable implements sql.Expression: every cast may be NULL, as MariaDB
// announces it (a text too long for max_allowed_packet is NULL).
func (c *castAs) IsNullable() bool { return true }

// String implements sql.Expression.
func (c *castAs) String() string {
	if c.kind == expression.ConvertToChar || c.length > 0 {
		return fmt.Sprintf("convert(%v, %s(%d))", c.Child, c.kind, c.length)
	}
	return fmt.Sprintf("convert(%v, %s)", c.Child, c.kind)
}

// WithChildren implements sql.Expression.
func (c *castAs) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(c, len(children), 1)
	}
	out := *c
	out.Child = children[0]
	return &out, nil
}

// Eval implements sql.Expression.
func (c *castAs) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := c.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	if c.kind == expression.ConvertToChar {
		return c.char(ctx, v)
	}
	if s, isText := c.text(ctx, v); isText {
		v, err = c.temporal(ctx, s)
	} else {
		v, err = expression.NewConvert(expression.NewLiteral(v, c.Child.Type()), c.kind).Eval(ctx, nil)
	}
	if err != nil || v == nil {
		return nil, err
	}
	unit := int64(1)
	for range maxPrecision - c.length {
		unit *= 10
	}
	switch x := v.(type) {
	case time.Time:
		return x.Truncate(time.Duration(unit) * time.Microsecond), nil
	case types.Timespan:
		us := x.AsMicroseconds()
		return types.Time.MicrosecondsToTimespan(us - us%unit), nil
	}
	return v, nil
}

// text is v as text when it is text or a number (MariaDB reads
// 100000.999 as the time 10:00:00.999, go-mysql-server as 10:00:00 and
// 20200101 as no datetime): a text's digits of a second past the sixth
// dropped, with a note (microseconds), a number's silently, as MariaDB.
func (c *castAs) text(ctx *sql.Context, v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return c.microseconds(ctx, x, true), true
	case []byte:
		return c.microseconds(ctx, string(x), true), true
	}
	if !types.IsNumber(c.Child.Type()) {
		return "", false
	}
	t, _, err := types.LongText.Convert(ctx, v)
	s, ok := t.(string)
	if err != nil || !ok {
		return "", false
	}
	return c.microseconds(ctx, s, false), true
}

// temporal is the text s read as a DATETIME or TIME to the microsecond,
// or NULL with MariaDB's warning 1292 "Incorrect datetime value: '…'"
// (time) when it is none (go-mysql-server's had no quotes, and its TIME
// none).
func (c *castAs) temporal(ctx *sql.Context, s string) (any, error) {
	var t sql.Type = types.DatetimeMaxPrecision
	if c.kind == expression.ConvertToTime {
		t = types.Time
	}
	v, _, err := t.Convert(ctx, s)
	if err != nil {
		ctx.Warn(1292, "Incorrect %s value: '%s'", c.kind, catalog.ErrConvText(s))
		return nil, nil
	}
	return v, nil
}

// char is the text of v cut to c.length characters (warning 1292 when
// that cuts any).
func (c *castAs) char(ctx *sql.Context, v any) (any, error) {
	t, _, err := types.LongText.Convert(ctx, v)
	s, ok := t.(string)
	if err != nil || !ok {
		return nil, nil // as go-mysql-server's cast
	}
	n := c.length
	for i := range s {
		if n == 0 {
			ctx.Warn(1292, "Truncated incorrect CHAR(%d) value: '%s'", c.length, catalog.ErrConvText(s))
			return s[:i], nil
		}
		n--
	}
	return s, nil
}

// microseconds is the text s with the digits of its fraction of a second
// past the sixth dropped, with MariaDB's note 1292 when there are any and
// note is set (go-mysql-server rounded them: '10:00:00.9999999' was
// 10:00:01). The fraction is the digits after the last '.' that ends s
// (spaces aside) and follows a digit.
func (c *castAs) microseconds(ctx *sql.Context, s string, note bool) string {
	trimmed := strings.TrimRight(s, " ")
	dot := strings.LastIndexByte(trimmed, '.')
	if dot < 1 || len(trimmed)-dot-1 <= maxPrecision || trimmed[dot-1] < '0' || trimmed[dot-1] > '9' {
		return s
	}
	for _, r := range trimmed[dot+1:] {
		if r < '0' || r > '9' {
			return s
		}
	}
	if note {
		ctx.Session.Warn(&sql.Warning{Level: "Note", Code: 1292, Message: fmt.Sprintf("Truncated incorrect %s value: '%s'", c.kind, catalog.ErrConvText(s))})
	}
	return trimmed[:dot+1+maxPrecision]
}
