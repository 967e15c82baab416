package noise

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/mech"
)

// SampleLogWeights returns index i with probability proportional to
// exp(logWeights[i]), for the exponential mechanism and its relatives. It
// works in log space: weights are shifted by their maximum before
// exponentiating, so no weight overflows and the largest is exactly 1.
// Entries of -Inf have probability 0. At least one entry must be finite and
// none NaN or +Inf.
//
// Floating point: each probability is realised to within about
// (len+2)·2^-53 relative to the largest, plus 2^-53 from the 53-bit uniform;
// an ideal real-number sampler and this one differ in total variation by
// less than len·2^-51. That is the only place the exponential mechanism
// leaves exact arithmetic, and it is far below any δ a statement could use.
func SampleLogWeights(src Source, logWeights []float64) (int, error) {
	top := math.Inf(-1)
	for _, lw := range logWeights {
		if math.IsNaN(lw) || math.IsInf(lw, 1) {
			return 0, fmt.Errorf("%w: log weight %v", mech.ErrInvalidInput, lw)
		}
		top = max(top, lw)
	}
	if math.IsInf(top, -1) {
		return 0, fmt.Errorf("%w: no positive weight among %d", mech.ErrInvalidInput, len(logWeights))
	}
	cumulative := make([]float64, len(logWeights))
	total := 0.0
	for i, lw := range logWeights {
		total += math.Exp(lw - top)
		cumulative[i] = total
	}
	u := UniformFloat64(src) * total
	last := 0
	for i, c := range cumulative {
		if logWeights[i] == math.Inf(-1) {
			continue
		}
		if u < c {
			return i, nil
		}
		last = i
	}
	return last, nil // u rounded up to total: the last positive weight
}
