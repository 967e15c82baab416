package catalogdb

import (
	"errors"
	"strings"
	"unicode"
)

// The catalog engine's parser (go-mysql-server's) and the parser whose
// tree the proxy checks (TiDB's, in package sqlrewrite) must read a
// statement's text as the same tokens, or text that every check read as
// a string literal could run as code. They differ on comments:
//
//   - "--" starts a comment for TiDB only at the end of the text or when
//     white space follows (unicode.IsSpace of the next byte, as its lexer
//     reads it); for go-mysql-server, always (so
//     "SELECT 1 --'\n, SLEEP(1) -- '" is 1 minus minus a string to TiDB,
//     and SELECT 1, SLEEP(1) to the engine: an independent review), and
//     TiDB prints 1 - -x back as 1--x;
//   - TiDB reads the content of /*T![feature] ... */ and of optimizer
//     hints /*+ ... */ as its own tokens, and a quote there can open a
//     string that runs past the */; go-mysql-server reads executable
//     comments /*! ... */ with a tokenizer of their own.
//
// lexicallySafe therefore rewrites the text before the engine sees it,
// reading it as TiDB does: every comment is replaced by a space (its
// content was never code to the checks), "--" followed by anything else
// becomes "- -" (two minus signs to both), and an executable comment or
// hint, and a variable whose name is quoted (@`a`, which the engine ends
// at the first byte that is not a letter, digit or quote), are refused. Strings ('...' and "...", with backslash escapes and
// doubled quotes) and quoted identifiers (`...`) are copied unchanged.
func lexicallySafe(text string) (string, error) {
	var b strings.Builder
	b.Grow(len(text))
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			end := quotedEnd(text, i)
			b.WriteString(text[i:end])
			i = end
		case c == '@' && i+1 < len(text) && text[i+1] == '`' && plainQuotedName(text[i+2:]) > 0:
			// @`name` of letters, digits and _ only: both read it to the
			// closing backquote.
			end := i + 2 + plainQuotedName(text[i+2:])
			b.WriteString(text[i:end])
			i = end
		case c == '@' && i+1 < len(text) && (text[i+1] == '`' || text[i+1] == '\'' || text[i+1] == '"' ||
			text[i+1] == '@' && i+2 < len(text) && (text[i+2] == '`' || text[i+2] == '\'' || text[i+2] == '"')):
			// Any other quoted variable name: the engine ends @`...` at
			// the first byte that is no letter, digit or quote, TiDB at
			// the closing backquote (an independent review ran SLEEP and
			// SET GLOBAL from inside one).
			return "", errQuotedVariable
		case c == '#':
			i = lineEnd(text, i)
			b.WriteByte(' ')
		case c == '-' && i+1 < len(text) && text[i+1] == '-':
			if i+2 < len(text) && !unicode.IsSpace(rune(text[i+2])) {
				// One minus sign and a blank: the next is read again, so
				// that "---'" cannot leave a "--" behind (an independent
				// review).
				b.WriteString("- ")
				i++
				continue
			}
			i = lineEnd(text, i)
			b.WriteByte(' ')
		case c == '/' && i+1 < len(text) && text[i+1] == '*':
			if i+2 < len(text) && (text[i+2] == '!' || text[i+2] == '+' || strings.HasPrefix(text[i+2:], "T!")) {
				return "", errExecutableComment
			}
			end := strings.Index(text[i+2:], "*/")
			if end < 0 {
				return "", errUnterminatedComment
			}
			i += 2 + end + 2
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), nil
}

var (
	errQuotedVariable      = errors.New("variable names in quotes (@`name`) are not answered over the catalog; write @name")
	errExecutableComment   = errors.New("executable comments /*! ... */ and optimizer hints /*+ ... */ are not answered over the catalog")
	errUnterminatedComment = errors.New("a comment /* is not closed")
)

// quotedEnd returns the offset just past the quoted string or identifier
// that starts at i (its quote character doubled stands for itself; in a
// string, a backslash escapes the next byte), or len(text) if it is not
// closed.
func quotedEnd(text string, i int) int {
	q := text[i]
	for j := i + 1; j < len(text); j++ {
		switch {
		case text[j] == '\\' && q != '`':
			j++
		case text[j] == q:
			if j+1 < len(text) && text[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(text)
}

// lineEnd returns the offset of the end of the line that holds i (its
// newline is kept).
func lineEnd(text string, i int) int {
	if n := strings.IndexByte(text[i:], '\n'); n >= 0 {
		return i + n
	}
	return len(text)
}

// plainQuotedName returns the length of name` at the start of text, name
// one or more letters, digits and _, and 0 if text starts otherwise.
func plainQuotedName(text string) int {
	for j := 0; j < len(text); j++ {
		c := text[j]
		switch {
		case c == '`':
			if j == 0 {
				return 0
			}
			return j + 1
		case c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		default:
			return 0
		}
	}
	return 0
}
