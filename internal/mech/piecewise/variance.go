package piecewise

import (
	"context"
	"fmt"
	"math"
	"math/big"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/exact"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// Variance is the piecewise Laplace mechanism for the population
// variance (VAR_POP) of a column clamped to [L, U], with the add/remove
// "hybrid" breakpoints of digest §3.4. Guarantee: ε-DP under add/remove of
// one row, n private (piecewise.go). Range [0, V_max], V_max = ((U−L)/2)²;
// Var(∅) = Var of one value = 0.
//
// Lower side (exact inf over the ball). Within ℓ changes the variance is
// smallest when i ≤ ℓ values are deleted, leaving the contiguous window of
// n−i sorted values with the least sum of squared deviations (the optimal
// subset of a given size is contiguous), and the other ℓ−i changes insert
// values at that window's mean:
//
//	d_ℓ = min_{0≤i≤ℓ} SSD_min(n−i)/(n+ℓ−2i),   d_ℓ = 0 for ℓ ≥ n−1.
//
// Upper side (one-sided approximate variant, valid by the paper's §5).
// One change to a dataset z of size m ≥ 2 raises its variance by at most
// D(μ_z)²/(m−1), D(μ) = max(U−μ, μ−L) (an insertion by at most D²/(m+1),
// a deletion by at most V/(m−1) ≤ D²/(m−1)). Every dataset within ℓ−1
// changes has at least n−ℓ+1 values and a mean in [μ̲_{ℓ−1}, μ̄_{ℓ−1}], the
// exact add/remove mean breakpoints (empty set excluded), so
//
//	R_ℓ = max(U − μ̲_{ℓ−1}, μ̄_{ℓ−1} − L)²/(n−ℓ)   (V_max if n−ℓ < 1),
//	u_ℓ = min(V_max, u_{ℓ−1} + R_ℓ),
//
// satisfies V3: R_ℓ(x) ≤ R_{ℓ+1}(x') by ball inclusion (and n−ℓ = n'−ℓ−1
// after an insertion), and Var(x) ≤ Var(x') + R_1(x'). The digest measured
// the hybrid within 1–9% of the exact upper side when nε ≥ 100.
//
// Exactness (what the proof needs, and why it holds as implemented). The
// breakpoints of neighbours interleave (V3) only if they are computed from
// the exact sums of neighbouring datasets: float sums formed by the
// database leave rounding residue (Σ(v−c)² of eight rows of 0.1 is not
// 8·(0.1−c)² in float64), so a breakpoint that is exactly 0 on one dataset
// is 10^−17 on its neighbour and the ordering breaks (issue 10 measured a
// loss of 85ε). So the mechanism never sees a float sum. Each value is
// first mapped to its index on a public grid, k = ⌊(clamp(v) − L)/h + ½⌋
// with h = Grid().Unit a power of two, 0 ≤ k ≤ Grid().Top ≤ 2^30 (mech.Grid): a fixed
// per-row map, so neighbours stay neighbours and the released statistic is
// the variance of the gridded data (within h/2 per value of the real one).
// The database computes n, Σk and Σk² as exact integers (mech.Grid; the
// split sums of sqlrewrite.GridSums) and returns the K
// smallest and largest indices themselves, all from the same expression on
// one snapshot. From these integers every breakpoint is computed exactly in
// rationals (big.Rat; the float filters of exactExtreme only choose which
// candidates to evaluate exactly), in grid units, and rounded to float64
// once: d_0 to nearest, d_ℓ and every mean-breakpoint step down or up.
// These roundings are monotone maps, so the exact inequalities V3 between
// neighbours survive them. The upper recursion rounds up, with R_ℓ rounded
// up after adding one ulp of V_max, which covers the rounding of u_0 on
// both sides of Var(x) ≤ Var(x') + R_1(x'); sums rounded up are monotone in
// their terms, so V3 carries through the induction. The scaling from grid
// units to the output by h² is a power of two, exact in rationals.
//
// Fetch (DESIGN.md §5). The database computes the count and the grid sums
// over the column and returns the K smallest and K largest grid indices:
// 2K values and ten integers (sqlrewrite.GridSums), K public, never the
// column.
type Variance struct {
	bounds  mech.Bounds
	grid    mech.Grid
	depth   int64
	sampler piecewiseSampler
}

// VarianceSketch is what the database returns for Variance, all on the
// grid (exact integers).
type VarianceSketch struct {
	// Sums are n, Σk and Σk² over the grid indices k.
	Sums mech.GridSums
	// Smallest and Largest hold the min(n, Extremes()) smallest and
	// largest grid indices, each in ascending order.
	Smallest, Largest []int64
}

// NewVariance returns the mechanism for values clamped to b, with
// ε ≥ 2^−16 and smoothing ρ in squared units, in [0, V_max]
// (DefaultVarianceRho).
func NewVariance(b mech.Bounds, epsilon, rho float64) (*Variance, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	g, err := mech.NewGrid(b)
	if err != nil {
		return nil, err
	}
	h := float64(g.Top) * g.Unit / 2 // exact: Top < 2^31, Unit a power of two
	rng := mech.Bounds{Lower: 0, Upper: exact.RoundUp(h * h)}
	s, err := newPiecewiseSampler(plmKind, rng, epsilon, rho)
	if err != nil {
		return nil, err
	}
	return &Variance{bounds: b, grid: g, depth: DefaultDepth(rng, epsilon, s.rho()), sampler: s}, nil
}

// DefaultVarianceRho returns the smoothing the planner should use for the
// variance of a column clamped to b, in the variance's own squared units:
// 2^−30·((U−L)/2)², about 2^−30·V_max, for every column type. The digest's
// rule (papers/piecewise-laplace.md §2.7) is half the resolution of the
// released statistic, which for a statistic in the column's units is half
// the column's (DefaultRho: ½ on an integer column), and for an output
// without a public resolution a public constant of its range, "(b−a)·10^−9"
// (§2.7, FLOAT/DOUBLE). The variance is such an output on every column: on
// integer data its values are multiples of 1/n², n private. It also needs
// no wider smoothing: ρ serves the ties of §2.7, levels whose pieces have
// zero length, and the variance's pieces have positive length everywhere
// but at the ends of its range (d_1 < d_0 whenever Var > 0, R_ℓ > 0 until
// u_ℓ = V_max), so the constant only separates those exact ties (Var = 0,
// Var = V_max), as DefaultRho's 2^−30·(U−L) does for real columns. The
// quantile's ½, read in squared units, was no rule for the variance: it
// exceeded V_max = ¼ on a 0/1 column, which NewVariance refused, and
// added an error floor of about ρ/2 (E|M − Var| by ExpectedAbsError on
// integer columns: 0.28 against 0.087 on 10^5 tied values in [0, 100] at
// ε = 2, 0.256 against 0.012 on 10^4 in [0, 10] at ε = 1; where pieces
// are about 2ρ long it helped by up to 11%, 1.62 against 1.81 on 10^4
// tied values in [0, 100] at ε = 1; PUMS age within 1%).
func DefaultVarianceRho(b mech.Bounds) float64 {
	half := (b.Upper - b.Lower) / 2
	return half * half * 0x1p-30
}

// Grid returns the public grid the database maps values to.
func (m *Variance) Grid() mech.Grid { return m.grid }

// Epsilon returns the ε of one release.
func (m *Variance) Epsilon() float64 { return m.sampler.epsilon }

// Depth returns the tail depth K.
func (m *Variance) Depth() int64 { return m.depth }

// Extremes returns how many smallest and how many largest values to fetch.
func (m *Variance) Extremes() int64 { return m.depth }

// Breakpoints returns u_0…u_K and d_0…d_K of the variance.
func (m *Variance) Breakpoints(s VarianceSketch) (Breakpoints, error) {
	return m.breakpoints(context.Background(), s)
}

// breakpoints is Breakpoints, stopping with ctx's error when ctx ends
// (mech.Poll): with n ≥ K its work grows like K² (K up to about 5·10^6 at
// ε = 2^-16), the windows' SSDs and the mean breakpoints each taking O(ℓ)
// per level. Levels ℓ ≥ n cost O(1) each: d_ℓ = 0 (ℓ ≥ n−1) and R_ℓ =
// V_max, so once such a level reaches u_ℓ = V_max every later one is
// (V_max, 0) and is filled in without computing it (the same values: on a
// small table at a small ε the K levels were most of the time).
func (m *Variance) breakpoints(ctx context.Context, s VarianceSketch) (Breakpoints, error) {
	v, err := m.newVarianceInputs(s)
	if err != nil {
		return Breakpoints{}, err
	}
	poll := mech.NewPoll(ctx)
	k := m.depth
	vmax := m.sampler.rng.Upper
	up, down := make([]float64, k+1), make([]float64, k+1)
	up[0] = v.variance()
	down[0] = up[0]
	ssd, err := v.minWindowSSDs(poll, k-1)
	if err != nil {
		return Breakpoints{}, err
	}
	slack := new(big.Rat).SetFloat64(exact.Ulp(vmax))
	vmaxRat := v.vmax // in grid units
	for l := int64(1); l < k; l++ {
		if l >= v.n && up[l-1] == vmax {
			up[l], down[l] = vmax, 0
			continue
		}
		if err := poll.Tick(min(l, v.n)); err != nil {
			return Breakpoints{}, err
		}
		down[l] = v.lower(l, ssd)
		r := vmaxRat
		if v.n-l >= 1 {
			hi, lo := v.meanBreakpoint(l-1, true), v.meanBreakpoint(l-1, false)
			d := new(big.Rat).Sub(v.upper, lo)
			if e := new(big.Rat).Sub(hi, v.lower0); e.Cmp(d) > 0 {
				d = e
			}
			r = d.Mul(d, d)
			r.Quo(r, big.NewRat(v.n-l, 1))
		}
		step := roundRat(new(big.Rat).Add(v.scaled(r), slack), big.ToPositiveInf)
		up[l] = math.Min(vmax, roundFloatSum(up[l-1], step, big.ToPositiveInf))
	}
	up[k], down[k] = vmax, 0
	return Breakpoints{Up: up, Down: down}, nil
}

// Release draws the variance: a point of [0, V_max] on the grid. It fails
// with ctx's error if ctx ends while the breakpoints are computed.
func (m *Variance) Release(ctx context.Context, src noise.Source, s VarianceSketch) (float64, error) {
	bp, err := m.breakpoints(ctx, s)
	if err != nil {
		return 0, err
	}
	if err := bp.validate(m.sampler.rng); err != nil {
		return 0, err
	}
	return m.sampler.sample(src, bp)
}

// ExpectedAbsError returns the analytic E|M − Var| of the continuous
// mechanism (private: for benchmarks and tests).
func (m *Variance) ExpectedAbsError(s VarianceSketch) (float64, error) {
	bp, err := m.Breakpoints(s)
	if err != nil {
		return 0, err
	}
	return m.sampler.expectedAbsError(bp), nil
}

// varianceInputs holds a sketch in exact centred arithmetic, in grid
// units: values k − Top/2.
type varianceInputs struct {
	n              int64
	sum, squares   *big.Rat   // Σ(k−c), Σ(k−c)²
	lower0, upper  *big.Rat   // −Top/2, Top/2
	vmax           *big.Rat   // (Top/2)², the largest variance on the grid
	unit2          *big.Rat   // h², from grid units to the output
	bottom, top    []*big.Rat // the smallest and largest centred values, top largest first
	sb, qb, st, qt []*big.Rat // prefix sums of bottom and top, and of their squares
	// The indices themselves (uncentred), for the int128 fast path of
	// minWindowSSDs: sums and the smallest (ascending) and largest
	// (largest first) indices.
	sumK, squaresK *big.Int
	kBottom, kTop  []int64
	topK           int64 // Top
	// Float64 copies for the filters of exactExtreme.
	sumF, squaresF, lowerF, upperF float64
	sbF, qbF, stF, qtF             []float64
	ssdF                           []float64 // minWindowSSDs, rounded
}

// newVarianceInputs validates s and converts it.
func (m *Variance) newVarianceInputs(s VarianceSketch) (*varianceInputs, error) {
	n := s.Sums.Count
	need := min(n, m.depth)
	top := m.grid.Top
	if int64(len(s.Smallest)) < need || int64(len(s.Largest)) < need {
		return nil, fmt.Errorf("%w: variance sketch with n = %d needs %d smallest and largest values",
			mech.ErrWindowMismatch, n, need)
	}
	if err := s.Sums.CheckSquares(m.grid); err != nil {
		return nil, err
	}
	for _, list := range [][]int64{s.Smallest, s.Largest} {
		if err := m.grid.CheckIndices(list); err != nil {
			return nil, err
		}
	}
	c := big.NewRat(top, 2)
	centred := func(k int64) *big.Rat { return new(big.Rat).Sub(new(big.Rat).SetInt64(k), c) }
	// Σ(k−c) = S − nc, Σ(k−c)² = Q − 2cS + nc².
	nRat := new(big.Rat).SetInt64(n)
	sum := new(big.Rat).Sub(new(big.Rat).SetInt(s.Sums.Sum), new(big.Rat).Mul(c, nRat))
	squares := new(big.Rat).SetInt(s.Sums.SumSquares)
	squares.Sub(squares, new(big.Rat).Mul(new(big.Rat).SetInt64(top), new(big.Rat).SetInt(s.Sums.Sum)))
	squares.Add(squares, new(big.Rat).Mul(new(big.Rat).Mul(c, c), nRat))
	unit := new(big.Rat).SetFloat64(m.grid.Unit)
	v := &varianceInputs{
		n: n, sum: sum, squares: squares,
		lower0: new(big.Rat).Neg(c), upper: c, vmax: new(big.Rat).Mul(c, c), unit2: unit.Mul(unit, unit),
	}
	v.sumK, v.squaresK, v.topK = s.Sums.Sum, s.Sums.SumSquares, top
	for i := range need {
		v.kBottom = append(v.kBottom, s.Smallest[i])
		v.kTop = append(v.kTop, s.Largest[len(s.Largest)-1-int(i)])
		v.bottom = append(v.bottom, centred(s.Smallest[i]))
		v.top = append(v.top, centred(s.Largest[len(s.Largest)-1-int(i)]))
	}
	prefix := func(xs []*big.Rat, square bool) []*big.Rat {
		out := []*big.Rat{new(big.Rat)}
		for _, x := range xs {
			t := new(big.Rat).Set(x)
			if square {
				t.Mul(t, x)
			}
			out = append(out, t.Add(t, out[len(out)-1]))
		}
		return out
	}
	v.sb, v.qb, v.st, v.qt = prefix(v.bottom, false), prefix(v.bottom, true), prefix(v.top, false), prefix(v.top, true)
	toFloat := func(xs []*big.Rat) []float64 {
		out := make([]float64, len(xs))
		for i, x := range xs {
			out[i], _ = x.Float64()
		}
		return out
	}
	v.sumF, _ = v.sum.Float64()
	v.squaresF, _ = v.squares.Float64()
	v.lowerF, _ = v.lower0.Float64()
	v.upperF, _ = v.upper.Float64()
	v.sbF, v.qbF, v.stF, v.qtF = toFloat(v.sb), toFloat(v.qb), toFloat(v.st), toFloat(v.qt)
	return v, nil
}

// scaled returns r (grid units squared) in output units: r·h².
func (v *varianceInputs) scaled(r *big.Rat) *big.Rat { return new(big.Rat).Mul(r, v.unit2) }

// variance returns Var(x) clamped to [0, V_max], rounded to nearest.
func (v *varianceInputs) variance() float64 {
	if v.n <= 1 {
		return 0
	}
	r := v.ssd(v.sum, v.squares, v.n)
	r.Quo(r, big.NewRat(v.n, 1))
	return roundRat(v.scaled(exact.ClampRat(r, new(big.Rat), v.vmax)), big.ToNearestEven)
}

// ssd returns the sum of squared deviations Q − S²/m, at least 0.
func (v *varianceInputs) ssd(s, q *big.Rat, m int64) *big.Rat {
	r := new(big.Rat).Mul(s, s)
	r.Quo(r, big.NewRat(m, 1))
	r.Sub(q, r)
	if r.Sign() < 0 {
		r.SetInt64(0)
	}
	return r
}

// minWindowSSDs returns SSD_min(n−i) for i = 0…min(maxI, n−1): the least
// sum of squared deviations over windows of n−i consecutive sorted values.
// It takes O(i) steps for each i, and stops with poll's error.
func (v *varianceInputs) minWindowSSDs(poll *mech.Poll, maxI int64) ([]*big.Rat, error) {
	if v.n < int128Rows {
		return v.minWindowSSDsInt128(poll, maxI)
	}
	return v.minWindowSSDsRat(poll, maxI)
}

// minWindowSSDsRat is minWindowSSDs in rationals (any n).
func (v *varianceInputs) minWindowSSDsRat(poll *mech.Poll, maxI int64) ([]*big.Rat, error) {
	var out []*big.Rat
	for i := int64(0); i <= min(maxI, v.n-1); i++ {
		if err := poll.Tick(i + 1); err != nil {
			return nil, err
		}
		m := v.n - i
		window := func(j int64) (*big.Rat, *big.Rat) { // delete j smallest, i−j largest
			s := new(big.Rat).Sub(v.sum, v.sb[j])
			s.Sub(s, v.st[i-j])
			q := new(big.Rat).Sub(v.squares, v.qb[j])
			q.Sub(q, v.qt[i-j])
			return s, q
		}
		approx := func(j int64) (float64, float64) {
			// Each float input is within a relative 2^−53 of the exact
			// one; sums and the square add a few more roundings.
			sa := math.Abs(v.sumF) + math.Abs(v.sbF[j]) + math.Abs(v.stF[i-j])
			qa := v.squaresF + v.qbF[j] + v.qtF[i-j]
			sf := v.sumF - v.sbF[j] - v.stF[i-j]
			qf := v.squaresF - v.qbF[j] - v.qtF[i-j]
			val := qf - sf*sf/float64(m)
			return val, 16 * 0x1p-53 * (qa + sa*sa/float64(m))
		}
		out = append(out, exactExtreme(i+1, false, approx, func(j int64) *big.Rat {
			s, q := window(j)
			return v.ssd(s, q, m)
		}))
		f, _ := out[i].Float64()
		v.ssdF = append(v.ssdF, f)
	}
	return out, nil
}

// int128Rows bounds n for minWindowSSDsInt128: with indices below 2^31,
// Σk < 2^62 and Σk² < 2^93, so m·Σk² and (Σk)² stay below 2^125.
const int128Rows = 1 << 31

// minWindowSSDsInt128 is minWindowSSDs in exact integer arithmetic, for
// n < 2^31: the window of m = n−i values with j smallest and i−j largest
// removed has m·SSD = m·Q_w − S_w², an int128 computed exactly from the
// integer sums, so the least of them (the same m for every j) is found by
// exact comparison with no rationals; SSD_min = that least value / m, the
// same exact number the rational path returns (translation does not
// change an SSD).
func (v *varianceInputs) minWindowSSDsInt128(poll *mech.Poll, maxI int64) ([]*big.Rat, error) {
	var out []*big.Rat
	split := func(x *big.Int) exact.Int128 { // 0 ≤ x < 2^124
		hi := new(big.Int).Rsh(x, 62)
		lo := new(big.Int).Sub(x, new(big.Int).Lsh(hi, 62))
		return exact.Int(hi.Int64()).Mul64(1 << 62).Add(exact.Int(lo.Int64()))
	}
	sum, squares := v.sumK.Int64(), split(v.squaresK)
	prefix := func(ks []int64) ([]int64, []exact.Int128) {
		s, q := make([]int64, len(ks)+1), make([]exact.Int128, len(ks)+1)
		for i, k := range ks {
			s[i+1] = s[i] + k
			q[i+1] = q[i].Add(exact.Int(k).Mul64(k))
		}
		return s, q
	}
	sb, qb := prefix(v.kBottom)
	st, qt := prefix(v.kTop)
	for i := int64(0); i <= min(maxI, v.n-1); i++ {
		if err := poll.Tick(i + 1); err != nil {
			return nil, err
		}
		m := v.n - i
		var best exact.Int128
		for j := int64(0); j <= i; j++ {
			s := sum - sb[j] - st[i-j]
			q := squares.Sub(qb[j]).Sub(qt[i-j])
			mssd := q.Mul64(m).Sub(exact.Int(s).Mul64(s))
			if j == 0 || mssd.Cmp(best) < 0 {
				best = mssd
			}
		}
		r := new(big.Rat).SetFrac(best.BigInt(), big.NewInt(m))
		if r.Sign() < 0 { // cannot happen for exact sums of real indices
			r.SetInt64(0)
		}
		out = append(out, r)
		f, _ := r.Float64()
		v.ssdF = append(v.ssdF, f)
	}
	return out, nil
}

// lower returns d_ℓ rounded down.
func (v *varianceInputs) lower(l int64, ssd []*big.Rat) float64 {
	if l >= v.n-1 {
		return 0
	}
	val := func(i int64) *big.Rat { return new(big.Rat).Quo(ssd[i], big.NewRat(v.n+l-2*i, 1)) }
	approx := func(i int64) (float64, float64) {
		f := v.ssdF[i] / float64(v.n+l-2*i)
		return f, 4 * 0x1p-53 * f
	}
	return roundRat(v.scaled(exactExtreme(l+1, false, approx, val)), big.ToNegativeInf)
}

// meanBreakpoint returns μ̄_j (up) or μ̲_j exactly: the largest (smallest)
// mean over non-empty datasets within j changes, reached by deleting i
// smallest (largest) values and inserting j−i copies of U (L).
func (v *varianceInputs) meanBreakpoint(j int64, up bool) *big.Rat {
	if v.n < int128Rows {
		return v.meanBreakpointInt128(j, up)
	}
	return v.meanBreakpointRat(j, up)
}

// meanBreakpointRat is meanBreakpoint in rationals (any n).
func (v *varianceInputs) meanBreakpointRat(j int64, up bool) *big.Rat {
	end, prefix, endF, prefixF := v.lower0, v.st, v.lowerF, v.stF
	if up {
		end, prefix, endF, prefixF = v.upper, v.sb, v.upperF, v.sbF
	}
	last := min(j, v.n, (v.n+j-1)/2) // the result keeps n+j−2i ≥ 1 values
	val := func(i int64) *big.Rat {
		r := new(big.Rat).Sub(v.sum, prefix[i])
		r.Add(r, new(big.Rat).Mul(end, big.NewRat(j-i, 1)))
		return r.Quo(r, big.NewRat(v.n+j-2*i, 1))
	}
	approx := func(i int64) (float64, float64) {
		num := v.sumF - prefixF[i] + float64(j-i)*endF
		mag := math.Abs(v.sumF) + math.Abs(prefixF[i]) + float64(j-i)*math.Abs(endF)
		n := float64(v.n + j - 2*i)
		return num / n, 8 * 0x1p-53 * mag / n
	}
	return exactExtreme(last+1, up, approx, val)
}

// meanBreakpointInt128 is meanBreakpoint in exact integer arithmetic, for
// n < 2^31: each candidate mean is the fraction (Σk − prefix_i +
// (j−i)·end)/(n+j−2i) of the uncentred indices (end = Top going up, 0 going
// down), numerator below 2^62 and denominator below 2^33, so two are
// compared exactly by cross-multiplying in int128. It returns the extreme
// centred (minus Top/2), the same exact number as the rational path.
func (v *varianceInputs) meanBreakpointInt128(j int64, up bool) *big.Rat {
	ks, end := v.kTop, int64(0)
	if up {
		ks, end = v.kBottom, v.topK
	}
	last := min(j, v.n, (v.n+j-1)/2)
	sum := v.sumK.Int64()
	var bestNum, bestDen, prefix int64
	for i := int64(0); i <= last; i++ {
		if i > 0 {
			prefix += ks[i-1]
		}
		num, den := sum-prefix+(j-i)*end, v.n+j-2*i
		// num/den beats bestNum/bestDen when num·bestDen ≷ bestNum·den.
		c := exact.Int(num).Mul64(bestDen).Cmp(exact.Int(bestNum).Mul64(den))
		if i == 0 || (up && c > 0) || (!up && c < 0) {
			bestNum, bestDen = num, den
		}
	}
	r := big.NewRat(bestNum, bestDen)
	return r.Sub(r, v.upper) // centre Top/2
}

// exactExtreme returns the exact minimum (or maximum, when max is true) of
// exact(i) over i ∈ [0, count), using float approximations with absolute
// error bounds to evaluate exactly only the candidates that can be extreme.
func exactExtreme(count int64, max bool, approx func(int64) (value, err float64), exact func(int64) *big.Rat) *big.Rat {
	sign := 1.0
	if max {
		sign = -1
	}
	vals, errs := make([]float64, count), make([]float64, count)
	best := math.Inf(1) // of sign·value + err: a bound every candidate's sign·exact stays above
	for i := range count {
		vals[i], errs[i] = approx(i)
		best = math.Min(best, sign*vals[i]+errs[i])
	}
	var out *big.Rat
	for i := range count {
		if sign*vals[i]-errs[i] > best {
			continue
		}
		e := exact(i)
		if out == nil || (e.Cmp(out) < 0) != max && e.Cmp(out) != 0 {
			out = e
		}
	}
	return out
}

// roundRat rounds r to a float64 in the given mode.
func roundRat(r *big.Rat, mode big.RoundingMode) float64 {
	f, _ := new(big.Float).SetPrec(53).SetMode(mode).SetRat(r).Float64()
	return f
}

// roundFloatSum returns a + b rounded in the given mode.
func roundFloatSum(a, b float64, mode big.RoundingMode) float64 {
	x := new(big.Float).SetPrec(53).SetMode(mode).SetFloat64(a)
	f, _ := x.Add(x, new(big.Float).SetFloat64(b)).Float64()
	return f
}

// Sketch returns the sketch of values as the database computes it (for
// tests and benchmarks, which hold the data).
func (m *Variance) Sketch(values []float64) VarianceSketch {
	idx, sums := m.grid.Indices(values)
	k := min(m.depth, int64(len(idx)))
	return VarianceSketch{Sums: sums, Smallest: idx[:k], Largest: idx[int64(len(idx))-k:]}
}
