package sqlrewrite

import (
	"errors"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/dperr"
)

// TestLongNumericLiterals: the TiDB parser's test driver panics on decimal
// literals of 82+ digits (or "0." and 80); Parse must answer 1064 instead,
// in a query, a SET or anywhere else. Before the fix these panicked.
func TestLongNumericLiterals(t *testing.T) {
	p := NewParser(nil)
	nines := strings.Repeat("9", 82)
	for _, sql := range []string{
		"SELECT " + nines,
		"SELECT 0." + strings.Repeat("1", 80),
		"SELECT ." + strings.Repeat("1", 90),
		"SET @a = " + nines,
		"SET @dp_epsilon = 0." + strings.Repeat("1", 80),
		"SELECT COUNT(*) FROM pums WHERE age > " + nines,
		"SELECT " + strings.Repeat("9", 60) + "." + strings.Repeat("1", 30),
		"SELECT -" + nines + "e3",
	} {
		_, err := p.Parse(sql)
		if dperr.KindOf(err) != dperr.Parse {
			t.Errorf("%.40s…: got %v, want a parse error", sql, err)
		}
	}
	// Long digit runs that are not numbers are left to the parser.
	for _, sql := range []string{
		"SELECT '" + nines + "'",
		"SELECT \"" + nines + "\"",
		"SELECT 1 -- " + nines,
		"SELECT 1 # " + nines,
		"SELECT /* " + nines + " */ 1",
		"SELECT 0x" + strings.Repeat("1", 100),
		"SELECT 'it''s " + nines + "'",
		"SELECT '\\' " + nines + "'",
		"SELECT " + strings.Repeat("9", 65),
	} {
		if err := checkNumberLengths(sql); err != nil {
			t.Errorf("%.40s…: refused (%v), want it left to the parser", sql, err)
		}
	}
}

// TestParsePanicRecovered: a panic inside Parse becomes a parse error with
// the panic as its cause, and the parser keeps working.
func TestParsePanicRecovered(t *testing.T) {
	p := NewParser(nil)
	p.sql = nil // makes the TiDB call panic
	_, err := p.Parse("SELECT 1")
	var pp *ParserPanic
	if dperr.KindOf(err) != dperr.Parse || !errors.As(err, &pp) {
		t.Fatalf("got %v, want a parse error caused by a ParserPanic", err)
	}
	if _, err := p.Parse("SELECT 1"); err != nil {
		t.Errorf("after a panic: %v", err)
	}
}
