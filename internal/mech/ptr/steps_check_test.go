package ptr

import (
	"fmt"
	"math"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// Exact checks of every step of every PTR mechanism, and the mutation
// checks that prove they have power.
//
// A PTR mechanism's guarantee is a composition (params.go's table): on the
// worst path, `steps` steps of ε_step = ε/steps each (a failed test, a
// passed test, a release), and δ = (number of tests)·δ0 (+ δ_tail for TM).
// Each premise is a property of an exactly known law, checked here:
//
//   - a test: the pass probability P(a) = P[min(a, K) + Z ≥ T] (closed form,
//     ptrPassProb). Its exact loss is max over a ≥ 0 of |ln P(a+1)/P(a)| and
//     |ln (1−P(a))/(1−P(a+1))| (the distance has sensitivity 1, checked by
//     the distance property tests), and its δ0 is P(1), the pass
//     probability when the statistic is unstable;
//   - a release: the discrete Laplace g·(round(x/g) + DLap(β)) with centres
//     x, x' at most Δ apart (Δ the bin width, or the sensitivity the
//     derivation proves): its exact loss is (⌊Δ/g⌋ + 1)/β, the worst grid
//     distance of the rounded centres over the scale.
//
// The check asserts each step's exact loss ≤ ε_step and their composition
// ≤ the claimed (ε, δ). A mechanism built with a per-step ε ×4/3 (its noise
// scales cut by 25%) but claiming the original (ε, δ) must fail it:
// TestPTRStepsMutationFails.
//
// The own-scale median and the trimmed mean have no exact end-to-end law
// (exact_check_test.go has one for S and the public-scale median). Their
// second stage runs on the released scale s = b^y, y = g·(round(p/g) + Y)
// with Y ~ DLap(β) on the integers, and noise.NewLaplace's grid is
// g = 2^−40·⌈1/ε_step⌉₂, so β = (⌊1/g⌋ + 1)/ε_step is 2^39 to 2^40 grid
// steps (plus 1/ε_step): within mass 1 − 10^−12 the scale takes about 10^14
// values, and every one gives a different second stage (the bin width
// h = s·N^(−1/3) or the mean's noise s·N^κ/c_min, hence different bins,
// a different release grid ⌈h/ε⌉₂·2^−40 and integer scale). The output
// law is that mixture; even with y revealed (an upper bound) its hockey-
// stick sum has ~10^14 terms per pair, and the second stage is not
// piecewise constant in y, so no grouping of the y is exact. Discretising
// the released scale on the PTR bins of grid.go does not help either: the
// mechanism releases s, not its bin.
//
// Why the step checks and composition suffice there. The output is
// post-processing of the transcript (the scale's test outcomes, y, the
// median's test outcomes and its release; TM: the tests, y, the release),
// and given the earlier outputs each step's law is one the step checks
// verify for every value of those outputs: (1) a test's pass probability
// depends on the data only through a distance of sensitivity 1 for every
// public bin (distance_test.go checks that by brute force), and its exact
// loss and δ0 are checked for every distance a ∈ [0, K+1], so they hold
// whichever bin the released s selects; (2) every release is a discrete
// Laplace whose integer scale is its grid sensitivity over ε_step
// (noise.NewLaplace), so its exact loss (⌊Δ/g⌋ + 1)/β equals ε_step for
// every width Δ whenever the centres are within Δ, which a passed stable
// bin ensures (ptrMedianScales exercises widths over 15 orders of
// magnitude); (3) TM's release is within its sensitivity only if
// s·N^κ ≥ U, which fails with probability δ_tail over the scale's noise,
// computed exactly on the release grid in TestPTRTrimmedTailExact. The
// adaptive composition of (ε_i, δ_i) steps is (Σε_i, Σδ_i)-DP (Dwork and
// Roth, Theorem 3.16), the failure events of the tests entering δ as in
// Dwork and Lei's PTR argument: 6 steps and 4 tests for the own-scale
// median, 4 steps and 2 tests plus δ_tail for TM, as checked here.

// ptrTestLoss returns the exact loss of test t over a ∈ [0, K+1] and its δ0,
// P(pass | a = 1) (P is nondecreasing in a, so a = 0 passes less).
func ptrTestLoss(t ptrStabilityTest) (loss, delta0 float64) {
	for a := int64(0); a <= t.cap+1; a++ {
		p, pf := ptrTestProbs(t, a)
		q, qf := ptrTestProbs(t, a+1)
		loss = max(loss, math.Abs(math.Log(q/p)), math.Abs(math.Log(pf/qf)))
	}
	return loss, ptrPassProb(t, 1)
}

// ptrReleaseLoss returns the exact loss of l for centres at most shift
// apart.
func ptrReleaseLoss(l *noise.Laplace, shift float64) float64 {
	g, beta := ptrReleaseGrid(l)
	return (math.Floor(shift/g) + 1) / beta
}

// ptrStepReport is the exact loss of each step of one mechanism.
type ptrStepReport struct {
	// steps are the step losses on the worst path, in order.
	steps []float64
	// deltas are the tests' δ0 on the worst path (plus TM's δ_tail).
	deltas []float64
}

// check returns an error if a step exceeds its share or the composition
// exceeds (epsilon, delta).
func (r ptrStepReport) check(epsilon, delta float64) error {
	share := mech.EvenShare(epsilon, len(r.steps))
	total, totalDelta := 0.0, 0.0
	for i, s := range r.steps {
		if s > share*(1+1e-12) {
			return fmt.Errorf("step %d loses %.6g > its share %.6g of ε = %v", i, s, share, epsilon)
		}
		total += s
	}
	for _, d := range r.deltas {
		totalDelta += d
	}
	if total > epsilon*(1+1e-12) || totalDelta > delta*(1+1e-12) {
		return fmt.Errorf("composition (%.6g, %.3g) exceeds the claimed (%v, %v)", total, totalDelta, epsilon, delta)
	}
	return nil
}

// add appends the steps of one grid cascade of test t (a failed test and
// a passed one) and its release loss.
func (r *ptrStepReport) cascade(t ptrStabilityTest, release float64) {
	loss, d0 := ptrTestLoss(t)
	r.steps = append(r.steps, loss, loss, release)
	r.deltas = append(r.deltas, d0, d0)
}

// scaleSteps returns the steps of S: its release has sensitivity 1 in
// log-bin units (positions clamped into one bin).
func (c ptrScaleCore) steps(r *ptrStepReport) { r.cascade(c.test, ptrReleaseLoss(c.release, 1)) }

// ptrMedianScales are the spreads the own-scale median's release is
// checked at (its bin width, hence its noise, depends on the released s).
var ptrMedianScales = []float64{0, 1e-9, 1e-3, 0.01, 0.3, 1, 2.5, 7, 100, 1e6}

// medianSteps returns the steps of M (with S's first when it has its own
// scale): the release's worst loss over the bin widths of public scales
// or of every checked released s.
func (c ptrMedianCore) steps(r *ptrStepReport) error {
	scales := []float64{c.publicScale}
	if c.scale != nil {
		c.scale.steps(r)
		scales = ptrMedianScales
	}
	worst := 0.0
	for _, s := range scales {
		grid := c.grid(s)
		l, err := c.releaseNoise(grid)
		if err != nil {
			return err
		}
		worst = max(worst, ptrReleaseLoss(l, grid.binSpan(c.bounds)))
	}
	r.cascade(c.test, worst)
	return nil
}

// ptrStepsOf returns the step report of a mechanism built by name for
// (epsilon·mutate, delta) at public size 5000 on bounds [0, 10] (TM
// needs a large size for κ < 1 at small ε).
//
// releaseMutate multiplies the ε of the releases alone (the tests keep
// theirs): 4/3 cuts only the release noise by 25%.
func ptrStepsOf(name string, epsilon, delta, mutate, releaseMutate float64) (ptrStepReport, error) {
	b := mech.Bounds{Lower: 0, Upper: 10}
	p := Params{Epsilon: epsilon * mutate, Delta: delta, Size: 5000, Bounds: b}
	coef := []mech.Bounds{{Lower: -10, Upper: 10}, {Lower: -10, Upper: 10}}
	rp := RegressionParams{Epsilon: epsilon * mutate, Delta: delta, Size: 2000, Coefficients: coef}
	var r ptrStepReport
	switch name {
	case "scale":
		s, err := NewScale(p)
		if err != nil {
			return r, err
		}
		if err := s.core.mutateRelease(releaseMutate); err != nil {
			return r, err
		}
		s.core.steps(&r)
	case "median, public scale", "median, own scale":
		scale := 1.0
		if name == "median, own scale" {
			scale = 0
		}
		m, err := NewMedian(p, scale)
		if err != nil {
			return r, err
		}
		if err := m.core.mutateRelease(releaseMutate); err != nil {
			return r, err
		}
		if err := m.core.steps(&r); err != nil {
			return r, err
		}
	case "trimmed mean":
		tm, err := NewTrimmedMean(p, 0.2, 0)
		if err != nil {
			return r, err
		}
		if err := tm.scale.mutateRelease(releaseMutate); err != nil {
			return r, err
		}
		tm.noiseFactor /= releaseMutate
		// S's cascade (its test statistic min(A, n − n_min + 1) has
		// sensitivity 1 too), then the mean's release: the derivation
		// proves sensitivity ≤ s·N^κ/c_min for every released s with
		// s·N^κ ≥ U (δ_tail covers the rest), so the release must be
		// ε_step-DP for that shift at every s.
		tm.scale.steps(&r)
		worst, err := tm.releaseLoss(p.Size)
		if err != nil {
			return r, err
		}
		r.steps = append(r.steps, worst)
		r.deltas = append(r.deltas, tm.DeltaTail())
	case "regression, short-cut":
		rs, err := NewShortcutRegression(rp, nil)
		if err != nil {
			return r, err
		}
		for _, m := range rs.medians {
			if err := m.mutateRelease(releaseMutate); err != nil {
				return r, err
			}
			if err := m.steps(&r); err != nil {
				return r, err
			}
		}
	case "regression, hampel":
		rh, err := NewHampelRegression(rp, 0)
		if err != nil {
			return r, err
		}
		if err := rh.scales.mutateRelease(releaseMutate); err != nil {
			return r, err
		}
		rh.epsilon *= releaseMutate
		// Two scales (one per coefficient, 3 steps each), the cell test
		// over four cells (a level-1 cascade of K = 4 grids: three failed
		// tests and a passed one, Theorem 29), the release of both
		// coordinates at ε_step/2 each for a shift of one cell width.
		rh.scales.steps(&r)
		rh.scales.steps(&r)
		loss, d0 := ptrTestLoss(rh.test)
		r.steps = append(r.steps, loss, loss, loss, loss)
		r.deltas = append(r.deltas, d0, d0, d0, d0)
		worst := 0.0
		for _, s := range ptrMedianScales {
			w := ptrBinWidth(s, rh.sampledSize, 0.25, coef[0])
			l, err := rh.releaseNoise(0, w)
			if err != nil {
				return r, err
			}
			span := ptrLinearGrid{origin: coef[0].Lower, width: w}.binSpan(coef[0])
			worst = max(worst, 2*ptrReleaseLoss(l, span))
		}
		r.steps = append(r.steps, worst)
	default:
		return r, fmt.Errorf("unknown mechanism %q", name)
	}
	return r, nil
}

// ptrStepMechanisms are the mechanisms of the step checks.
var ptrStepMechanisms = []string{"scale", "median, public scale", "median, own scale", "trimmed mean", "regression, short-cut", "regression, hampel"}

// ptrStepClaims are the (ε, δ) of the step checks.
var ptrStepClaims = [][2]float64{{0.5, 1e-3}, {1, 1e-6}, {3, 1e-3}, {12, 1e-2}, {60, 1e-9}}

// TestPTRStepsExact: every step of every PTR mechanism loses at most its
// share of the claimed ε, exactly, and the tests' δ0 (and TM's δ_tail) add
// up to at most the claimed δ.
func TestPTRStepsExact(t *testing.T) {
	for _, name := range ptrStepMechanisms {
		for _, c := range ptrStepClaims {
			r, err := ptrStepsOf(name, c[0], c[1], 1, 1)
			if err != nil {
				t.Fatalf("%s at (%v, %v): %v", name, c[0], c[1], err)
			}
			if err := r.check(c[0], c[1]); err != nil {
				t.Errorf("%s at (%v, %v): %v", name, c[0], c[1], err)
			}
			if c == ptrStepClaims[2] {
				total := 0.0
				for _, s := range r.steps {
					total += s
				}
				t.Logf("%s at (ε, δ) = (%v, %v): %d steps, worst step %.6f (share %.6f), composed %.6f",
					name, c[0], c[1], len(r.steps), maxOf(r.steps), mech.EvenShare(c[0], len(r.steps)), total)
			}
		}
	}
}

// TestPTRStepsMutationFails: each mechanism built with its per-step ε
// ×4/3 (every noise scale cut by 25%), or with only its release noise cut
// by 25% (the tests intact), while claiming the original (ε, δ), fails the
// step check, for every claim.
func TestPTRStepsMutationFails(t *testing.T) {
	for _, name := range ptrStepMechanisms {
		for _, c := range ptrStepClaims {
			for _, mut := range []struct {
				what             string
				all, releaseOnly float64
			}{{"per-step ε ×4/3", 4.0 / 3, 1}, {"release noise ×3/4", 1, 4.0 / 3}} {
				r, err := ptrStepsOf(name, c[0], c[1], mut.all, mut.releaseOnly)
				if err != nil {
					t.Fatalf("%s at (%v, %v): %v", name, c[0], c[1], err)
				}
				if err := r.check(c[0], c[1]); err == nil {
					t.Errorf("%s at (%v, %v) with %s: the check passed", name, c[0], c[1], mut.what)
				} else if c == ptrStepClaims[2] {
					t.Logf("%s, %s: %v", name, mut.what, err)
				}
			}
		}
	}
}

// TestPTRTrimmedReleaseMutationFails: TM with only the mean's release
// noise cut by 25% (noise factor ×3/4; the review's broken copy halved it)
// fails its release step. The loss is that of the noise Release draws
// (releaseNoise), so a cut in production fails TestPTRStepsExact too.
func TestPTRTrimmedReleaseMutationFails(t *testing.T) {
	p := Params{Epsilon: 3, Delta: 1e-3, Size: 5000, Bounds: mech.Bounds{Lower: 0, Upper: 10}}
	tm, err := NewTrimmedMean(p, 0.2, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []float64{1, 0.75, 0.5} {
		tm.noiseFactor *= f
		worst, err := tm.releaseLoss(p.Size)
		if err != nil {
			t.Fatal(err)
		}
		tm.noiseFactor /= f
		t.Logf("noise factor ×%v: the mean's release loses %.6f, its share %.6f", f, worst, tm.epsilon)
		if failed := worst > tm.epsilon*(1+1e-12); failed != (f < 1) {
			t.Errorf("noise factor ×%v: release loss %v against the share %v", f, worst, tm.epsilon)
		}
	}
}

// releaseLoss returns the worst exact loss of the mean's release noise
// (releaseNoise, as Release builds it) over the checked released scales
// s, for centres as far apart as the derivation proves for public size
// N: (s·N^κ + 2·Unit)/c_min (steps 1–3 and the grid), at most the grid
// values' span Top·Unit. It is at most ε_step for every s with
// s·N^κ ≥ U; δ_tail covers the rest.
func (t *TrimmedMean) releaseLoss(size float64) (float64, error) {
	worst := 0.0
	for _, s := range ptrMedianScales[1:] {
		shift := math.Min((s*math.Pow(ptrSize(size), t.kappa)+2*t.grid.Unit)/t.minTrimmed, float64(t.grid.Top)*t.grid.Unit)
		l, err := t.releaseNoise(s)
		if err != nil {
			return 0, err
		}
		worst = max(worst, ptrReleaseLoss(l, shift))
	}
	return worst, nil
}

// mutateRelease rebuilds S's release noise (ptrScaleReleaseNoise) with
// its ε multiplied by f; f = 1 keeps the noise the constructor built, so
// the as-shipped checks read production's.
func (c *ptrScaleCore) mutateRelease(f float64) error {
	if f == 1 {
		return nil
	}
	l, err := ptrScaleReleaseNoise(c.release.Epsilon() * f)
	c.release = l
	return err
}

// mutateRelease multiplies the ε of M's release (and of its own S's) by f.
func (c *ptrMedianCore) mutateRelease(f float64) error {
	c.epsilon *= f
	if c.scale != nil {
		s := *c.scale
		if err := s.mutateRelease(f); err != nil {
			return err
		}
		c.scale = &s
	}
	return nil
}

func maxOf(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
