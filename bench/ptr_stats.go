package bench

import (
	"crypto/sha256"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/dpproxy/dpproxy/internal/mech/laplace"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// PTRErrors summarizes the trials of one mechanism in one cell: the
// absolute errors of the answered trials and how many trials answered ⊥.
type PTRErrors struct {
	// Trials is the number of trials run, answered or not.
	Trials int
	// Refused is the number of trials that answered ⊥.
	Refused int
	// Mean and P90 are the mean and the 90th percentile (nearest rank) of
	// the absolute errors of the answered trials; NaN when none answered.
	Mean, P90 float64
}

// RefusalRate returns the fraction of trials that answered ⊥.
func (e PTRErrors) RefusalRate() float64 {
	if e.Trials == 0 {
		return math.NaN()
	}
	return float64(e.Refused) / float64(e.Trials)
}

// ptrOutcome is one trial's answer: its absolute error, or ⊥.
type ptrOutcome struct {
	err     float64
	refused bool
}

// ptrSummarize returns the summary of outcomes.
func ptrSummarize(outcomes []ptrOutcome) PTRErrors {
	e := PTRErrors{Trials: len(outcomes), Mean: math.NaN(), P90: math.NaN()}
	var errs []float64
	for _, o := range outcomes {
		if o.refused {
			e.Refused++
			continue
		}
		errs = append(errs, o.err)
	}
	if len(errs) == 0 {
		return e
	}
	slices.Sort(errs)
	sum := 0.0
	for _, v := range errs {
		sum += v
	}
	e.Mean = sum / float64(len(errs))
	e.P90 = errs[max(0, int(math.Ceil(0.9*float64(len(errs))))-1)]
	return e
}

// ptrSource returns a ChaCha8 stream determined by the seed and the parts
// (a cell and a trial), so every result is reproducible and different
// cells and trials see independent noise.
func ptrSource(seed uint64, parts ...any) *rand.ChaCha8 {
	return rand.NewChaCha8(sha256.Sum256(fmt.Append(nil, "ptr", seed, parts)))
}

// ptrPublicSize releases the noisy count that stands in for n in the PTR
// constants, with the share of ε the proxy spends on it
// (internal/planner/ptr.go: CountShare = 0.1), and returns it with the ε
// left for the mechanism.
func ptrPublicSize(src noise.Source, n int, epsilon float64) (size, rest float64, err error) {
	count, err := laplace.ReleaseCount(src, int64(n), epsilon*ptrCountShare)
	if err != nil {
		return 0, 0, err
	}
	return count.Value(), epsilon * (1 - ptrCountShare), nil
}

// ptrCountShare is the planner's CountShare, replicated (not imported) so
// that the benchmark does not depend on the planner.
const ptrCountShare = 0.1

// ptrPercentile returns PERCENTILE_CONT(q) of sorted values.
func ptrPercentile(sorted []float64, q float64) float64 {
	h := q * float64(len(sorted)-1)
	i := int(math.Floor(h))
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-float64(i))*(sorted[i+1]-sorted[i])
}
