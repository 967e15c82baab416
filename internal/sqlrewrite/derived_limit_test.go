package sqlrewrite_test

import (
	"testing"

	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestOuterLimitOverInnerLimitRefused: a projection of an aggregate
// subquery is one query whose LIMIT is the subquery's, so an outer LIMIT
// or DISTINCT, which it would apply before that LIMIT (or in its place),
// is refused like an outer WHERE or ORDER BY (the outer LIMIT 1 OFFSET 5
// replaced the inner LIMIT 3 and answered a row the subquery does not
// have: an independent review); without an inner LIMIT both are answered.
func TestOuterLimitOverInnerLimitRefused(t *testing.T) {
	p := sqlrewrite.NewParser(testCatalog())
	for _, sql := range []string{
		"SELECT educ FROM (SELECT educ, COUNT(*) c FROM pums GROUP BY educ ORDER BY educ LIMIT 3) t LIMIT 1 OFFSET 5",
		"SELECT DISTINCT y FROM (SELECT educ, COUNT(*) c, educ > 5 y FROM pums GROUP BY educ ORDER BY educ LIMIT 2) t",
	} {
		if _, err := p.Parse(sql); dperr.KindOf(err) != dperr.Unsupported {
			t.Errorf("%s: %v, want 1235", sql, err)
		}
	}
	for _, sql := range []string{
		"SELECT educ FROM (SELECT educ, COUNT(*) c FROM pums GROUP BY educ ORDER BY educ) t LIMIT 1 OFFSET 5",
		"SELECT DISTINCT y FROM (SELECT educ, COUNT(*) c, educ > 5 y FROM pums GROUP BY educ) t",
		"SELECT educ, c FROM (SELECT educ, COUNT(*) c FROM pums GROUP BY educ ORDER BY c DESC LIMIT 3) t",
	} {
		if _, err := p.Parse(sql); err != nil {
			t.Errorf("%s: %v", sql, err)
		}
	}
}
