package planner_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestAcceptedPlansNeverFailOnData: whatever the planner accepts (every
// mechanism, at ε from 2^-50 to 100, on columns at the extremes of the
// bounds the catalog accepts) runs on every dataset without error, so a
// statement is refused, if at all, before anything is reserved (issue 10
// #6; DESIGN.md §2). The datasets are empty, one row, all rows tied at a
// bound, and rows spread over the bounds.
func TestAcceptedPlansNeverFailOnData(t *testing.T) {
	num := func(name string, typ catalog.ColumnType, lo, hi float64) catalog.Column {
		return catalog.Column{Name: name, Source: name, Type: typ, Lower: &lo, Upper: &hi}
	}
	m, M := catalog.MinBoundMagnitude, catalog.MaxBoundMagnitude
	columns := []catalog.Column{
		num("wide", catalog.Real, -M, M),
		num("tiny", catalog.Real, m, 2*m),
		num("neg", catalog.Real, -1, -m),
		num("units", catalog.Integer, 0, 100),
		num("huge", catalog.Integer, -M, M),
	}
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "t", Source: "t", Columns: columns}}}
	parser := sqlrewrite.NewParser(cat)
	p := planner.New(cat)
	var statements []string
	for _, c := range columns {
		for _, agg := range []string{"COUNT(%s)", "SUM(%s)", "AVG(%s)", "VARIANCE(%s)", "MEDIAN(%s)", "PERCENTILE_CONT(%s, 0.9)", "IQR(%s)"} {
			statements = append(statements, "SELECT "+fmt.Sprintf(agg, c.Name)+" FROM t")
		}
		for _, x := range columns {
			statements = append(statements, fmt.Sprintf("SELECT REGR_SLOPE(%s, %s) FROM t", c.Name, x.Name))
		}
	}
	datasets := func(lo, hi float64) [][]float64 {
		spread := make([]float64, 60)
		for i := range spread {
			spread[i] = lo + (hi-lo)*float64(i%20)/19
			if spread[i] > hi {
				spread[i] = hi
			}
		}
		slices.Sort(spread)
		tied := make([]float64, 60)
		for i := range tied {
			tied[i] = hi
		}
		return [][]float64{nil, {lo}, tied, spread}
	}
	// Not below 0.05: at 1e-3 the piecewise quantile takes 2 s a release (its
	// window grows as 1/ε); the ε checks themselves are exercised at 2^-50.
	epsilons := []float64{0x1p-50, 0.05, 1, 100}
	var ran int
	for _, name := range p.MechanismNames() {
		for _, sql := range statements {
			st, err := parser.Parse(sql)
			if err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
			for _, eps := range epsilons {
				plan, err := p.Plan(st.(*sqlrewrite.Select), planner.Settings{Epsilon: eps, Delta: 1e-6, Mechanism: name})
				if err != nil {
					continue // refused before reservation: what this test allows
				}
				for _, r := range plan.Releases {
					lo, hi := -1.0, 1.0
					if r.Stat.Column != nil {
						lo, hi, _ = r.Stat.Column.Bounds()
					}
					for di, data := range datasets(lo, hi) {
						src := rand.NewChaCha8([32]byte{byte(di), 7})
						_, err := runReleaseOn(src, r, data)
						ran++
						if err != nil {
							t.Errorf("@dp_mechanism = %s, ε = %v: %s accepted, then %s failed on dataset %d: %v", name, eps, sql, r.Stat, di, err)
						}
					}
				}
			}
		}
	}
	t.Logf("%d releases run", ran)
}

// runReleaseOn runs one release on sorted values, as the executor would:
// terms, histogram, windows (or their sums or grid indices), grid sums and
// pairs (y = x) from data.
func runReleaseOn(src rand.Source, r *planner.Release, sorted []float64) (planner.Estimate, error) {
	var sum, squares float64
	for _, v := range sorted {
		sum, squares = sum+v, squares+v*v
	}
	var terms []float64
	for _, tm := range r.Mechanism.Terms(r) {
		switch tm.Kind {
		case sqlrewrite.CountAll, sqlrewrite.CountNonNull, sqlrewrite.CountNumbers:
			terms = append(terms, float64(len(sorted)))
		case sqlrewrite.ClampedSum:
			terms = append(terms, sum)
		default:
			terms = append(terms, squares)
		}
	}
	return driveRelease(src, r, sorted, terms)
}

// driveRelease runs one release as the executor would, from its summary
// terms: the histogram, then the windows (their sums or grid indices), grid
// sums and pairs (y = x) it asks for, computed from the sorted values.
func driveRelease(src rand.Source, r *planner.Release, sorted []float64, terms []float64) (planner.Estimate, error) {
	var hist []int64
	if h := r.Mechanism.Histogram(r); h != nil {
		hist = binCounts(sorted, h)
	}
	step, err := r.Mechanism.Start(src, r, terms, hist)
	if err != nil {
		return planner.Estimate{}, err
	}
	var fetched []planner.Fetched
	for {
		more, done, est, err := step.Advance(context.Background(), src, fetched)
		if err != nil || done {
			return est, err
		}
		fetched = nil
		for _, f := range more {
			switch {
			case f.GridSums != nil:
				fetched = append(fetched, planner.Fetched{Grid: gridSums(sorted, f.GridSums)})
			case f.Pairs != nil:
				var pairs [][2]float64
				for _, v := range sorted {
					pairs = append(pairs, [2]float64{math.Min(math.Max(v, f.Pairs.YLower), f.Pairs.YUpper), v})
				}
				fetched = append(fetched, planner.Fetched{Pairs: pairs})
			case f.Window.GridUnit != 0:
				values := slices.Clone(window(sorted, f.Window))
				for i, v := range values {
					values[i] = float64(gridIndex(v, f.Window.Lower, f.Window.Upper, f.Window.GridUnit))
				}
				fetched = append(fetched, planner.Fetched{Values: values})
			default:
				fetched = append(fetched, planner.Fetched{Values: window(sorted, f.Window)})
			}
		}
	}
}

// window returns the values of w's ranks that sorted holds.
func window(sorted []float64, w *sqlrewrite.Window) []float64 {
	first := min(int(w.Offset), len(sorted))
	last := min(int(w.Offset+w.Limit), len(sorted))
	return sorted[first:last]
}
