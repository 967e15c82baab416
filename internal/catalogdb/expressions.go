package catalogdb

import (
	"fmt"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/encodings"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// expressionsRule is the id of the analyzer rule asMariaDB.
const expressionsRule analyzer.RuleId = 10001

// asMariaDB replaces go-mysql-server's expressions that read or write
// text unlike MariaDB with ones that do not, in the statement and in its
// subqueries (the analyzer runs its pre-analyzer rules on each):
// CONVERT(x USING cs) with convertUsing, the pattern of a LIKE with
// likePattern; a temporal operand used as a number with temporalNumber
// (numericTemporals); and it gives each castAs its own type (castParser).
func asMariaDB(_ *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return transform.NodeExprs(n, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		if err := foreignTextMix(e); err != nil {
			return nil, transform.SameTree, err
		}
		if n, err := numericTemporals(e); err != nil || n != nil {
			return n, transform.NewTree, err
		}
		switch x := e.(type) {
		case *expression.ConvertUsing:
			return convertUsing{x}, transform.NewTree, nil
		case *castAs:
			if x.planned {
				return e, transform.SameTree, nil
			}
			planned := *x
			planned.planned = true
			return &planned, transform.NewTree, nil
		case *expression.Like:
			if _, done := x.RightChild.(likePattern); done {
				return e, transform.SameTree, nil
			}
			return expression.NewLike(x.LeftChild, likePattern{pattern: x.RightChild, escape: x.Escape}, x.Escape), transform.NewTree, nil
		}
		return e, transform.SameTree, nil
	})
}

// convertUsing is CONVERT(x USING cs) holding its text as every other
// text of the engine is held, in UTF-8, with the characters cs lacks
// replaced by '?', and typed in cs as go-mysql-server's is (so HEX and
// LENGTH encode it in cs: HEX(CONVERT('é' USING latin1)) is E9, as in
// MariaDB). go-mysql-server's held cs's bytes, which the functions that
// encode their argument in its character set encoded a second time: HEX
// and LENGTH of CONVERT('é' USING latin1) panicked (byte e9 is no UTF-8),
// CONCAT and UPPER failed. A binary x is read as bytes of cs
// (CONVERT(UNHEX('E9') USING latin1) is 'é').
type convertUsing struct{ *expression.ConvertUsing }

var _ sql.Expression = convertUsing{}

// Eval implements sql.Expression.
func (c convertUsing) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := c.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	if c.TargetCharSet == sql.CharacterSet_binary {
		return c.ConvertUsing.Eval(ctx, row)
	}
	var b []byte
	switch x := v.(type) {
	case []byte:
		b = x
	case string:
		b = encodings.StringToBytes(x)
	default:
		s, _, err := types.LongText.Convert(ctx, v)
		if err != nil {
			return nil, err
		}
		b = encodings.StringToBytes(s.(string))
	}
	enc := c.TargetCharSet.Encoder()
	if enc == nil {
		return c.ConvertUsing.Eval(ctx, row)
	}
	if !types.IsBinaryType(c.Child.Type()) {
		b = enc.EncodeReplaceUnknown(b)
	}
	if text, ok := enc.Decode(b); ok && utf8.Valid(text) {
		return string(text), nil
	}
	return decodeReplaceUnknown(enc, b), nil
}

// Type implements sql.Expression: text of cs, also of a binary x
// (go-mysql-server's kept x's binary type, so HEX(CONVERT(X'E9' USING
// latin1)) wrote the UTF-8 of é, C3A9, and CONVERT(X'41' USING latin1)
// was sent as bytes; MariaDB's are E9 and the text 'A').
func (c convertUsing) Type() sql.Type {
	t := c.ConvertUsing.Type()
	if c.TargetCharSet != sql.CharacterSet_binary && types.IsBinaryType(t) {
		return types.CreateLongText(c.TargetCharSet.DefaultCollation())
	}
	return t
}

// foreignTextMix refuses (1235) an expression whose text result is not
// in the character set of an operand of another character set than
// utf8mb4 (CONCAT(CONVERT('é' USING latin1), 'é')): go-mysql-server
// computes such text in utf8mb4 and HEX and LENGTH then read its UTF-8
// (C3A9C3A9), where MariaDB computes it in latin1 (E9E9) or refuses the
// mix (1267, CONCAT(CONVERT('é' USING latin1), '日')). Functions that
// keep their operand's character set (UPPER, SUBSTRING, TRIM, CASE)
// and those that read its bytes (HEX, TO_BASE64; MD5 and SHA1 read the
// UTF-8 and are refused) or convert it (CONVERT, CAST) are taken.
func foreignTextMix(e sql.Expression) error {
	switch e.(type) {
	case convertUsing, *expression.ConvertUsing, *castAs, *expression.Convert, *function.Hex, *function.ToBase64,
		*function.Charset, *function.Collation:
		return nil
	}
	result, ok := e.Type().(sql.TypeWithCollation)
	if !ok || !types.IsText(e.Type()) {
		return nil
	}
	for _, c := range e.Children() {
		t, ok := c.Type().(sql.TypeWithCollation)
		if !ok || !types.IsText(c.Type()) {
			continue
		}
		switch cs := t.Collation().CharacterSet(); cs {
		case sql.CharacterSet_utf8mb4, sql.CharacterSet_utf8mb3, sql.CharacterSet_binary, result.Collation().CharacterSet():
		default:
			return &Error{Code: 1235, State: "42000", Msg: fmt.Sprintf("not supported over the catalog: %s of text converted to %s, which the catalog engine computes in utf8mb4, not %s as MariaDB; apply the function to the utf8mb4 text and convert its result: CONVERT(CONCAT(x, y) USING %s)", e, cs, cs, cs)}
		}
	}
	return nil
}

// decodeReplaceUnknown is b, bytes in enc's character set, in UTF-8, with
// '?' for each byte that starts no character of it, as MariaDB shows them
// (CONVERT(UNHEX('FF') USING utf8mb4) is '?').
func decodeReplaceUnknown(enc encodings.Encoder, b []byte) string {
	var out []byte
	for len(b) > 0 {
		n := 1
		for ; n <= 4 && n <= len(b); n++ {
			if r, ok := enc.DecodeRune(b[:n]); ok && utf8.Valid(r) {
				out = append(out, r...)
				break
			}
		}
		if n > 4 || n > len(b) {
			out = append(out, '?')
			n = 1
		}
		b = b[n:]
	}
	return string(out)
}

// WithChildren implements sql.Expression.
func (c convertUsing) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	e, err := c.ConvertUsing.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return convertUsing{e.(*expression.ConvertUsing)}, nil
}
