// Package oracle holds exact, slow reference computations that the
// mechanisms are checked against in tests: statistics of Multisets in
// rational arithmetic, the exponential-time sensitivity-preprocessing
// algorithms of Cummings and Durfee, and enumerations of Multisets and of
// the datasets within ℓ additions or removals of a dataset. Nothing here is
// used by production code.
package oracle

import (
	"math/big"
	"slices"
	"strconv"
)

// Reference implementations of sensitivity preprocessing in exact rational
// arithmetic, for tests only: the paper's generic exponential Algorithm 1
// (the oracle), Algorithm 2 (database-ordered f over windows, O(n²)) and
// Algorithm 3 (variance, O(n²)).

// Statistic is a statistic of a multiset of rationals (sorted ascending);
// it is never called on the empty set.
type Statistic func(sorted []*big.Rat) *big.Rat

// Preprocess is Algorithm 1: g over every subset of xs (bitmasks),
// with g(∅) = g0 and uniform Δ = delta. O(2^n·n) evaluations of f.
func Preprocess(xs []*big.Rat, delta, g0 *big.Rat, f Statistic) *big.Rat {
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
		g[mask] = ClampRat(f(sub), lo, up)
	}
	return g[1<<n-1]
}

// ClampRat returns v limited to [lo, hi] (a new value).
func ClampRat(v, lo, hi *big.Rat) *big.Rat {
	switch {
	case v.Cmp(hi) > 0:
		return new(big.Rat).Set(hi)
	case v.Cmp(lo) < 0:
		return new(big.Rat).Set(lo)
	}
	return new(big.Rat).Set(v)
}

// Algorithm2 is the paper's Algorithm 2 on sorted xs: windows only.
func Algorithm2(xs []*big.Rat, delta, g0 *big.Rat, f Statistic) *big.Rat {
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
			cur[i] = ClampRat(f(xs[i:i+k]), lo, up)
		}
		prev = cur
	}
	return prev[0]
}

