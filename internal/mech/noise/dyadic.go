package noise

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"sort"

	"github.com/dpproxy/dpproxy/internal/mech"
)

// dyadicTable draws index i with probability exactly w_i/Σw, where each
// w_i is a dyadic rational within a relative 2^−40 of exp(logWeights[i] −
// max): every weight, however small next to the largest, keeps its
// probability up to that relative error. (The float log-weights and the
// float exp make the error bound depend on the caller keeping
// |lw_i − max| ≤ 2^10; ExpTable has a bound that holds for every input.)
//
// Each weight is w_i = m_i·2^(k_i) with k_i = ⌊λ_i⌋, λ_i = (lw_i − max)/ln 2,
// and the 53-bit mantissa m_i = round(2^(λ_i−k_i)·2^52). All weights are
// shifted to integers W_i = m_i·2^(k_i − k_min) (big.Int), and an index is
// found by an exact uniform draw below ΣW. Relative error of w_i: the
// float error of λ_i (a few ulps of |lw_i − max|, below 2^−42 while that
// difference stays below 2^10) plus one ulp of Exp2 and the mantissa
// rounding. Callers keep |lw_i − max| ≤ 2^10 (piecewise.go).
type DyadicTable struct {
	cumulative []*big.Int // cumulative[i] = W_0 + … + W_i
}

// newDyadicTable builds the table; −Inf entries get probability 0, and at
// least one entry must be finite.
func NewDyadicTable(logWeights []float64) (DyadicTable, error) {
	top := math.Inf(-1)
	for _, lw := range logWeights {
		if math.IsNaN(lw) || math.IsInf(lw, 1) {
			return DyadicTable{}, fmt.Errorf("%w: log weight %v", mech.ErrInvalidInput, lw)
		}
		top = max(top, lw)
	}
	if math.IsInf(top, -1) {
		return DyadicTable{}, fmt.Errorf("%w: no positive weight among %d", mech.ErrInvalidInput, len(logWeights))
	}
	mant := make([]int64, len(logWeights))
	exps := make([]int, len(logWeights))
	minExp := 0
	for i, lw := range logWeights {
		if math.IsInf(lw, -1) {
			continue
		}
		lambda := (lw - top) / math.Ln2
		k := math.Floor(lambda)
		mant[i], exps[i] = int64(math.Round(math.Exp2(lambda-k)*0x1p52)), int(k) // m ∈ [2^52, 2^53]
		minExp = min(minExp, int(k))
	}
	t := DyadicTable{cumulative: make([]*big.Int, len(logWeights))}
	total := new(big.Int)
	for i := range logWeights {
		w := big.NewInt(mant[i])
		total.Add(total, w.Lsh(w, uint(exps[i]-minExp)))
		t.cumulative[i] = new(big.Int).Set(total)
	}
	return t, nil
}

// draw returns an index: the first i with U < cumulative[i], U uniform
// below the total.
func (t DyadicTable) Draw(src Source) int {
	u := uniformBig(src, t.cumulative[len(t.cumulative)-1])
	return sort.Search(len(t.cumulative), func(i int) bool { return u.Cmp(t.cumulative[i]) < 0 })
}

// uniformBig returns an integer uniformly distributed on [0, n), n > 0,
// by rejection from the smallest power of two above n.
func uniformBig(src Source, n *big.Int) *big.Int {
	if n.IsUint64() {
		return new(big.Int).SetUint64(Uniform(src, n.Uint64()))
	}
	bitLen := n.BitLen()
	buf := make([]byte, (bitLen+63)/64*8)
	u := new(big.Int)
	for {
		for i := 0; i < len(buf); i += 8 {
			binary.BigEndian.PutUint64(buf[i:], src.Uint64())
		}
		u.SetBytes(buf).Rsh(u, uint(len(buf)*8-bitLen)) // uniform below 2^bitLen
		if u.Cmp(n) < 0 {
			return u
		}
	}
}
