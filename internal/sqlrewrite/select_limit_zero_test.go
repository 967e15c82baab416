package sqlrewrite_test

import (
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestSelectLimitZeroColumnsOnly: under sql_select_limit 0, a private
// statement whose LIMIT 0 form is refused (an outer LIMIT beside a
// derived table's own) keeps its form marked ColumnsOnly, to be answered
// with its columns and no row; it was answered, charged, then cut to no
// row (a review). One whose LIMIT 0 form is answered takes that form;
// without the variable at 0, or with a LIMIT of its own, nothing is
// marked.
func TestSelectLimitZeroColumnsOnly(t *testing.T) {
	p := sqlrewrite.NewParser(testCatalog())
	const topThree = "SELECT educ, c FROM (SELECT educ, COUNT(*) c FROM pums GROUP BY educ ORDER BY c DESC LIMIT 3) t"
	for _, c := range []struct {
		zero        bool
		sql         string
		columnsOnly bool
	}{
		{true, topThree, true},
		{false, topThree, false},
		{true, "SELECT educ, COUNT(*) FROM pums GROUP BY educ", false},
		{true, "SELECT educ, COUNT(*) FROM pums GROUP BY educ ORDER BY educ LIMIT 2", false},
	} {
		p.SetSelectLimitZero(c.zero)
		st, err := p.Parse(c.sql)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		if got := sqlrewrite.ColumnsOnlyApplies(st); got != c.columnsOnly {
			t.Errorf("%s under sql_select_limit 0 %v: ColumnsOnly %v, want %v", c.sql, c.zero, got, c.columnsOnly)
		}
	}
}
