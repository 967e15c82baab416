package planner

import (
	"math/rand/v2"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestLeavesDisjoint: hand-checked pairs of conditions on one column.
func TestLeavesDisjoint(t *testing.T) {
	rng := func(lo, hi float64, lo0, hi0 bool) sqlrewrite.Condition {
		return sqlrewrite.Condition{Column: "age", Range: &sqlrewrite.Range{Lower: lo, Upper: hi, HasLower: true, HasUpper: true, LowerOpen: lo0, UpperOpen: hi0}}
	}
	in := func(vs ...any) sqlrewrite.Condition {
		c := sqlrewrite.Condition{Column: "age"}
		for _, v := range vs {
			switch v := v.(type) {
			case string:
				c.Column, c.Text = "state", true
				c.In = append(c.In, sqlrewrite.Value{Str: v, IsText: true})
			case float64:
				c.In = append(c.In, sqlrewrite.Value{Num: v})
			}
		}
		return c
	}
	// at is a timestamp range from second lo plus loµ microseconds to hi
	// plus hiµ, on a 2024 column.
	at := func(lo float64, loµ int32, hi float64, hiµ int32, lo0, hi0 bool) sqlrewrite.Condition {
		return sqlrewrite.Condition{Column: "at", Temporal: catalog.Timestamp, Range: &sqlrewrite.Range{Lower: lo, LowerMicros: loµ, Upper: hi, UpperMicros: hiµ,
			HasLower: true, HasUpper: true, LowerOpen: lo0, UpperOpen: hi0}}
	}
	const s = 1704067200 // 2024-01-01 00:00:00
	const p53 = float64(1 << 53)
	complement := in(1.0)
	complement.Complement = true
	other := in(2.0)
	other.Column = "educ"
	for _, c := range []struct {
		x, y sqlrewrite.Condition
		want bool
	}{
		{in(1.0), in(2.0), true},
		{in(1.0, 2.0), in(2.0, 3.0), false},
		{in(1.0), other, false},
		{in(1.0), complement, false},
		{rng(0, 30, false, false), rng(30, 60, false, false), false},
		{rng(0, 30, false, true), rng(30, 60, false, false), true},
		{rng(0, 30, false, false), rng(30, 60, true, false), true},
		{rng(0, 30, false, false), rng(31, 60, false, false), true},
		{rng(0, 30, false, false), in(30.0), false},
		{rng(0, 30, false, true), in(30.0, 45.0), true},
		// Beyond 2⁵³ MySQL compares a BIGINT with a mixed list as a
		// double: 2⁵³+1 is in `b > 2⁵³` and in `b IN (2⁵³, 1)`.
		{rng(p53, 1e19, true, false), in(p53, 1.0), false},
		{rng(-1e19, -p53, false, true), in(-p53, 1.0), false},
		{in(p53, 1.0), in(p53+2, 5.0), false},
		{rng(p53/2, 1e19, true, false), in(p53/2, 1.0), true},
		// Fractions of a second: [s, s.5] meets [s.5, s+1] at s.5, not
		// [s.5 + 1µs, ...), and [s, s.25) misses [s.25, ...); a closed
		// end at s and another at s.000001 are apart.
		{at(s, 0, s, 500000, false, false), at(s, 500000, s+1, 0, false, false), false},
		{at(s, 0, s, 500000, false, false), at(s, 500001, s+1, 0, false, false), true},
		{at(s, 0, s, 250000, false, true), at(s, 250000, s+1, 0, false, false), true},
		{at(s, 0, s+1, 0, false, false), at(s+1, 1, s+2, 0, false, false), true},
		{at(s, 0, s+1, 1, false, false), at(s+1, 0, s+2, 0, false, false), false},
		// Text never: collations equate 'CA' and 'ca', '1' and '01' (ICU's
		// numeric ordering), 'ccs' and 'cscs' (Hungarian), 'e' and 'é'.
		{in("CA"), in("NY"), false},
		{in("1"), in("01"), false},
		{in("ccs"), in("cscs"), false},
		{in("e"), in("é"), false},
	} {
		if got := leavesDisjoint(c.x, c.y); got != c.want {
			t.Errorf("leavesDisjoint(%+v, %+v) = %v, want %v", c.x, c.y, got, c.want)
		}
		if got := leavesDisjoint(c.y, c.x); got != c.want {
			t.Errorf("leavesDisjoint(%+v, %+v) = %v, want %v (swapped)", c.y, c.x, got, c.want)
		}
	}
}

// TestDisjointRangesHoldNoCommonNumber: for random ranges and lists on a
// grid of halves, every pair leavesDisjoint calls disjoint has no common
// number of the grid (which holds every end and its neighbours), and every
// pair of satisfiable conditions it does not call so shares one (ranges
// and lists of numbers are decided exactly). Seeded; deterministic.
func TestDisjointRangesHoldNoCommonNumber(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	end := func() float64 { return float64(r.IntN(21)) / 2 }
	random := func() sqlrewrite.Condition {
		if r.IntN(3) == 0 {
			c := sqlrewrite.Condition{Column: "x"}
			for range 1 + r.IntN(3) {
				c.In = append(c.In, sqlrewrite.Value{Num: end()})
			}
			return c
		}
		g := sqlrewrite.Range{HasLower: r.IntN(4) > 0, HasUpper: r.IntN(4) > 0, LowerOpen: r.IntN(2) == 0, UpperOpen: r.IntN(2) == 0}
		g.Lower, g.Upper = end(), end()
		if g.Lower > g.Upper {
			g.Lower, g.Upper = g.Upper, g.Lower
		}
		return sqlrewrite.Condition{Column: "x", Range: &g}
	}
	holds := func(c sqlrewrite.Condition, v float64) bool {
		if c.Range == nil {
			for _, x := range c.In {
				if x.Num == v {
					return true
				}
			}
			return false
		}
		g := c.Range
		return (!g.HasLower || v > g.Lower || !g.LowerOpen && v == g.Lower) && (!g.HasUpper || v < g.Upper || !g.UpperOpen && v == g.Upper)
	}
	for range 20000 {
		x, y := random(), random()
		common, xSome, ySome := false, false, false
		for k := -2; k <= 44; k++ {
			v := float64(k) / 4
			common = common || holds(x, v) && holds(y, v)
			xSome, ySome = xSome || holds(x, v), ySome || holds(y, v)
		}
		// Sound always; exact unless a condition holds for no number (an
		// empty range such as (7, 7), which it need not call disjoint).
		if got := leavesDisjoint(x, y); got && common || !got && !common && xSome && ySome {
			t.Fatalf("leavesDisjoint(%+v %+v, %+v %+v) = %v, common number: %v", x, x.Range, y, y.Range, got, common)
		}
	}
}
