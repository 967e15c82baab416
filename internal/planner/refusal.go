package planner

import (
	"fmt"
	"math"
	"strconv"

	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/mech"
)

// checkRefusal is the InvalidValue error of a statement whose release r
// (one of releases, which split s's ε evenly) its mechanism refused with
// err (Mechanism.Check), with the remedy that works: the smallest
// @dp_epsilon at which every release is accepted when a larger ε helps
// (smallestEpsilon), else what else may (δ, the mechanism), never "change
// @dp_epsilon" where no ε up to the cap would do. Everything it computes
// is from the statement and the configuration: the refusal, like Check,
// never looks at data.
func (p *Planner) checkRefusal(s Settings, releases []*Release, r *Release, err error) error {
	head := fmt.Sprintf("@dp_epsilon = %g (and @dp_delta = %g) split over this statement's %d release(s) gives %s an ε of %g, which mechanism %s cannot use",
		s.Epsilon, s.Delta, len(releases), r.Stat, r.Epsilon, r.Mechanism.Name())
	// The remedy comes before the cause: clients cut messages at 512 bytes.
	remedy := "lower @dp_epsilon (or change @dp_delta)"
	if top := p.epsilonCap(len(releases)); s.Epsilon < top {
		if e, ok := smallestEpsilon(releases, s.Epsilon, top); ok {
			remedy = fmt.Sprintf("the smallest @dp_epsilon this statement accepts at @dp_delta = %g is %s", s.Delta, strconv.FormatFloat(e, 'g', -1, 64))
			if len(releases) > 1 {
				remedy += " (or ask fewer aggregates at once)"
			}
		} else {
			other := "SET @dp_mechanism to another mechanism"
			if r.Mechanism.NeedsDelta() {
				other = "change @dp_delta, or " + other
			}
			remedy = fmt.Sprintf("no @dp_epsilon up to %g makes it acceptable: %s", top, other)
		}
	}
	return dperr.New(dperr.InvalidValue, "%s; %s. Why: %v", head, remedy, err)
}

// epsilonCap is the largest statement ε worth searching: at most
// mech.MaxEpsilon per release, and at most the configured cap
// (privacy.max_epsilon) when there is one.
func (p *Planner) epsilonCap(releases int) float64 {
	top := mech.MaxEpsilon * float64(releases)
	if c := p.cat.Privacy.MaxEpsilon; c > 0 {
		top = math.Min(top, c)
	}
	return top
}

// smallestEpsilon returns the smallest statement ε in (lo, hi], to two
// significant digits rounded up (within hi), at which every release accepts its even
// share (Check), each keeping its δ; ok = false if none is accepted at hi.
// Check accepts more as a share grows (every ε limit below mech.MaxEpsilon
// is a lower bound: step shares at least 2^-50, ε ≥ 2^-16 for the
// piecewise mechanisms, PTR's stability cap shrinking with ε), so
// bisection finds the least.
func smallestEpsilon(releases []*Release, lo, hi float64) (float64, bool) {
	accepts := func(e float64) bool {
		for _, r := range releases {
			c := *r
			c.Epsilon = mech.EvenShare(e, len(releases))
			if c.Mechanism.Check(&c) != nil {
				return false
			}
		}
		return true
	}
	if !accepts(hi) {
		return 0, false
	}
	top := hi
	for range 64 {
		mid := math.Sqrt(lo * hi)
		if !(mid > lo && mid < hi) {
			break
		}
		if accepts(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	// Two significant digits, rounded up: k·10^e with 10 ≤ k ≤ 100, as
	// the double nearest that decimal (which prints as written), raised
	// by one step when that double falls below the least accepted ε.
	e := int(math.Floor(math.Log10(hi))) - 1
	k := int(math.Ceil(hi / math.Pow(10, float64(e))))
	for range 2 {
		v, err := strconv.ParseFloat(fmt.Sprintf("%de%d", k, e), 64)
		if err == nil && v <= top && accepts(v) {
			return v, true
		}
		k++
	}
	return hi, true
}
