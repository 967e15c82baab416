package privtest

import (
	"fmt"
	"math"
	"math/big"
	"slices"
)

// Exact privacy checks for mechanisms whose output law can be computed.
//
// A discrete law is given as aligned log-probabilities: cell i of P and of
// Q is the same set of outputs, and within a cell both laws must be
// proportional to one common measure (a single output, or a run of outputs
// on which both probabilities are constant, or a tail on which their ratio
// is constant): then the cell's log-ratio is every output's log-ratio in
// it, and the cell's hockey-stick term is the sum of its outputs' terms, so
// the loss of the cell law equals the loss of the full law. −Inf is
// probability 0.

// LossTolerance is the relative slack a check allows for the float64
// arithmetic of computing log-laws (errors near 10^−15·|ln p|); it is far
// below any mutation a check must catch (a 25% cut of a noise scale moves
// the loss by a third).
const LossTolerance = 1e-9

// Loss is the exact privacy loss between the laws P (of M(D)) and Q (of
// M(D')).
type Loss struct {
	// Worst is the largest |ln P_i − ln Q_i| over cells, +Inf when some
	// cell has probability 0 under exactly one law.
	Worst float64
	// WorstCell is a cell attaining Worst (−1 for empty laws).
	WorstCell int
	// ZeroMismatch counts the cells with probability 0 under exactly one law.
	ZeroMismatch int
	// MassAbove is max over both directions of Σ_i max(0, P_i − e^ε·Q_i):
	// the smallest δ for which the pair satisfies (ε, δ)-DP's inequality
	// for every event.
	MassAbove float64
}

// ExactLoss returns the loss between aligned log-laws lnP and lnQ at ε. It
// fails if the lengths differ, an entry is NaN or +Inf, or either law's
// total is not 1 within 10^−9 (a missing cell, such as a forgotten tail).
func ExactLoss(lnP, lnQ []float64, epsilon float64) (Loss, error) {
	if len(lnP) != len(lnQ) {
		return Loss{}, fmt.Errorf("privtest: laws of %d and %d cells", len(lnP), len(lnQ))
	}
	for _, law := range [][]float64{lnP, lnQ} {
		total := 0.0
		for _, lp := range law {
			if math.IsNaN(lp) || math.IsInf(lp, 1) || lp > 1e-12 {
				return Loss{}, fmt.Errorf("privtest: log-probability %v", lp)
			}
			total += math.Exp(lp)
		}
		if math.Abs(total-1) > 1e-9 {
			return Loss{}, fmt.Errorf("privtest: a law sums to %v, not 1", total)
		}
	}
	l := Loss{WorstCell: -1}
	var above [2]float64
	for i := range lnP {
		p, q := lnP[i], lnQ[i]
		var d float64
		switch {
		case math.IsInf(p, -1) && math.IsInf(q, -1):
			continue
		case math.IsInf(p, -1) || math.IsInf(q, -1):
			l.ZeroMismatch++
			d = math.Inf(1)
		default:
			d = math.Abs(p - q)
		}
		if d > l.Worst || l.WorstCell < 0 {
			l.Worst, l.WorstCell = max(d, l.Worst), i
		}
		above[0] += max(0, math.Exp(p)-math.Exp(q+epsilon))
		above[1] += max(0, math.Exp(q)-math.Exp(p+epsilon))
	}
	l.MassAbove = max(above[0], above[1])
	return l, nil
}

// ExactLossMasses is ExactLoss for laws given as aligned unnormalised
// masses (each law is mass_i/Σ mass; nil or 0 is probability 0), computed
// at 256 bits: the log-ratio of a cell is ln(1 + r) for r = ratio − 1
// computed in big.Float, so it stays accurate to 10^−15 relative even for
// ε near 2^−50 and for masses far below float64's range. It fails if the
// lengths differ, a mass is negative, or a law has no mass.
func ExactLossMasses(p, q []*big.Float, epsilon float64) (Loss, error) {
	if len(p) != len(q) {
		return Loss{}, fmt.Errorf("privtest: laws of %d and %d cells", len(p), len(q))
	}
	const prec = 256
	totals := [2]*big.Float{new(big.Float).SetPrec(prec), new(big.Float).SetPrec(prec)}
	for k, law := range [2][]*big.Float{p, q} {
		for _, m := range law {
			if m != nil {
				if m.Sign() < 0 {
					return Loss{}, fmt.Errorf("privtest: negative mass %v", m)
				}
				totals[k].Add(totals[k], m)
			}
		}
		if totals[k].Sign() == 0 {
			return Loss{}, fmt.Errorf("privtest: a law without mass")
		}
	}
	prob := func(m, total *big.Float) *big.Float {
		if m == nil {
			return new(big.Float).SetPrec(prec)
		}
		return new(big.Float).SetPrec(prec).Quo(m, total)
	}
	eps := new(big.Float).SetPrec(prec).SetFloat64(math.Exp(epsilon))
	l := Loss{WorstCell: -1}
	var above [2]float64
	for i := range p {
		pi, qi := prob(p[i], totals[0]), prob(q[i], totals[1])
		var d float64
		switch {
		case pi.Sign() == 0 && qi.Sign() == 0:
			continue
		case pi.Sign() == 0 || qi.Sign() == 0:
			l.ZeroMismatch++
			d = math.Inf(1)
		default:
			d = math.Abs(logRatio(pi, qi))
		}
		if d > l.Worst || l.WorstCell < 0 {
			l.Worst, l.WorstCell = max(d, l.Worst), i
		}
		for k, pair := range [2][2]*big.Float{{pi, qi}, {qi, pi}} {
			excess := new(big.Float).SetPrec(prec).Mul(pair[1], eps)
			excess.Sub(pair[0], excess)
			if excess.Sign() > 0 {
				f, _ := excess.Float64()
				above[k] += f
			}
		}
	}
	l.MassAbove = max(above[0], above[1])
	return l, nil
}

