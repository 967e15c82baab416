package planner_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/laplace"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestRollupIntervalsCover releases six groups' COUNT, SUM, AVG and
// VAR_POP as the executor does (the Laplace count and grid sum, the sums
// and squares from both bounds, each with Datum.Rolled), post-processes
// GROUP BY sex, state WITH ROLLUP, and counts how often each of the three
// super-aggregates' DP_INTERVAL_LOW..HIGH misses the true value of its
// groups' union. The groups hold 0 to 150 rows, an empty one among them
// (its count is limited to ≥ 0, which the total's interval must survive).
// Each of the 12 checks fails when its misses in N trials exceed
// 0.05·N + 4.5·√(N·0.05·0.95): for a correct 95% interval a false
// rejection rate below 10^−5 per check, 10^−4 for the test.
func TestRollupIntervalsCover(t *testing.T) {
	st, err := sqlrewrite.NewParser(testCatalog()).Parse("SELECT sex, state, COUNT(*), SUM(income), AVG(income), VAR_POP(age), " +
		"DP_INTERVAL_LOW(COUNT(*)), DP_INTERVAL_HIGH(COUNT(*)), DP_INTERVAL_LOW(SUM(income)), DP_INTERVAL_HIGH(SUM(income)), " +
		"DP_INTERVAL_LOW(AVG(income)), DP_INTERVAL_HIGH(AVG(income)), DP_INTERVAL_LOW(VAR_POP(age)), DP_INTERVAL_HIGH(VAR_POP(age)) " +
		"FROM pums GROUP BY sex, state WITH ROLLUP")
	if err != nil {
		t.Fatal(err)
	}
	q := st.(*sqlrewrite.Query)
	incomeBounds, ageBounds := mech.Bounds{Lower: 0, Upper: 500000}, mech.Bounds{Lower: 0, Upper: 100}
	incomeGrid, err := mech.NewGrid(incomeBounds)
	if err != nil {
		t.Fatal(err)
	}
	ageGrid, err := mech.NewGrid(ageBounds)
	if err != nil {
		t.Fatal(err)
	}
	// The data: integer incomes and ages, on their grids.
	data := rand.New(rand.NewPCG(3, 5))
	sizes := []int{0, 3, 40, 7, 150, 1}
	incomes, ages := make([][]float64, len(sizes)), make([][]float64, len(sizes))
	for g, n := range sizes {
		for range n {
			incomes[g] = append(incomes[g], float64(data.IntN(120000)))
			ages[g] = append(ages[g], float64(18+data.IntN(70)))
		}
	}
	// truth[r] are COUNT, SUM, AVG and VAR_POP of the groups of the r-th
	// super-aggregate: sex 0 (groups 0-2), sex 1 (3-5), all.
	var truth [3][4]float64
	for r, groups := range [][]int{{0, 1, 2}, {3, 4, 5}, {0, 1, 2, 3, 4, 5}} {
		var n, sum, ageSum, ageSquares float64
		for _, g := range groups {
			for i := range incomes[g] {
				n, sum = n+1, sum+incomes[g][i]
				ageSum, ageSquares = ageSum+ages[g][i], ageSquares+ages[g][i]*ages[g][i]
			}
		}
		truth[r] = [4]float64{n, sum, sum / n, ageSquares/n - (ageSum/n)*(ageSum/n)}
	}
	// The squares get more ε: at 0.5 the variances' intervals of so few
	// rows are all of [0, 2500].
	const epsilon, squaresEpsilon = 0.5, 20
	src := rand.NewChaCha8([32]byte{9, 4})
	release := func(g int) []planner.Datum {
		_, incomeSums := incomeGrid.Indices(incomes[g])
		_, ageSums := ageGrid.Indices(ages[g])
		count, err := laplace.ReleaseCount(src, int64(len(incomes[g])), epsilon)
		if err != nil {
			t.Fatal(err)
		}
		c, err := laplace.DeriveCount(count, planner.Confidence)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := laplace.ReleaseUnitSumOnGrid(src, incomeBounds, incomeGrid, incomeSums, 1, epsilon)
		if err != nil {
			t.Fatal(err)
		}
		s, err := laplace.DeriveSum(sum, planner.Confidence)
		if err != nil {
			t.Fatal(err)
		}
		edges, err := laplace.ReleaseEdgeSums(src, incomeGrid, incomeSums, epsilon)
		if err != nil {
			t.Fatal(err)
		}
		squares, err := laplace.ReleaseEdgeSquares(src, ageGrid, ageSums, squaresEpsilon)
		if err != nil {
			t.Fatal(err)
		}
		variance := &planner.RolledVariance{Squares: squares, Bounds: ageBounds, Kind: laplace.PopulationVariance}
		aggs := map[sqlrewrite.AggFunc]planner.Datum{
			sqlrewrite.CountRows: {Num: math.Round(c.Value), Int: true, Rolled: &planner.RolledSum{Shown: math.Round(c.Value), Release: count.Total(), Integer: true}},
			sqlrewrite.Sum:       {Num: s.Value, Rolled: &planner.RolledSum{Shown: s.Value, Release: sum.Total()}},
			sqlrewrite.Avg:       {Num: edges.Mean(incomeBounds), Rolled: &planner.RolledMean{Sums: edges, Bounds: incomeBounds}},
			sqlrewrite.VarPop:    {Num: variance.Value(), Rolled: variance},
		}
		row := make([]planner.Datum, len(q.Base.Items))
		for i, it := range q.Base.Items {
			d, ok := aggs[it.Agg.Func]
			if !ok {
				t.Fatalf("aggregate %s", it.Label)
			}
			row[i] = d
		}
		return row
	}
	const trials = 1000
	var misses [3][4]int
	var width [3][4]float64
	for range trials {
		rows := make([]planner.Row, len(sizes))
		for g := range sizes {
			rows[g] = planner.Row{Keys: []sqlrewrite.Value{{Num: float64(g / 3)}, {Str: []string{"CA", "NY", "WA"}[g%3], IsText: true}}, Aggs: release(g)}
		}
		out, _, err := planner.PostProcess(q, planner.Rollup(q, rows))
		if err != nil {
			t.Fatal(err)
		}
		r := 0
		for _, row := range out {
			if !row[1].Null {
				continue
			}
			for a := range 4 {
				low, high := row[6+2*a], row[7+2*a]
				if low.Null || high.Null {
					t.Fatalf("super-aggregate %d, aggregate %d: no interval (%v)", r, a, row)
				}
				if low.Num > row[2+a].Num || row[2+a].Num > high.Num {
					t.Fatalf("super-aggregate %d, aggregate %d: value %v outside [%v, %v]", r, a, row[2+a].Num, low.Num, high.Num)
				}
				if truth[r][a] < low.Num || truth[r][a] > high.Num {
					misses[r][a]++
				}
				width[r][a] += (high.Num - low.Num) / trials
			}
			r++
		}
		if r != 3 {
			t.Fatalf("%d super-aggregates, want 3", r)
		}
	}
	limit := 0.05*trials + 4.5*math.Sqrt(trials*0.05*0.95)
	for r := range 3 {
		for a, name := range []string{"COUNT", "SUM", "AVG", "VAR_POP"} {
			t.Logf("super-aggregate %d %s: true %.6g, mean width %.6g, %d of %d outside", r, name, truth[r][a], width[r][a], misses[r][a], trials)
			if float64(misses[r][a]) > limit {
				t.Errorf("super-aggregate %d %s: %d of %d intervals miss the truth, more than %.0f", r, name, misses[r][a], trials, limit)
			}
		}
	}
}

