package bench

import (
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestRecommendIsThePlannersRule checks that Recommend, which the
// benchmark's "rule" candidate runs and the reports score, names the
// mechanism the planner's "auto" uses for each statistic, on an integer
// column with unit bins, an integer column without (bounds 2^16 or more
// apart) and a real column, at ε on both sides of the smooth median's
// threshold.
func TestRecommendIsThePlannersRule(t *testing.T) {
	sqlOf := map[string]string{"median": "MEDIAN(x)", "p10": "PERCENTILE_CONT(x, 0.1)", "p90": "PERCENTILE_CONT(x, 0.9)", "mean": "AVG(x)", "variance": "VAR_POP(x)"}
	for _, c := range []struct {
		typ    catalog.ColumnType
		lo, hi float64
	}{{catalog.Integer, 0, 100}, {catalog.Integer, 0, 500000}, {catalog.Real, 0, 1000}} {
		lo, hi := c.lo, c.hi
		cat := &catalog.Config{Tables: []catalog.Table{{Name: "t", Source: "t", Columns: []catalog.Column{
			{Name: "x", Source: "x", Type: c.typ, Lower: &lo, Upper: &hi}}}}}
		for _, s := range Statistics {
			for _, eps := range []float64{0.5, 1.9, 2, 5} {
				want := Recommend(s, c.typ == catalog.Integer, lo, hi, eps)
				st, err := sqlrewrite.NewParser(cat).Parse("SELECT " + sqlOf[s.Name] + " FROM t")
				if err != nil {
					t.Fatal(err)
				}
				plan, err := planner.New(cat).Plan(st.(*sqlrewrite.Select), planner.Settings{Epsilon: eps, Mechanism: "auto"})
				if err != nil {
					t.Fatal(err)
				}
				if len(plan.Releases) != 1 {
					t.Fatalf("%s: %d releases", s.Name, len(plan.Releases))
				}
				got := plan.Releases[0].Mechanism.Name()
				if want == "edges" { // the planner's names for the edge sums
					want = map[StatKind]string{MeanStat: "auto-mean", VarianceStat: "auto-variance"}[s.Kind]
				}
				if got != want {
					t.Errorf("%s of a %s column in [%g, %g] at ε = %g: the planner uses %s, Recommend says %s", s.Name, c.typ, lo, hi, eps, got, want)
				}
			}
		}
	}
}
