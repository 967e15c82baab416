package planner

import (
	"cmp"
	"strings"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql/encodings"
)

// collation is a MySQL text collation post-processing compares, orders,
// de-duplicates and matches (LIKE) text in: a weight per character,
// compared character by character, and whether trailing spaces count.
//
// The weights are go-mysql-server's tables (package encodings), the ones
// the catalog engine compares the same collations in, so a constant-only
// statement and post-processing of released values agree. Its
// utf8mb4_general_ci table equals MariaDB 10.11's WEIGHT_STRING for every
// code point (TestGeneralCIAsMariaDB): case folded, accents of the Latin,
// Greek and Cyrillic letters folded to their base letter ('é' = 'E', 'ß' =
// 's', 'ǅ' = 'Ǆ'), every character above U+FFFF weighing as U+FFFD.
// utf8mb4_0900_ai_ci is the catalog engine's one weight per character
// (case and accents folded), without MySQL's expansions ('ß' = 'ss') and
// ignorable characters.
type collation uint8

// The collations post-processing implements.
const (
	// collationBinNoPad is utf8mb4_0900_bin, the proxy's default
	// collation_connection, and binary: byte order, which for UTF-8 is
	// code point order; trailing spaces count (NO PAD). It is also the
	// collation dpproxy declares for text columns on PostgreSQL and
	// SQLite (catalog.Config.TextCollation).
	collationBinNoPad collation = iota
	// collationBinPad is utf8mb4_bin and utf8mb3_bin: code point order,
	// trailing spaces ignored (PAD SPACE: 'a ' = 'a', 'a\t' < 'a').
	collationBinPad
	// collationGeneralCI is utf8mb4_general_ci and utf8mb3_general_ci,
	// PAD SPACE; it is also the collation dpproxy declares for text
	// columns on MySQL/MariaDB.
	collationGeneralCI
	// collation0900AICI is utf8mb4_0900_ai_ci (SET NAMES utf8mb4), NO PAD.
	collation0900AICI
)

// collationNames maps the collation_connection values post-processing
// implements to their collation; "" is the proxy's default.
var collationNames = map[string]collation{
	"": collationBinNoPad, "utf8mb4_0900_bin": collationBinNoPad, "binary": collationBinNoPad,
	"utf8mb4_bin": collationBinPad, "utf8mb3_bin": collationBinPad, "utf8_bin": collationBinPad,
	"utf8mb4_general_ci": collationGeneralCI, "utf8mb3_general_ci": collationGeneralCI, "utf8_general_ci": collationGeneralCI,
	"utf8mb4_0900_ai_ci": collation0900AICI,
}

// collationNamed is the collation of a collation_connection value, and
// whether post-processing implements it.
func collationNamed(name string) (collation, bool) {
	c, ok := collationNames[strings.ToLower(name)]
	return c, ok
}

// weight is the collation's weight of one character.
func (c collation) weight(r rune) int32 {
	switch c {
	case collationGeneralCI:
		return encodings.Utf8mb4_general_ci_RuneWeight(r)
	case collation0900AICI:
		return encodings.Utf8mb4_0900_ai_ci_RuneWeight(r)
	}
	return r
}

// padSpace reports whether trailing spaces are ignored (PAD SPACE).
func (c collation) padSpace() bool { return c == collationBinPad || c == collationGeneralCI }

// compare orders two texts in the collation: character by character by
// weight; then, under PAD SPACE, the rest of the longer text against
// spaces (a character weighing less than a space makes it the smaller),
// else the shorter text first. Bytes that are not UTF-8 weigh as U+FFFD
// (under the binary NO PAD collation the texts are compared byte by byte).
func (c collation) compare(a, b string) int {
	if c == collationBinNoPad {
		return strings.Compare(a, b)
	}
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if x := cmp.Compare(c.weight(ra), c.weight(rb)); x != 0 {
			return x
		}
		a, b = a[na:], b[nb:]
	}
	if !c.padSpace() {
		return cmp.Compare(len(a), len(b))
	}
	sign, rest := 1, a
	if b != "" {
		sign, rest = -1, b
	}
	space := c.weight(' ')
	for _, r := range rest {
		if x := cmp.Compare(c.weight(r), space); x != 0 {
			return sign * x
		}
	}
	return 0
}

// key is a text's sort key: two texts have the same key exactly when
// compare finds them equal (the weights, trailing spaces dropped under
// PAD SPACE), for DISTINCT and grouping.
func (c collation) key(s string) string {
	if c == collationBinNoPad {
		return s
	}
	var b strings.Builder
	n := 0 // length of the key up to its last character that is not a space
	space := c.weight(' ')
	for _, r := range s {
		w := c.weight(r)
		b.Write([]byte{byte(w >> 24), byte(w >> 16), byte(w >> 8), byte(w)})
		if w != space || !c.padSpace() {
			n = b.Len()
		}
	}
	return b.String()[:n]
}

// like is MySQL's s LIKE pattern in the collation: % matches any run of
// characters, _ exactly one, escape (\ by default) makes the character
// after it literal (a trailing one is itself); other characters match a
// character of equal weight. Trailing spaces count under PAD SPACE too,
// as in MySQL.
func (c collation) like(s, pattern string, escape rune) bool {
	type token struct {
		r    rune
		kind byte // 'c' a character, '%' any run, '_' any character
	}
	var pat []token
	for p := []rune(pattern); len(p) > 0; p = p[1:] {
		switch {
		case p[0] == escape && len(p) > 1:
			p = p[1:]
			pat = append(pat, token{p[0], 'c'})
		case p[0] == '%':
			pat = append(pat, token{kind: '%'})
		case p[0] == '_':
			pat = append(pat, token{kind: '_'})
		default:
			pat = append(pat, token{p[0], 'c'})
		}
	}
	text := []rune(s)
	matches := func(t token, r rune) bool {
		return t.kind == '_' || c.weight(t.r) == c.weight(r)
	}
	// Greedy matching with backtracking to the last %: linear for each
	// position of the last % reached.
	i, j := 0, 0
	star, mark := -1, 0
	for i < len(text) {
		switch {
		case j < len(pat) && pat[j].kind == '%':
			star, mark = j, i
			j++
		case j < len(pat) && matches(pat[j], text[i]):
			i, j = i+1, j+1
		case star >= 0:
			mark++
			i, j = mark, star+1
		default:
			return false
		}
	}
	for j < len(pat) && pat[j].kind == '%' {
		j++
	}
	return j == len(pat)
}