// Algorithm3 is the paper's Algorithm 3 (variance, g(∅) = 0) on sorted xs.
func Algorithm3(xs []*big.Rat, delta *big.Rat) *big.Rat {
	n := len(xs)
	prev := make([]*big.Rat, n+1)
	for i := range prev {
		prev[i] = new(big.Rat)
	}
	for k := 1; k <= n; k++ {
		cur := make([]*big.Rat, n-k+1)
		for i := 0; i+k <= n; i++ {
			v := Variance(xs[i : i+k])
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

// Median is the median (average of the two middle values for even n).
func Median(s []*big.Rat) *big.Rat {
	k := len(s)
	if k%2 == 1 {
		return new(big.Rat).Set(s[k/2])
	}
	m := new(big.Rat).Add(s[k/2-1], s[k/2])
	return m.Quo(m, big.NewRat(2, 1))
}

// Mean is the mean.
func Mean(s []*big.Rat) *big.Rat {
	sum := new(big.Rat)
	for _, x := range s {
		sum.Add(sum, x)
	}
	return sum.Quo(sum, big.NewRat(int64(len(s)), 1))
}

// Variance is the population variance.
func Variance(s []*big.Rat) *big.Rat {
	mu := Mean(s)
	sum := new(big.Rat)
	for _, x := range s {
		d := new(big.Rat).Sub(x, mu)
		sum.Add(sum, d.Mul(d, d))
	}
	return sum.Quo(sum, big.NewRat(int64(len(s)), 1))
}

// TrimmedMean returns the α-trimmed mean statistic (preprocess_ordered.go).
func TrimmedMean(alpha float64) Statistic {
	return func(s []*big.Rat) *big.Rat {
		t := floorProduct(alpha, int64(len(s)))
		return Mean(s[t : int64(len(s))-t])
	}
}

// Min and Max are the extremes of a sorted set.
func Min(s []*big.Rat) *big.Rat { return new(big.Rat).Set(s[0]) }
func Max(s []*big.Rat) *big.Rat { return new(big.Rat).Set(s[len(s)-1]) }

// Rats converts float64 values (exact dyadic rationals) to big.Rat.
func Rats(xs []float64) []*big.Rat {
	out := make([]*big.Rat, len(xs))
	for i, x := range xs {
		out[i] = new(big.Rat).SetFloat64(x)
	}
	return out
}

// Float rounds r to the nearest float64.
func Float(r *big.Rat) float64 {
	f, _ := r.Float64()
	return f
}

// Multisets returns every sorted multiset of at most size values from
// values (ascending), including the empty one.
func Multisets(values []float64, size int) [][]float64 {
	var out [][]float64
	var grow func(prefix []float64, from int)
	grow = func(prefix []float64, from int) {
		out = append(out, slices.Clone(prefix))
		if len(prefix) == size {
			return
		}
		for i := from; i < len(values); i++ {
			grow(append(prefix, values[i]), i)
		}
	}
	grow(nil, 0)
	return out
}

// BallExtremes returns, for ℓ = 0…maxL, the largest and smallest f over
// the datasets within ℓ additions or removals of x, additions drawn from
// grid (which holds the bounds, where extremal insertions go).
func BallExtremes(x, grid []float64, maxL int, f func(sorted []float64) *big.Rat) (hi, lo []*big.Rat) {
	key := func(s []float64) string {
		b := make([]byte, 0, 8*len(s))
		for _, v := range s {
			b = strconv.AppendFloat(b, v, 'g', -1, 64)
			b = append(b, ',')
		}
		return string(b)
	}
	seen := map[string]bool{key(x): true}
	frontier := [][]float64{x}
	for l := 0; l <= maxL; l++ {
		for _, s := range frontier {
			v := f(s)
			if l == len(hi) {
				hi, lo = append(hi, v), append(lo, v)
			}
			if v.Cmp(hi[l]) > 0 {
				hi[l] = v
			}
			if v.Cmp(lo[l]) < 0 {
				lo[l] = v
			}
		}
		if l > 0 {
			if hi[l].Cmp(hi[l-1]) < 0 {
				hi[l] = hi[l-1]
			}
			if lo[l].Cmp(lo[l-1]) > 0 {
				lo[l] = lo[l-1]
			}
		}
		var next [][]float64
		visit := func(s []float64) {
			if k := key(s); !seen[k] {
				seen[k] = true
				next = append(next, s)
			}
		}
		for _, s := range frontier {
			for i := range s {
				visit(slices.Delete(slices.Clone(s), i, i+1))
			}
			for _, v := range grid {
				t := append(slices.Clone(s), v)
				slices.Sort(t)
				visit(t)
			}
		}
		frontier = next
	}
	return hi, lo
}

// Percentile is PERCENTILE_CONT(q) of sorted values, exactly; empty: empty.
func Percentile(q float64, empty float64) func([]float64) *big.Rat {
	return func(s []float64) *big.Rat {
		if len(s) == 0 {
			return new(big.Rat).SetFloat64(empty)
		}
		h := new(big.Rat).Mul(new(big.Rat).SetFloat64(q), big.NewRat(int64(len(s)-1), 1))
		k := new(big.Int).Quo(h.Num(), h.Denom()).Int64()
		frac := h.Sub(h, big.NewRat(k, 1))
		v := new(big.Rat).SetFloat64(s[k])
		if frac.Sign() == 0 {
			return v
		}
		d := new(big.Rat).Sub(new(big.Rat).SetFloat64(s[k+1]), v)
		return v.Add(v, d.Mul(d, frac))
	}
}

// floorProduct returns ⌊α·k⌋ computed exactly.
func floorProduct(alpha float64, k int64) int64 {
	p := new(big.Rat).Mul(new(big.Rat).SetFloat64(alpha), big.NewRat(k, 1))
	return new(big.Int).Quo(p.Num(), p.Denom()).Int64()
}
