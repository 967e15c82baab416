package catalog_test

import (
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

// TestRepresentable checks the character sets' repertoires at their
// edges: MySQL's latin1 is Windows-1252 with the C1 controls of its five
// unassigned bytes; utf8mb3 and ucs2 hold the BMP; an unknown character
// set holds ASCII only; PostgreSQL's LATIN1 is ISO 8859-1.
func TestRepresentable(t *testing.T) {
	for _, c := range []struct {
		charset, s string
		want       bool
	}{
		{"latin1", "é€ÿ", true}, {"latin1", "\u0081", true}, {"latin1", "\u0080", false}, {"latin1", "ā", false},
		{"utf8mb3", "中€", true}, {"utf8mb3", "😀", false}, {"ucs2", "😀", false}, {"utf8mb4", "😀", true},
		{"binary", "😀", true}, {"ascii", "a", true}, {"ascii", "é", false}, {"LATIN1", "É", true},
		{"some_new_charset", "abc", true}, {"some_new_charset", "é", false},
		{catalog.PostgresEncodingPrefix + "LATIN1", "é\u0080", true}, {catalog.PostgresEncodingPrefix + "LATIN1", "€", false},
		{catalog.PostgresEncodingPrefix + "UTF8", "😀", true}, {catalog.PostgresEncodingPrefix + "SQL_ASCII", "😀", true},
		{catalog.PostgresEncodingPrefix + "WIN1252", "é", false},
	} {
		if got := catalog.Representable(catalog.Charset{Name: c.charset}, c.s); got != c.want {
			t.Errorf("Representable(%s, %q) = %v, want %v", c.charset, c.s, got, c.want)
		}
	}
}
