package sqlrewrite

import (
	"fmt"

	"github.com/dpproxy/dpproxy/internal/dperr"
)

// maxNumberDigits bounds the digits of one numeric literal. MySQL's DECIMAL
// holds 65 digits; the TiDB parser's test driver panics on a decimal
// literal of 82 digits or more (or "0." and 80), so dpproxy refuses long
// literals before the parser sees them.
const maxNumberDigits = 65

// checkNumberLengths returns a Parse error if sql has a numeric literal with
// more than maxNumberDigits digits. It scans as MySQL's lexer does for what
// matters here: it skips quoted strings and identifiers ('…', "…", `…`, with
// backslash escapes and doubled quotes), comments (-- , #, /* */), and digit
// runs that continue a word (identifiers, 0x…, 0b…); any other run of
// digits and dots is a number. Unterminated quotes and comments end the
// scan: the parser refuses them.
func checkNumberLengths(sql string) error {
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			i = skipQuoted(sql, i)
		case c == '#' || (c == '-' && i+2 < len(sql) && sql[i+1] == '-' && (sql[i+2] == ' ' || sql[i+2] == '\t' || sql[i+2] == '\n')):
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			end := indexFrom(sql, i+2, "*/")
			if end < 0 {
				return nil
			}
			i = end + 2
		case isWordByte(c):
			for i < len(sql) && (isWordByte(sql[i]) || isDigit(sql[i])) {
				i++
			}
		case isDigit(c) || (c == '.' && i+1 < len(sql) && isDigit(sql[i+1])):
			digits := 0
			for i < len(sql) && (isDigit(sql[i]) || sql[i] == '.') {
				if isDigit(sql[i]) {
					digits++
				}
				i++
			}
			if digits > maxNumberDigits {
				return dperr.New(dperr.Parse, "You have an error in your SQL syntax: a numeric literal has %d digits, more than %d", digits, maxNumberDigits)
			}
		default:
			i++
		}
	}
	return nil
}

// skipQuoted returns the index after the quoted token starting at sql[i],
// or len(sql) if it is unterminated.
func skipQuoted(sql string, i int) int {
	q := sql[i]
	for i++; i < len(sql); i++ {
		switch {
		case sql[i] == '\\' && q != '`':
			i++
		case sql[i] == q && i+1 < len(sql) && sql[i+1] == q:
			i++
		case sql[i] == q:
			return i + 1
		}
	}
	return len(sql)
}

func indexFrom(s string, from int, sub string) int {
	for i := from; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isWordByte reports whether c starts or continues a word that a digit run
// may continue: letters, '_', '$', '@' and any byte of a multi-byte character.
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$' || c == '@' || c >= 0x80
}

// ParserPanic is the cause of the Parse error Parse returns when the TiDB
// parser (or the conversion of its tree) panicked: the caller should log it
// on one line, as it is a bug to fix.
type ParserPanic struct{ Value any }

func (p *ParserPanic) Error() string { return fmt.Sprintf("parser panic: %v", p.Value) }

// parsePanic turns a panic inside the parser into a Parse error. No input
// may take a connection down.
func parsePanic(p any) error {
	return dperr.Wrap(dperr.Parse, &ParserPanic{Value: p}, "You have an error in your SQL syntax: the statement could not be parsed")
}
