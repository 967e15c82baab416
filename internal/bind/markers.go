// Package bind holds what the two binders of prepared-statement arguments
// share: the protocol's (internal/wire, COM_STMT_EXECUTE) and the SQL
// level's (internal/sqlrewrite and internal/proxy, EXECUTE ... USING).
// Both replace the ? markers of a statement's text with literals, and
// both read the text around a marker by MySQL's lexical rules, without a
// parse: where the markers are, whether one is a LIMIT or OFFSET argument,
// whether one is the operand of a unary minus; and both read a LIMIT
// argument's value as MariaDB does (limit.go). It imports nothing of ours.
package bind

import (
	"slices"
	"strings"
)

// Markers returns the byte offsets of the ? parameter markers in
// query: every ? outside string literals ('...' and "..." with backslash
// escapes and doubled quotes), quoted identifiers (`...`) and comments
// (#..., -- ... and /* ... */, including /*! ... */, whose markers MySQL
// would count: a ? left there reaches the session unreplaced and is refused).
// The lexical rules are MySQL's default ones (no ANSI_QUOTES, backslash
// escapes on), which is how the session parses the text. The slice is a
// fresh copy without spare capacity (a prepared statement keeps it), and query must be shorter
// than 4 GiB (packets are far smaller).
func Markers(query string) []uint32 {
	var marks []uint32
	for i := 0; i < len(query); i++ {
		switch query[i] {
		case '?':
			marks = append(marks, uint32(i))
		case '\'', '"', '`':
			i = quotedEnd(query, i)
		case '#':
			i = lineEnd(query, i)
		case '-':
			if startsDashComment(query, i) {
				i = lineEnd(query, i)
			}
		case '/':
			if i+1 < len(query) && query[i+1] == '*' {
				i = blockCommentEnd(query, i)
			}
		}
	}
	return slices.Clone(marks) // drops append's spare capacity
}

// quotedEnd returns the index of the quote closing the literal or identifier
// that opens at start, or the last index if it is unterminated. A doubled
// quote stands for itself; a backslash escapes the next byte in strings but
// not in `identifiers`.
func quotedEnd(s string, start int) int {
	q := s[start]
	for i := start + 1; i < len(s); i++ {
		switch {
		case s[i] == '\\' && q != '`':
			i++
		case s[i] == q && i+1 < len(s) && s[i+1] == q:
			i++
		case s[i] == q:
			return i
		}
	}
	return len(s) - 1
}

// startsDashComment reports whether a "-- " comment starts at i: MySQL needs
// the two dashes to be followed by whitespace, a control character or the end.
func startsDashComment(s string, i int) bool {
	if i+1 >= len(s) || s[i+1] != '-' {
		return false
	}
	return i+2 == len(s) || s[i+2] <= ' '
}

// lineEnd returns the index of the newline ending the comment at i, or the
// last index.
func lineEnd(s string, i int) int {
	for ; i < len(s); i++ {
		if s[i] == '\n' {
			return i
		}
	}
	return len(s) - 1
}

// blockCommentEnd returns the index of the '/' closing the comment opened at
// i, or the last index if it is unterminated.
func blockCommentEnd(s string, i int) int {
	for j := i + 2; j+1 < len(s); j++ {
		if s[j] == '*' && s[j+1] == '/' {
			return j + 1
		}
	}
	return len(s) - 1
}

// LimitMarker reports whether the ? marker at offset at is a LIMIT or OFFSET
// argument of query: the word before it (across white space) is LIMIT or
// OFFSET, or it follows the comma of LIMIT n, ? (n a number or a marker).
// It reads words, not a parse: a comment between the keyword and the
// marker hides it.
func LimitMarker(query string, at int) bool {
	word, before := previousToken(query, at)
	switch strings.ToUpper(word) {
	case "LIMIT", "OFFSET":
		return true
	case ",":
		first, start := previousToken(query, before)
		if first == "" || (first != "?" && strings.Trim(first, "0123456789") != "") {
			return false
		}
		limit, _ := previousToken(query, start)
		return strings.EqualFold(limit, "LIMIT")
	}
	return false
}

