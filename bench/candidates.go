package bench

import (
	"time"

	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// Candidate is a mechanism under test.
type Candidate struct {
	Name string
	// Summary says in a few words what the candidate is, for the report.
	Summary string
	// NeedsCount is set when the candidate spends CountShare·ε on a noisy
	// count ñ before the statistic.
	NeedsCount bool
	// Supports reports whether the candidate estimates s.
	Supports func(s Statistic) bool
	// Prepare does the candidate's deterministic, data-dependent work once
	// (sorting, windows, histograms) and returns a Prepared drawing one
	// release per call; the distribution of releases is the mechanism's,
	// at the total budget ε (count included).
	Prepare func(s Statistic, c *Column, epsilon float64) (*Prepared, error)
}

// Prepared draws releases of one candidate on one statistic, column and ε.
// It is used by one goroutine at a time.
type Prepared struct {
	// Draw returns one release; NaN means the mechanism refused (⊥).
	Draw func(src noise.Source) (float64, error)
	// Saved, when set, returns the computing time a cache spared so far
	// (hits × the time of the computation they reused), which the runner
	// adds back so that reported times are those of uncached releases.
	Saved func() time.Duration
	// Expected, when set, returns the analytic mean absolute error of the
	// continuous mechanism on this column, before any clamping (the
	// piecewise and inverse sensitivity mechanisms compute it exactly from
	// their pieces; private, for the benchmark only).
	Expected func() (float64, error)
}

// drawOnly wraps a function that does all its work per draw.
func drawOnly(draw func(src noise.Source) (float64, error)) *Prepared {
	return &Prepared{Draw: draw}
}

// Candidates are every mechanism of the benchmark, in the column order of
// the tables: the papers' mechanisms first, then the baselines.
func Candidates() []Candidate {
	return []Candidate{
		preprocessCandidate(),
		centredCandidate(),
		smoothCandidate(),
		piecewiseCandidate(),
		inverseCandidate(),
		gridExponentialCandidate(),
		gridPermuteFlipCandidate(),
		windowExponentialCandidate(),
		laplaceCandidate(),
		edgesCandidate(),
	}
}

// CandidateNames returns the names of cs in order.
func CandidateNames(cs []Candidate) []string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Name
	}
	return names
}

func isQuantile(s Statistic) bool { return s.Kind == QuantileStat }
func isMedian(s Statistic) bool   { return s.Kind == QuantileStat && s.Quantile == 0.5 }