// TestRollupTotalOfSparseGroupsUnbiased: a total over many groups, most
// of them empty, is the summed release limited to ≥ 0, not the sum of the
// groups' counts each limited to ≥ 0, which is biased by about half the
// noise of every group (+2,000 here; an independent review saw a total
// near 100,000 for 1,000 rows over 9,804 buckets). Over 200 trials the
// mean total has a standard error of about 9 (each total's noise is the
// sum of 2,000 DLap(2) noises, σ ≈ 126), so a mean further than 60 from
// the truth fails by chance with probability below 10^−9.
func TestRollupTotalOfSparseGroupsUnbiased(t *testing.T) {
	st, err := sqlrewrite.NewParser(testCatalog()).Parse("SELECT sex, COUNT(*), DP_INTERVAL_LOW(COUNT(*)), DP_INTERVAL_HIGH(COUNT(*)) FROM pums GROUP BY sex WITH ROLLUP")
	if err != nil {
		t.Fatal(err)
	}
	q := st.(*sqlrewrite.Query)
	const groups, trials, epsilon = 2000, 200, 0.5
	truth := map[int]int64{7: 300, 100: 500, 1999: 200}
	src := rand.NewChaCha8([32]byte{7})
	var mean float64
	for range trials {
		rows := make([]planner.Row, groups)
		for g := range rows {
			count, err := laplace.ReleaseCount(src, truth[g], epsilon)
			if err != nil {
				t.Fatal(err)
			}
			c, err := laplace.DeriveCount(count, planner.Confidence)
			if err != nil {
				t.Fatal(err)
			}
			rows[g] = planner.Row{Keys: []sqlrewrite.Value{{Num: float64(g)}},
				Aggs: []planner.Datum{{Num: c.Value, Int: true, Rolled: &planner.RolledSum{Shown: c.Value, Release: count.Total(), Integer: true}}}}
		}
		out, _, err := planner.PostProcess(q, planner.Rollup(q, rows))
		if err != nil {
			t.Fatal(err)
		}
		total := out[len(out)-1]
		if !total[0].Null || total[2].Null || total[1].Num < total[2].Num || total[1].Num > total[3].Num {
			t.Fatalf("total row %v: want a NULL key and a value within its interval", total)
		}
		mean += total[1].Num / trials
	}
	if math.Abs(mean-1000) > 60 {
		t.Errorf("mean total count %.1f over %d trials, want 1000 ± 60", mean, trials)
	}
}
