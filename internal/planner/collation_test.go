package planner

import (
	"math"
	"testing"
)

// TestCollations checks compare, key and like of each collation by hand
// against MariaDB 10.11's answers (utf8mb4_general_ci; utf8mb4_nopad_bin
// for utf8mb4_0900_bin; utf8mb4_bin): case and accents folded in
// general_ci, trailing spaces ignored under PAD SPACE but a tab before
// them not, and a key equal exactly where compare is 0.
func TestCollations(t *testing.T) {
	for _, c := range []struct {
		coll collation
		a, b string
		want int
	}{
		{collationGeneralCI, "a", "A", 0},
		{collationGeneralCI, "a", "B", -1},
		{collationGeneralCI, "b", "A", 1},
		{collationGeneralCI, "é", "E", 0},
		{collationGeneralCI, "ß", "s", 0},
		{collationGeneralCI, "ss", "ß", 1},
		{collationGeneralCI, "ǅ", "Ǆ", 0},
		{collationGeneralCI, "a ", "a", 0},
		{collationGeneralCI, "a", "a  ", 0},
		{collationGeneralCI, "a\t", "a", -1},
		{collationGeneralCI, "a", "a\t", 1},
		{collationGeneralCI, "a", "ab", -1},
		{collationGeneralCI, "😀", "😁", 0}, // above U+FFFF: all weigh as U+FFFD
		{collationGeneralCI, "😀", "\uFFFD", 0},
		{collationBinNoPad, "a", "A", 1},
		{collationBinNoPad, "B", "a", -1},
		{collationBinNoPad, "a ", "a", 1},
		{collationBinPad, "a ", "a", 0},
		{collationBinPad, "a", "A", 1},
		{collationBinPad, "a\t", "a", -1},
		{collation0900AICI, "a", "A", 0},
		{collation0900AICI, "é", "E", 0},
		{collation0900AICI, "a ", "a", 1},
	} {
		if got := c.coll.compare(c.a, c.b); got != c.want {
			t.Errorf("collation %d: compare(%q, %q) = %d, want %d", c.coll, c.a, c.b, got, c.want)
		}
		if got := c.coll.compare(c.b, c.a); got != -c.want {
			t.Errorf("collation %d: compare(%q, %q) = %d, want %d", c.coll, c.b, c.a, got, -c.want)
		}
		if equal := c.coll.key(c.a) == c.coll.key(c.b); equal != (c.want == 0) {
			t.Errorf("collation %d: keys of %q and %q equal %v, compare %d", c.coll, c.a, c.b, equal, c.want)
		}
	}
	for _, c := range []struct {
		coll      collation
		s, p      string
		escape    rune
		wantMatch bool
	}{
		{collationGeneralCI, "a", "A", '\\', true},
		{collationGeneralCI, "é", "e", '\\', true},
		{collationGeneralCI, "ß", "s", '\\', true},
		{collationGeneralCI, "a ", "a", '\\', false}, // LIKE counts trailing spaces
		{collationGeneralCI, "a", "a ", '\\', false},
		{collationGeneralCI, "abc", "a_c", '\\', true},
		{collationGeneralCI, "ab", "%B", '\\', true},
		{collationGeneralCI, "a%c", `a\%c`, '\\', true},
		{collationGeneralCI, "abc", `a\%c`, '\\', false},
		{collationGeneralCI, "a%c", "a|%c", '|', true},
		{collationGeneralCI, `a\`, `a\`, '\\', true}, // a trailing escape is itself
		{collationGeneralCI, "3000", "3%", '\\', true},
		{collationGeneralCI, "3000", "%0_0", '\\', true},
		{collationGeneralCI, "3000", "%1%", '\\', false},
		{collationGeneralCI, "", "%", '\\', true},
		{collationGeneralCI, "", "_", '\\', false},
		{collationGeneralCI, "aXbXc", "%b%c", '\\', true},
		{collationGeneralCI, "aé", "a_", '\\', true}, // _ is one character, not one byte
		{collationBinNoPad, "a", "A", '\\', false},
		{collationBinNoPad, "😀x", "_x", '\\', true},
		{collationBinNoPad, "a_c", "a_c", -1, true},
	} {
		if got := c.coll.like(c.s, c.p, c.escape); got != c.wantMatch {
			t.Errorf("collation %d: %q LIKE %q ESCAPE %q = %v, want %v", c.coll, c.s, c.p, c.escape, got, c.wantMatch)
		}
	}
}

// TestParseNumber checks text read as a number against MariaDB's answers
// to '<text>' + 0 and the level of its warning 1292: the longest numeric
// prefix, a Note when only spaces follow it, a Warning for anything else
// (no number at all, an exponent without digits, an overflow).
func TestParseNumber(t *testing.T) {
	for _, c := range []struct {
		s     string
		want  float64
		level int
	}{
		{"3000", 3000, wholeNumber},
		{"3000abc", 3000, truncated},
		{"  3000  ", 3000, trailingSpaces},
		{"\t\n12", 12, wholeNumber},
		{"12\t", 12, trailingSpaces},
		{"", 0, truncated},
		{"abc", 0, truncated},
		{"1e", 1, truncated},
		{"1e+", 1, truncated},
		{"1e1x", 10, truncated},
		{"1.e2", 100, wholeNumber},
		{".5", 0.5, wholeNumber},
		{"1.", 1, wholeNumber},
		{".", 0, truncated},
		{".e2", 0, truncated},
		{"+5", 5, wholeNumber},
		{"-2.5e-1", -0.25, wholeNumber},
		{"-", 0, truncated},
		{"inf", 0, truncated},
		{"NaN", 0, truncated},
		{"0x10", 0, truncated},
		{"1_000", 1, truncated},
		{"5 x", 5, truncated},
		{"1e400", math.MaxFloat64, truncated},
		{"-1e400", -math.MaxFloat64, truncated},
		{"1e-400", 0, wholeNumber},
	} {
		got, level := parseNumber(c.s)
		if got != c.want || level != c.level {
			t.Errorf("parseNumber(%q) = %v, level %d; want %v, level %d", c.s, got, level, c.want, c.level)
		}
	}
}
