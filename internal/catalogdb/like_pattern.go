package catalogdb

import (
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
)

// likePattern is the pattern of a LIKE as MariaDB reads it: an escape
// character that ends it stands for itself ('a\' matches a\, as
// 'a\\' does), where go-mysql-server's matcher failed on it with 1105
// "invalid string for character set" (SHOW TABLES LIKE 'a\\', MariaDB's
// empty set). It evaluates to pattern with such an escape character
// doubled; escape is the LIKE's ESCAPE (nil: a backslash).
type likePattern struct {
	pattern, escape sql.Expression
}

var (
	_ sql.Expression         = likePattern{}
	_ sql.CollationCoercible = likePattern{}
)

// Eval implements sql.Expression.
func (p likePattern) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := p.pattern.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	s, ok := v.(string)
	if !ok {
		return v, nil // the LIKE converts it, as before
	}
	escape := '\\'
	if p.escape != nil {
		e, err := p.escape.Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		text, ok := e.(string)
		if !ok || utf8.RuneCountInString(text) != 1 {
			return s, nil // the LIKE reads it (and refuses more than one character)
		}
		escape, _ = utf8.DecodeRuneInString(text)
	}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		if r != escape {
			continue
		}
		if i == len(s) {
			return s + string(escape), nil
		}
		_, n = utf8.DecodeRuneInString(s[i:])
		i += n
	}
	return s, nil
}

// Type implements sql.Expression.
func (p likePattern) Type() sql.Type { return p.pattern.Type() }

// IsNullable implements sql.Expression.
func (p likePattern) IsNullable() bool { return p.pattern.IsNullable() }

// Resolved implements sql.Expression.
func (p likePattern) Resolved() bool {
	return p.pattern.Resolved() && (p.escape == nil || p.escape.Resolved())
}

// String implements sql.Expression.
func (p likePattern) String() string { return p.pattern.String() }

// Children implements sql.Expression: the pattern, and the escape
// character if there is one.
func (p likePattern) Children() []sql.Expression {
	if p.escape == nil {
		return []sql.Expression{p.pattern}
	}
	return []sql.Expression{p.pattern, p.escape}
}

// WithChildren implements sql.Expression.
func (p likePattern) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != len(p.Children()) {
		return nil, sql.ErrInvalidChildrenNumber.New(p, len(children), len(p.Children()))
	}
	q := likePattern{pattern: children[0]}
	if len(children) == 2 {
		q.escape = children[1]
	}
	return q, nil
}

// CollationCoercibility implements sql.CollationCoercible: the pattern's.
func (p likePattern) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, p.pattern)
}
