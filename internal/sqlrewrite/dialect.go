package sqlrewrite

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// dialectSpec is what differs between the backends' SQL.
type dialectSpec struct {
	name string
	// quote delimits identifiers.
	quote string
	// double and integer are the CAST target types for a float64 and an int64.
	double, integer string
	// numbered placeholders ($1) rather than ?.
	numbered bool
	// typed: a column holds only values of its declared type (not SQLite,
	// where any column can hold text or a blob).
	typed bool
}

var dialects = map[Dialect]dialectSpec{
	// SQLite reads a double-quoted name that names no column as a string
	// literal, so a generated query that named a missing column would run
	// on wrong values; a name in grave accents is always an identifier,
	// and a missing one an error.
	SQLite:     {name: "sqlite", quote: "`", double: "REAL", integer: "INTEGER"},
	PostgreSQL: {name: "postgres", quote: `"`, double: "DOUBLE PRECISION", integer: "BIGINT", numbered: true, typed: true},
	// CAST(x AS DOUBLE) needs MySQL ≥ 8.0.17 or MariaDB ≥ 10.4.5; checked on MariaDB 10.11.
	MySQL: {name: "mysql", quote: "`", double: "DOUBLE", integer: "SIGNED", typed: true},
}

// String is the dialect's name: sqlite, postgres or mysql.
func (d Dialect) String() string {
	if s, ok := dialects[d]; ok {
		return s.name
	}
	return fmt.Sprintf("dialect(%d)", int(d))
}

// ident quotes one identifier. Names come from the catalog, which accepts
// only plain identifiers; anything that could close the quotes is refused.
func (s dialectSpec) ident(name string) (string, error) {
	if name == "" || strings.ContainsAny(name, "\"`'\\\x00.") {
		return "", fmt.Errorf("sqlrewrite: bad identifier %q", name)
	}
	return s.quote + name + s.quote, nil
}

// table quotes a table name, schema-qualified or not, part by part.
func (s dialectSpec) table(name string) (string, error) {
	parts := strings.Split(name, ".")
	if len(parts) > 2 {
		return "", fmt.Errorf("sqlrewrite: bad table name %q", name)
	}
	for i, p := range parts {
		q, err := s.ident(p)
		if err != nil {
			return "", err
		}
		parts[i] = q
	}
	return strings.Join(parts, "."), nil
}

// MaxBindArguments is the most bind arguments one query may have in
// dialect d: PostgreSQL's extended protocol counts them in 16 bits
// (65,535), MySQL and MariaDB refuse a prepared statement with more than
// 65,535 placeholders (error 1390), and SQLite (modernc.org/sqlite, as
// built: SQLITE_MAX_VARIABLE_NUMBER) allows 32,766. Render does not check
// it: a statement whose fetches could bind more is refused before
// anything is reserved (the executor's check).
func MaxBindArguments(d Dialect) int {
	if d == SQLite {
		return 32766
	}
	return 65535
}

// RankArguments is how many bind arguments a fetch of ranks (a window,
// grid sums of a rank slice) adds to those of its rows: its LIMIT and
// its OFFSET (Render).
const RankArguments = 2

// placeholder is the n-th bind parameter (1-based).
func (s dialectSpec) placeholder(n int) string {
	if s.numbered {
		return "$" + strconv.Itoa(n)
	}
	return "?"
}

// mysqlStringLiteral writes a string argument as a MySQL string literal
// for RenderVitess: in single quotes, NUL, newline, carriage return,
// Ctrl-Z, both quotes and the backslash escaped with a backslash (what
// mysql_real_escape_string escapes), every other byte as it is. Read with
// backslash escapes (backend.MySQLSQLMode has no NO_BACKSLASH_ESCAPES,
// and vtgate's parser always reads them) it is the string's exact bytes.
func mysqlStringLiteral(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("sqlrewrite: a %T argument cannot be written as a literal", v)
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('\'')
	for i := range len(s) {
		switch c := s[i]; c {
		case 0:
			b.WriteString(`\0`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case 0x1a:
			b.WriteString(`\Z`)
		case '\'', '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String(), nil
}

// numberLiteral formats a float64 constant so that every dialect reads back exactly
// the same float64 (shortest round-trip digits); a negative number is
// parenthesised so that it can follow any operator.
func numberLiteral(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if strings.HasPrefix(s, "-") {
		return "(" + s + ")"
	}
	return s
}

// ExactKey reports whether x is a key the fetches read and select exactly
// (Condition.Exact on a number): an integer of magnitude below 2⁵³, where
// every integer is a float64.
func ExactKey(x float64) bool { return x == math.Trunc(x) && math.Abs(x) < 1<<53 }

// integerLiteral writes an integer below 2⁵³ in magnitude without an
// exponent, negative numbers parenthesised.
func integerLiteral(x float64) string {
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if strings.HasPrefix(s, "-") {
		return "(" + s + ")"
	}
	return s
}

// realLiteral is numberLiteral, always written as a floating-point literal (100.0, not
// 100), so that SQLite computes with REAL rather than INTEGER arithmetic.
func realLiteral(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	if strings.HasPrefix(s, "-") {
		return "(" + s + ")"
	}
	return s
}

// doubleLiteral writes f as a MySQL approximate-value (DOUBLE) literal that
// reads back as exactly f: its shortest round-trip digits with an exponent
// (500000e0, 0.1e0, 1e+100; a literal without one, 0.0, is a DECIMAL),
// 0 for either zero, negative numbers parenthesised.
func doubleLiteral(f float64) string {
	if f == 0 {
		return "0e0"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.Contains(s, "e") {
		s += "e0"
	}
	if strings.HasPrefix(s, "-") {
		return "(" + s + ")"
	}
	return s
}
