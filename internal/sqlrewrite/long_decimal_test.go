package sqlrewrite_test

import (
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestLongDecimalConstantsRefused: a decimal constant of more than 30
// digits after the point (or 65 in all) in a condition on a numeric
// column is refused before anything is reserved: dpproxy cannot carry its
// digits exactly, and its double would compare differently from the
// backend's DECIMAL (review: dec <= 0.1000000000000000055511151231257827
// kept 55 rows where MariaDB and PostgreSQL keep 93). 30 decimals are
// carried exactly.
func TestLongDecimalConstantsRefused(t *testing.T) {
	lo, hi := -1.0, 1.0
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "t", Source: "t", Columns: []catalog.Column{
		{Name: "x", Source: "x", Type: catalog.Real, Lower: &lo, Upper: &hi},
	}}}}
	p := sqlrewrite.NewParser(cat)
	long := "0.1000000000000000055511151231257827"
	for _, cond := range []string{
		"x <= " + long, "x > " + long, "x = " + long, "x IN (0.5, " + long + ")", "x BETWEEN 0 AND " + long,
		"NOT (x < -" + long + ")", "x < " + long + " + 0",
	} {
		_, err := p.Parse("SELECT COUNT(*) FROM t WHERE " + cond)
		if err == nil || !strings.Contains(err.Error(), "cannot compare exactly") {
			t.Errorf("%s: %v, want 1235 naming the constant", cond, err)
		}
	}
	for _, cond := range []string{"x <= 0.100000000000000005551115123126", "x > 0.1", "x = 2.5e-40"} {
		if _, err := p.Parse("SELECT COUNT(*) FROM t WHERE " + cond); err != nil {
			t.Errorf("%s: %v, want it parsed", cond, err)
		}
	}
}
