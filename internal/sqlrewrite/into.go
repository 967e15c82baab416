package sqlrewrite

import "strings"

// supportedInto says what to write instead of SELECT ... INTO.
const supportedInto = "run the SELECT without INTO, and the client receives its rows; " +
	"a released value cannot be stored in a variable (SET from a configured table is refused), " +
	"and SET @x = expression sets one from constants and the session's functions (SET @c = CONNECTION_ID())"

// refuseInto refuses SELECT ... INTO in any of its forms.
func refuseInto() error {
	return refuse("SELECT ... INTO (user variables, OUTFILE or DUMPFILE)", supportedInto)
}

// selectInto reports whether sql, which the parser rejected, is a SELECT
// (or WITH ... SELECT) with the keyword INTO: MySQL's forms the TiDB
// parser does not take (INTO before FROM, INTO @var at the end, SELECT
// expr INTO @var without FROM) are refused as unsupported, as the forms
// it parses are, rather than as a syntax error. It reads words as
// checkNumberLengths does: quoted strings and identifiers and comments
// are skipped, except that the text of an executable comment /*! ... */
// is read as the server runs it.
func selectInto(sql string) bool {
	var words []string
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			i = skipQuoted(sql, i)
		case c == '#' || (c == '-' && i+2 < len(sql) && sql[i+1] == '-' && (sql[i+2] == ' ' || sql[i+2] == '\t' || sql[i+2] == '\n')):
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
		case strings.HasPrefix(sql[i:], "/*!"):
			for i += 3; i < len(sql) && isDigit(sql[i]); i++ {
			}
		case strings.HasPrefix(sql[i:], "/*"):
			end := indexFrom(sql, i+2, "*/")
			if end < 0 {
				return false
			}
			i = end + 2
		case isWordByte(c):
			start := i
			for i < len(sql) && (isWordByte(sql[i]) || isDigit(sql[i])) {
				i++
			}
			words = append(words, strings.ToUpper(sql[start:i]))
		default:
			i++
		}
	}
	if len(words) == 0 || words[0] != "SELECT" && words[0] != "WITH" {
		return false
	}
	for _, w := range words {
		if w == "INTO" {
			return true
		}
	}
	return false
}
