package laplace

import (
	"fmt"
	"math"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// Grouped counts under privacy units: a unit contributes to at most g
// groups (max_groups_per_unit) and at most k rows in each
// (max_rows_per_unit), chosen independently of the values; each group's
// count is released with ReleaseUnitCount(n, k, ε/g). The groups' noises
// are independent, so the joint law is the product of the groups' laws and
// the neighbours (all rows of one unit added) shift at most g of them by
// at most k each: the joint loss is at most g·k·(ε/g)/k = ε.

// groupedCountLoss releases every group's count of the bounded neighbours
// base and base+unit with ReleaseUnitCount(·, k, groupEps) and returns the
// exact loss of the joint law against claimEps: the product of the groups'
// three-cell laws (3^groups cells; within a product of tails the ratio is
// constant, and the worst cell is a product of tails, as in shiftLoss).
func groupedCountLoss(t *testing.T, base, withUnit []int64, k int64, groupEps, claimEps float64) privtest.Loss {
	t.Helper()
	lnP, lnQ := []float64{0}, []float64{0}
	for g := range base {
		r, err := ReleaseUnitCount(noise.NewCryptoSource(), base[g], k, groupEps)
		if err != nil {
			t.Fatal(err)
		}
		p, q := privtest.DiscreteShiftLaws(r.noise.(*noise.DiscreteLaplace).Scale(), float64(withUnit[g]-base[g]))
		var nextP, nextQ []float64
		for i := range lnP {
			for j := range p {
				nextP = append(nextP, lnP[i]+p[j])
				nextQ = append(nextQ, lnQ[i]+q[j])
			}
		}
		lnP, lnQ = nextP, nextQ
	}
	l, err := privtest.ExactLoss(lnP, lnQ, claimEps)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// boundUnit keeps, of a unit with rows[h] rows in group h, at most g groups
// (a seeded choice among the groups it touches, independent of the counts,
// as the database's keyed hash of the group key) and at most k rows in
// each: the unit's bounded count per group.
func boundUnit(src noise.Source, rows []int64, k int64, g int) []int64 {
	var touched []int
	for h, m := range rows {
		if m > 0 {
			touched = append(touched, h)
		}
	}
	for i := len(touched) - 1; i > 0; i-- {
		j := int(src.Uint64() % uint64(i+1))
		touched[i], touched[j] = touched[j], touched[i]
	}
	out := make([]int64, len(rows))
	for _, h := range touched[:min(g, len(touched))] {
		out[h] = min(k, rows[h])
	}
	return out
}

// groupedUnitPairs are bounded neighbours over `groups` groups: a base of
// counts, and the base plus one unit with m rows in each of `spread` groups
// (m ∈ {1, k, 3k}, spread from 1 to all groups), bounded to g groups and k
// rows per group.
func groupedUnitPairs(src noise.Source, groups int, k int64, g int) (pairs [][2][]int64, names []string) {
	base := make([]int64, groups)
	for h := range base {
		base[h] = int64(5 + 3*h)
	}
	for _, m := range []int64{1, k, 3 * k} {
		for spread := 1; spread <= groups; spread++ {
			rows := make([]int64, groups)
			for h := range spread {
				rows[h] = m
			}
			unit := boundUnit(src, rows, k, g)
			with := make([]int64, groups)
			for h := range base {
				with[h] = base[h] + unit[h]
			}
			pairs = append(pairs, [2][]int64{base, with})
			names = append(names, fmt.Sprintf("unit of %d rows in each of %d groups", m, spread))
		}
	}
	return pairs, names
}

// TestGroupedUnitCountsExactPrivacy: grouped Laplace counts on neighbours
// that differ by all rows of one unit spread over several groups (k rows
// per group, g groups kept of up to 4 touched): with ε/g per group the
// exact joint loss is at most ε, and equal to it when the unit fills g
// groups with k rows; charged ε per group (no split) it is g·ε, and with
// the per-group noise cut by 25% (4ε/(3g)) it exceeds ε, as it does when
// the database keeps all 4 of the unit's groups (no group bound).
func TestGroupedUnitCountsExactPrivacy(t *testing.T) {
	src := noise.NewStream(13)
	const groups = 4
	for _, eps := range []float64{0.1, 1, 3} {
		for _, k := range []int64{1, 2, 5} {
			for _, g := range []int{1, 2, 3} {
				pairs, names := groupedUnitPairs(src, groups, k, g)
				var split, noSplit, cut privtest.MaxLoss
				for i, p := range pairs {
					name := fmt.Sprintf("ε=%v k=%d g=%d: %s", eps, k, g, names[i])
					l := groupedCountLoss(t, p[0], p[1], k, eps/float64(g), eps)
					l.Check(t, name, eps, 0)
					split.Add(name, l)
					noSplit.Add(name, groupedCountLoss(t, p[0], p[1], k, eps, eps))
					cut.Add(name, groupedCountLoss(t, p[0], p[1], k, eps*4/3/float64(g), eps))
				}
				if math.Abs(split.Worst-eps) > privtest.LossTolerance*eps {
					t.Errorf("ε=%v k=%d g=%d: worst loss %v, want ε (a unit filling g groups with k rows)", eps, k, g, split.Worst)
				}
				if g > 1 && noSplit.Holds(eps, 0) {
					t.Errorf("ε=%v k=%d g=%d: without the ε/g split the loss %v stays within ε", eps, k, g, noSplit.Worst)
				}
				if cut.Holds(eps, 0) {
					t.Errorf("ε=%v k=%d g=%d: with the noise cut by 25%% the loss %v stays within ε", eps, k, g, cut.Worst)
				}
				// Without the group bound the unit keeps all 4 groups.
				var unbounded privtest.MaxLoss
				all, allNames := groupedUnitPairs(src, groups, k, groups)
				for i, p := range all {
					unbounded.Add(allNames[i], groupedCountLoss(t, p[0], p[1], k, eps/float64(g), eps))
				}
				if g < groups && unbounded.Holds(eps, 0) {
					t.Errorf("ε=%v k=%d g=%d: without the group bound the loss %v stays within ε", eps, k, g, unbounded.Worst)
				}
				if eps == 1 {
					t.Logf("k=%d g=%d: worst loss %.12fε with ε/g per group; %.6fε without the split; %.6fε with the noise cut 25%%; %.6fε without the group bound",
						k, g, split.Worst/eps, noSplit.Worst/eps, cut.Worst/eps, unbounded.Worst/eps)
				}
			}
		}
	}
}
