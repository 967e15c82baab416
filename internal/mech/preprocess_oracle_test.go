package mech

import (
	"math/big"
	"slices"
)

// Reference implementations of sensitivity preprocessing in exact rational
// arithmetic, for tests only: the paper's generic exponential Algorithm 1
// (the oracle), Algorithm 2 (database-ordered f over windows, O(n²)) and
// Algorithm 3 (variance, O(n²)).

// ratStatistic is a statistic of a multiset of rationals (sorted ascending);
// it is never called on the empty set.
type ratStatistic func(sorted []*big.Rat) *big.Rat

// oraclePreprocess is Algorithm 1: g over every subset of xs (bitmasks),
// with g(∅) = g0 and uniform Δ = delta. O(2^n·n) evaluations of f.
func oraclePreprocess(xs []*big.Rat, delta, g0 *big.Rat, f ratStatistic) *big.Rat {
	n := len(xs)
	g := make([]*big.Rat, 1<<n)
	g[0] = g0
	for mask := 1; mask < 1<<n; mask++ {
		var sub []*big.Rat
		var up, lo *big.Rat
		for i := range n {
			if mask&(1<<i) == 0 {
				continue
			}
			sub = append(sub, xs[i])
			smaller := g[mask&^(1<<i)]
			u := new(big.Rat).Add(smaller, delta)
			l := new(big.Rat).Sub(smaller, delta)
			if up == nil || u.Cmp(up) < 0 {
				up = u
			}
			if lo == nil || l.Cmp(lo) > 0 {
				lo = l
			}
		}
		slices.SortFunc(sub, func(a, b *big.Rat) int { return a.Cmp(b) })
		g[mask] = clampRat(f(sub), lo, up)
	}
	return g[1<<n-1]
}

// clampRat returns v limited to [lo, hi] (a new value).
func clampRat(v, lo, hi *big.Rat) *big.Rat {
	switch {
	case v.Cmp(hi) > 0:
		return new(big.Rat).Set(hi)
	case v.Cmp(lo) < 0:
		return new(big.Rat).Set(lo)
	}
	return new(big.Rat).Set(v)
}

// algorithm2 is the paper's Algorithm 2 on sorted xs: windows only.
func algorithm2(xs []*big.Rat, delta, g0 *big.Rat, f ratStatistic) *big.Rat {
	n := len(xs)
	prev := make([]*big.Rat, n+1)
	for i := range prev {
		prev[i] = g0
	}
	for k := 1; k <= n; k++ {
		cur := make([]*big.Rat, n-k+1)
		for i := 0; i+k <= n; i++ {
			up := new(big.Rat).Add(prev[i], delta)
			lo := new(big.Rat).Sub(prev[i+1], delta)
			cur[i] = clampRat(f(xs[i:i+k]), lo, up)
		}
		prev = cur
	}
	return prev[0]
}

// algorithm3 is the paper's Algorithm 3 (variance, g(∅) = 0) on sorted xs.
func algorithm3(xs []*big.Rat, delta *big.Rat) *big.Rat {
	n := len(xs)
	prev := make([]*big.Rat, n+1)
	for i := range prev {
		prev[i] = new(big.Rat)
	}
	for k := 1; k <= n; k++ {
		cur := make([]*big.Rat, n-k+1)
		for i := 0; i+k <= n; i++ {
			v := varianceRat(xs[i : i+k])
			for _, c := range []*big.Rat{prev[i], prev[i+1]} {
				if u := new(big.Rat).Add(c, delta); u.Cmp(v) < 0 {
					v = u
				}
			}
			cur[i] = v
		}
		prev = cur
	}
	return prev[0]
}

// medianRat is the median (average of the two middle values for even n).
func medianRat(s []*big.Rat) *big.Rat {
	k := len(s)
	if k%2 == 1 {
		return new(big.Rat).Set(s[k/2])
	}
	m := new(big.Rat).Add(s[k/2-1], s[k/2])
	return m.Quo(m, big.NewRat(2, 1))
}

// meanRat is the mean.
func meanRat(s []*big.Rat) *big.Rat {
	sum := new(big.Rat)
	for _, x := range s {
		sum.Add(sum, x)
	}
	return sum.Quo(sum, big.NewRat(int64(len(s)), 1))
}

// varianceRat is the population variance.
func varianceRat(s []*big.Rat) *big.Rat {
	mu := meanRat(s)
	sum := new(big.Rat)
	for _, x := range s {
		d := new(big.Rat).Sub(x, mu)
		sum.Add(sum, d.Mul(d, d))
	}
	return sum.Quo(sum, big.NewRat(int64(len(s)), 1))
}

// trimmedMeanRat returns the α-trimmed mean statistic (preprocess_ordered.go).
func trimmedMeanRat(alpha float64) ratStatistic {
	return func(s []*big.Rat) *big.Rat {
		t := trimCount(alpha, int64(len(s)))
		return meanRat(s[t : int64(len(s))-t])
	}
}

// minRat and maxRat are the extremes of a sorted set.
func minRat(s []*big.Rat) *big.Rat { return new(big.Rat).Set(s[0]) }
func maxRat(s []*big.Rat) *big.Rat { return new(big.Rat).Set(s[len(s)-1]) }

// rats converts float64 values (exact dyadic rationals) to big.Rat.
func rats(xs []float64) []*big.Rat {
	out := make([]*big.Rat, len(xs))
	for i, x := range xs {
		out[i] = new(big.Rat).SetFloat64(x)
	}
	return out
}

// ratFloat rounds r to the nearest float64.
func ratFloat(r *big.Rat) float64 {
	f, _ := r.Float64()
	return f
}