// logRatio returns ln(a/b) for a, b > 0, accurately when a/b is near 1.
func logRatio(a, b *big.Float) float64 {
	r := new(big.Float).SetPrec(a.Prec()).Quo(a, b)
	d := new(big.Float).SetPrec(a.Prec()).Sub(r, big.NewFloat(1))
	if df, _ := d.Float64(); math.Abs(df) < 0.5 {
		return math.Log1p(df)
	}
	mant := new(big.Float)
	e := r.MantExp(mant)
	f, _ := mant.Float64()
	return math.Log(f) + float64(e)*math.Ln2
}

// ExactLossMaps is ExactLoss for laws given as output → probability
// (outputs absent from a map have probability 0).
func ExactLossMaps(p, q map[float64]float64, epsilon float64) (Loss, error) {
	var outputs []float64
	for o := range p {
		outputs = append(outputs, o)
	}
	for o := range q {
		if _, ok := p[o]; !ok {
			outputs = append(outputs, o)
		}
	}
	slices.Sort(outputs)
	lnP, lnQ := make([]float64, len(outputs)), make([]float64, len(outputs))
	for i, o := range outputs {
		lnP[i], lnQ[i] = math.Log(p[o]), math.Log(q[o])
	}
	return ExactLoss(lnP, lnQ, epsilon)
}

// Holds reports whether the loss satisfies (ε, δ)-DP up to LossTolerance:
// Worst ≤ ε for δ = 0, MassAbove ≤ δ otherwise.
func (l Loss) Holds(epsilon, delta float64) bool {
	if delta == 0 {
		return l.Worst <= epsilon*(1+LossTolerance)
	}
	return l.MassAbove <= delta*(1+LossTolerance)
}

// Check fails t, naming the pair, unless the loss satisfies (ε, δ)-DP
// (Holds).
func (l Loss) Check(t Reporter, name string, epsilon, delta float64) {
	t.Helper()
	if !l.Holds(epsilon, delta) {
		t.Errorf("%s: exact loss %v at cell %d (%d cells zero on one side only), mass above ε %v; claimed (%v, %v)-DP",
			name, l.Worst, l.WorstCell, l.ZeroMismatch, l.MassAbove, epsilon, delta)
	}
}

// MaxLoss accumulates the worst loss over many pairs.
type MaxLoss struct {
	Loss
	// Pair names the pair attaining Worst.
	Pair  string
	Pairs int
}

// Add records one pair's loss.
func (m *MaxLoss) Add(name string, l Loss) {
	m.Pairs++
	if m.Pairs == 1 || l.Worst > m.Worst {
		m.Loss, m.Pair = Loss{Worst: l.Worst, WorstCell: l.WorstCell, ZeroMismatch: l.ZeroMismatch, MassAbove: max(m.MassAbove, l.MassAbove)}, name
	} else {
		m.MassAbove = max(m.MassAbove, l.MassAbove)
	}
}

// DiscreteShiftLaws is the law of n + Z against n + d + Z (Z discrete
// Laplace of scale beta in grid steps, d ≥ 0 steps) as three aligned cells,
// within each of which the ratio of the laws is constant: z ≤ n (ratio
// e^(d/β)), n < z < n + d, and z ≥ n + d (ratio e^(−d/β)); natural logs of
// each cell's probability under either law.
func DiscreteShiftLaws(beta, d float64) (lnP, lnQ []float64) {
	a := 1 / beta
	ln1r := math.Log1p(math.Exp(-a))
	lnRun := math.Inf(-1)
	if d > 0 {
		lnRun = math.Log(-math.Expm1(-d * a))
	}
	return []float64{-a - ln1r, lnRun - ln1r, -d*a - ln1r}, []float64{-(d+1)*a - ln1r, -a + lnRun - ln1r, -ln1r}
}
