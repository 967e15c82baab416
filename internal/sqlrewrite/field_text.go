package sqlrewrite

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// fieldText is the column name MySQL and MariaDB give an unaliased select
// expression: its text as written, from its first token to the end of its
// last. The parser's span of the field may hold the comments and spaces
// around it (COUNT(*) /* c */, COUNT(*) -- c, the */ closing an executable
// comment); MariaDB drops them, keeps the comments between the
// expression's tokens (COUNT(*) /* c */ + 1) and drops the delimiters of
// an executable comment, whose text it runs (COUNT(*) + /*!50000 1 */ is
// "COUNT(*) +  1"). Quoted strings and names are kept whole, the comment
// markers in them included.
func fieldText(f *ast.SelectField) string {
	return writtenText(f.Text())
}

// writtenText is fieldText of the text of a field.
func writtenText(text string) string {
	var b strings.Builder
	first, last := -1, 0
	token := func(s string) {
		if first < 0 {
			first = b.Len()
		}
		b.WriteString(s)
		last = b.Len()
	}
	executable := false
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			j := skipQuoted(text, i)
			token(text[i:j])
			i = j
		case strings.HasPrefix(text[i:], "/*!") || strings.HasPrefix(text[i:], "/*M!"):
			i = strings.IndexByte(text[i:], '!') + i + 1
			for i < len(text) && isDigit(text[i]) {
				i++
			}
			executable = true
		case strings.HasPrefix(text[i:], "*/") && (executable || !strings.HasPrefix(text[i+2:], "*")):
			// The end of an executable comment, which may have begun
			// before the field's span (SELECT /*!50000 COUNT(*) */): outside
			// one, * then / is no valid SQL, except * before a comment
			// (COUNT(*/* c */)).
			i += 2
			executable = false
		case strings.HasPrefix(text[i:], "/*"):
			j := indexFrom(text, i+2, "*/")
			if j < 0 {
				j = len(text)
			} else {
				j += 2
			}
			b.WriteString(text[i:j])
			i = j
		case c == '#' || (c == '-' && i+2 < len(text) && text[i+1] == '-' && (text[i+2] == ' ' || text[i+2] == '\t' || text[i+2] == '\n')):
			j := strings.IndexByte(text[i:], '\n')
			if j < 0 {
				j = len(text)
			} else {
				j += i
			}
			b.WriteString(text[i:j])
			i = j
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			b.WriteByte(c)
			i++
		default:
			token(text[i : i+1])
			i++
		}
	}
	if first < 0 {
		return strings.TrimSpace(text)
	}
	return b.String()[first:last]
}