// Negations reports, for each ? marker of query in Markers' order,
// whether it is the operand of a unary minus: the significant token
// before it (across white space, comments and opening parentheses that
// as many closing ones after it match: -(?), -((?))) is -, and the one
// before that minus is no operand but an operator, an opening
// parenthesis, a comma, a keyword an expression follows
// (expressionKeywords) or the start of the query. It reads the text in
// one pass by the lexical rules Markers reads it by, without a parse.
func Negations(query string) []bool {
	var (
		out []bool
		// p1, p2 are the last two significant tokens; run counts the
		// opening parentheses p1 ends (0 when p1 is no "("), b1 and b2
		// the two tokens before that run.
		p1, p2, b1, b2 string
		run            int
		// pending is the index in out of a marker inside parentheses
		// after a unary minus, waiting for need closing ones.
		pending, need = -1, 0
	)
	push := func(tok string) {
		if pending >= 0 {
			if tok == ")" {
				if need--; need == 0 {
					out[pending], pending = true, -1
				}
			} else {
				pending = -1
			}
		}
		if tok == "?" {
			minus, before := p1, p2
			if run > 0 {
				minus, before = b1, b2
			}
			unary := minus == "-" && operatorContext(before)
			out = append(out, unary && run == 0)
			if unary && run > 0 {
				pending, need = len(out)-1, run
			}
		}
		if tok == "(" {
			if run == 0 {
				b1, b2 = p1, p2
			}
			run++
		} else {
			run = 0
		}
		p1, p2 = tok, p1
	}
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case strings.IndexByte(" \t\r\n\f\v", c) >= 0:
		case c == '\'' || c == '"' || c == '`':
			i = quotedEnd(query, i)
			push("'") // an operand
		case c == '#':
			i = lineEnd(query, i)
		case c == '-' && startsDashComment(query, i):
			i = lineEnd(query, i)
		case c == '/' && i+1 < len(query) && query[i+1] == '*':
			i = blockCommentEnd(query, i)
		case isWordByte(c) || c >= 0x80 || c == '$':
			j := i + 1
			for j < len(query) && (isWordByte(query[j]) || query[j] >= 0x80 || query[j] == '$') {
				j++
			}
			push(query[i:j])
			i = j - 1
		default:
			push(query[i : i+1])
		}
	}
	return out
}

// operatorContext reports whether a minus after token tok (a token of
// Negations, "" at the start) is unary: tok is no operand.
func operatorContext(tok string) bool {
	if tok == "" || len(tok) == 1 && strings.Contains("(,=<>!+-*/%^&|~", tok) {
		return true
	}
	return expressionKeywords[strings.ToUpper(tok)]
}

// expressionKeywords are the reserved words an expression may follow
// directly (SELECT -?, SELECT ALL -?, WHERE -? < a, THEN -?, BINARY -?),
// so that a minus after them is unary.
var expressionKeywords = map[string]bool{
	"SELECT": true, "ALL": true, "DISTINCT": true, "DISTINCTROW": true, "HIGH_PRIORITY": true,
	"STRAIGHT_JOIN": true, "SQL_SMALL_RESULT": true, "SQL_BIG_RESULT": true, "SQL_BUFFER_RESULT": true,
	"SQL_CACHE": true, "SQL_NO_CACHE": true, "SQL_CALC_FOUND_ROWS": true,
	"WHERE": true, "HAVING": true, "ON": true, "BY": true,
	"AND": true, "OR": true, "XOR": true, "NOT": true, "BETWEEN": true, "LIKE": true, "ESCAPE": true,
	"REGEXP": true, "RLIKE": true, "DIV": true, "MOD": true, "CASE": true, "WHEN": true, "THEN": true,
	"ELSE": true, "INTERVAL": true, "BINARY": true,
}

// previousToken returns the token that ends, across white space, before
// offset end of query (a word of letters, digits and _, or one other
// byte) and the offset where it starts; "" at the start of query.
func previousToken(query string, end int) (token string, start int) {
	i := end
	for i > 0 && strings.IndexByte(" \t\r\n\f\v", query[i-1]) >= 0 {
		i--
	}
	if i == 0 {
		return "", 0
	}
	start = i - 1
	for start > 0 && isWordByte(query[start-1]) && isWordByte(query[i-1]) {
		start--
	}
	return query[start:i], start
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// Replace returns query with the markers at offsets (Markers) replaced
// by literals, one each, in order. A space goes between a literal and
// the text next to it where leaving them adjacent would lex differently:
// "1 -?" with -5 must not become a "--" comment, "??" with two strings
// must not merge into one literal with a doubled quote, "X?" must not
// become a hex literal.
func Replace(query string, offsets []uint32, literals []string) string {
	var b strings.Builder
	b.Grow(len(query) + 16*len(literals))
	appendPiece := func(piece string) {
		if piece == "" {
			return
		}
		if b.Len() > 0 && joined(b.String()[b.Len()-1], piece[0]) {
			b.WriteByte(' ')
		}
		b.WriteString(piece)
	}
	last := 0
	for i, offset := range offsets {
		appendPiece(query[last:offset])
		appendPiece(literals[i])
		last = int(offset) + 1
	}
	appendPiece(query[last:])
	return b.String()
}

// joined reports whether bytes a and b, written next to each other,
// could be read as parts of one token.
func joined(a, b byte) bool {
	return (a == '-' && b == '-') || (tokenByte(a) && tokenByte(b))
}

// tokenByte reports whether c can continue a word, number, quoted literal,
// variable name or qualified name.
func tokenByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c >= 0x80:
		return true
	}
	return strings.IndexByte("_$@.'\"`", c) >= 0
}
