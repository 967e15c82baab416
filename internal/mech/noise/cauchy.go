package noise

import (
	"math"
	"math/big"
)

// gridCauchy is the standard Cauchy law of scale σ centred at a rational t,
// restricted to the integers (the output grid in units of its step):
// P[k] ∝ 1/(1 + ((k − t)/σ)²), drawn exactly by draw. σ ≥ 4 is a float64.
//
// Rejection sampling. Let J = ⌈σ⌉, k₀ = round(t) and δ = t − k₀; the draw
// is k₀ + j. The proposal picks block 0, |j| ≤ J, with probability
// (2J+1)/(6J+1), else block m ≥ 1, J·2^(m−1) < |j| ≤ J·2^m, with
// probability 4J·2^(−m)/(6J+1) (m is one plus the number of heads before
// the first tail), and then a uniform point of the block. Its weight per
// point, 1 in block 0 and 4/4^m in block m, is at least the target weight
// σ²/(σ² + (j−δ)²): trivially in block 0, and in block m because
// |j−δ| ≥ J·2^(m−1) ≥ σ·2^(m−1). The point is accepted with probability
// p = target/proposal weight. So the accepted point has exactly the target
// law; the acceptance rate is about πσ/(6σ) ≈ ½.
//
// The acceptance test U < p is exact: U's first 64 bits u decide it
// whenever the float value of p (relative error below 2^−48) is clearly
// outside [u·2^−64, (u+1)·2^−64); otherwise p is computed exactly and
// compared with U = (u + V)·2^−64 by an exact Bernoulli draw of
// p·2^64 − u for V.
type GridCauchy struct {
	k0     *big.Int
	delta  *big.Rat // t − k₀ ∈ [−½, ½]
	deltaF float64
	sigma  float64
	j0     int64
}

// newGridCauchy returns the law for centre t and scale σ ≥ 4 (σ < 2^58).
func NewGridCauchy(t *big.Rat, sigma float64) GridCauchy {
	half := new(big.Rat).Add(t, big.NewRat(1, 2))
	k0 := new(big.Int).Div(half.Num(), half.Denom()) // ⌊t + ½⌋ (Euclidean: denominator > 0)
	delta := new(big.Rat).Sub(t, new(big.Rat).SetInt(k0))
	deltaF, _ := delta.Float64()
	return GridCauchy{k0: k0, delta: delta, deltaF: deltaF, sigma: sigma, j0: int64(math.Ceil(sigma))}
}

// Centre returns t, the centre of the law, exactly.
func (g GridCauchy) Centre() *big.Rat {
	return new(big.Rat).Add(new(big.Rat).SetInt(g.k0), g.delta)
}

// Scale returns σ.
func (g GridCauchy) Scale() float64 { return g.sigma }

// draw returns k.
func (g GridCauchy) Draw(src Source) *big.Int {
	for {
		j, m := g.propose(src)
		if g.accept(src, j, m) {
			return j.Add(j, g.k0)
		}
	}
}

// propose returns a proposal j and its block m (0 for block 0).
func (g GridCauchy) propose(src Source) (*big.Int, uint) {
	if Uniform(src, uint64(6*g.j0+1)) < uint64(2*g.j0+1) {
		return big.NewInt(int64(Uniform(src, uint64(2*g.j0+1))) - g.j0), 0
	}
	m := uint(1)
	for src.Uint64()&1 == 1 {
		m++
	}
	inner := new(big.Int).Lsh(big.NewInt(g.j0), m-1) // J·2^(m−1)
	j := uniformBig(src, inner)
	j.Add(j, inner).Add(j, big.NewInt(1)) // J·2^(m−1) < |j| ≤ J·2^m
	if src.Uint64()&1 == 1 {
		j.Neg(j)
	}
	return j, m
}

// accept returns true with probability σ²/((σ² + (j−δ)²)·w_m), w_0 = 1,
// w_m = 4/4^m.
func (g GridCauchy) accept(src Source, j *big.Int, m uint) bool {
	jf, _ := new(big.Float).SetInt(j).Float64()
	d := jf - g.deltaF
	u := src.Uint64()
	// The float short-cut holds only while d² and σ²/(σ² + d²) are normal
	// float64 values (far proposals, |j| beyond 2^500, take the exact path:
	// d² would overflow to +Inf and p to 0).
	if math.Abs(d) < 0x1p500 {
		p := g.sigma * g.sigma / (g.sigma*g.sigma + d*d)
		if m > 0 {
			p = math.Ldexp(p, int(2*m)-2) // divide by 4/4^m
		}
		lo, hi := math.Ldexp(float64(u), -64), math.Ldexp(float64(u)+1, -64)
		const rel = 0x1p-48 // bound on the float error of p, with room to spare
		switch {
		case hi <= p*(1-rel):
			return true
		case lo >= p*(1+rel):
			return false
		}
	}
	// Exact: p as a rational, then V < p·2^64 − u for V uniform on [0, 1).
	s2 := new(big.Rat).SetFloat64(g.sigma)
	s2.Mul(s2, s2)
	dr := new(big.Rat).SetInt(j)
	dr.Sub(dr, g.delta)
	den := new(big.Rat).Mul(dr, dr)
	den.Add(den, s2)
	if m > 0 {
		den.Mul(den, new(big.Rat).SetFrac(big.NewInt(4), new(big.Int).Lsh(big.NewInt(1), 2*m)))
	}
	exact := new(big.Rat).Quo(s2, den)
	exact.Mul(exact, new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), 64)))
	exact.Sub(exact, new(big.Rat).SetInt(new(big.Int).SetUint64(u)))
	return bernoulliRat(src, exact)
}

// bernoulliRat returns true with probability p (clamped to [0, 1]), exactly.
func bernoulliRat(src Source, p *big.Rat) bool {
	switch {
	case p.Sign() <= 0:
		return false
	case p.Cmp(big.NewRat(1, 1)) >= 0:
		return true
	}
	return uniformBig(src, p.Denom()).Cmp(p.Num()) < 0
}
