package laplace

import (
	"fmt"
	"math"
	"math/big"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/exact"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// Moments measured from both bounds (the planner's AVG and VARIANCE when
// n·ε is small; issue 15).
//
// Google's bounded mean releases the count with ε/2 and Σ(clamp(x) − m),
// m = (L+U)/2, with ε/2. Scaled by h = (U−L)/2, that is the pair
// (h·n, Σ(x − m)): a row adds (h, x − m), of L1 norm up to 2h = U−L, and
// each coordinate gets Laplace(2h/ε). The edge sums are the same
// information in other coordinates,
//
//	S_L = Σ(clamp(x) − L),   S_U = Σ(U − clamp(x)),
//
// (S_L + S_U = n·(U−L), S_L − S_U = 2·Σ(x − m)). A row adds
// (x − L, U − x): both ≥ 0, summing to exactly U − L, so the pair has L1
// sensitivity U − L and each coordinate gets Laplace((U−L)/ε), with all of
// ε (the vector Laplace mechanism). In the coordinates of the bounded
// mean that is noise of half the variance in every direction, independent
// between S_L and S_U where the bounded mean's are correlated. The mean
// L + (U−L)·S_L/(S_L + S_U) then errs by about
// ((1−p)·Z_L − p·Z_U)/n, p = (μ−L)/(U−L), Z ~ Laplace((U−L)/ε): mean
// absolute error 2h/(εn) for data at a bound and 1.5h/(εn) at the middle,
// where the bounded mean's is 3h/(εn) and 2h/(εn): 0.67× and 0.75×.
//
// VAR_POP likewise: a row adds
//
//	a = (x − L)²,  b = (U − x)²,  c = 2(x − L)(U − x),
//
// all ≥ 0 with a + b + c = ((x − L) + (U − x))² = (U − L)², so the three
// sums A, B, C have L1 sensitivity (U − L)² and each gets
// Laplace((U−L)²/ε). From them n = (A+B+C)/(U−L)², Σ(x − L) = (A + C/2)/(U−L)
// and Σ(x − L)² = A, so VAR_POP = A/n − (Σ(x−L)/n)². Google's bounded
// variance spends ε/3 on each of n, Σ(x − m), Σ(x − m)² (noise
// 3h²/ε on each in the units of the squares); here the dominant term A
// gets 4h²/ε with all of ε, and the count and the sum come almost free:
// about 0.55–0.6× its error for data at a bound or at the middle.
//
// Guarantee: pure ε-DP under adding or removing one row, for the
// implementation as written. The sums are exact integers: the database
// maps each clamped value to its index k ∈ [0, Top] on the public grid of
// the bounds (mech.Grid: L + k·Unit, Unit the smallest power of two ≥ 2^−30·(U−L))
// and returns n, Σk and Σk² exactly (sqlrewrite.GridSums), from which the
// coordinates follow in exact integer arithmetic: S_L = Σk,
// S_U = n·Top − Σk (a row adds k and Top − k: L1 sensitivity Top) and
// A = Σk², B = Σ(Top − k)², C = 2Σk(Top − k) (a row adds k², (Top − k)²,
// 2k(Top − k): L1 sensitivity Top²). The coordinates of neighbours then
// differ by integers d_1..d_k with Σ|d_i| ≤ Δ (k = 2 or 3). Each is
// released by noise.Laplace.ReleaseExact on its grid γ: the output is
// γ·(m_i + Z_i), m_i the integer nearest f_i/γ computed exactly, Z_i
// discrete Laplace of scale β, so the worst log-ratio of the joint law is
// Σ|m_i − m_i'|/β ≤ Σ(|d_i|/γ + 1)/β ≤ (Δ + kγ)/(γβ). The noise is built
// for the sensitivity Δ' ≥ Δ + kγ (edgeNoise checks it on the final γ),
// for which noise.Laplace guarantees β ≥ (⌊Δ'/γ⌋ + 1)/ε, so the loss is
// below ε. Below ε = 2^−30 the padding would not converge and edgeNoise
// instead gives each coordinate ε/k with sensitivity Δ (sequential
// composition). No float sum is differenced: formed from the database's
// float COUNT, SUM and sum of squares, A = ΣX² − 2LΣX + nL² loses to
// cancellation several ulps of nL², which on a column of Unix seconds
// bounded to one hour exceeds (U−L)² and made neighbours differ by many
// times the calibrated sensitivity (15ε measured). Everything after the
// release (scaling by Unit or Unit², the mean, the variance, their
// intervals) is post-processing, and the statistic is that of the values
// snapped to the grid (each moved by at most Unit/2).
//
// The construction is the standard vector Laplace mechanism applied to a
// choice of coordinates in which each row's contribution lies on a face of
// the L1 ball (the sums measured from both ends of the range); the
// observation that the bounded mean's pair does not is ours.

// edgeMinEpsilon is the smallest ε at which the coordinates share ε.
const edgeMinEpsilon = 0x1p-30

// edgeNoise returns the noise of each of k coordinates whose changes on
// neighbours sum to at most l1 in absolute value, and the ε each spends
// (see above: all of ε, or ε/k below edgeMinEpsilon).
func edgeNoise(l1 float64, k int, epsilon float64) (*noise.Laplace, error) {
	if epsilon >= edgeMinEpsilon {
		l, err := noise.NewLaplace(l1, epsilon)
		if err != nil {
			return nil, err
		}
		padded := exact.RoundUp(l1 + float64(2*k)*l.Granularity())
		l, err = noise.NewLaplace(padded, epsilon)
		if err != nil {
			return nil, err
		}
		if exact.RoundUp(l1+float64(k)*l.Granularity()) <= padded {
			return l, nil
		}
	}
	return noise.NewLaplace(l1, mech.EvenShare(epsilon, k))
}

// EdgeSums are the released S_L = Σ(clamp(x) − L) and S_U = Σ(U − clamp(x))
// of the values snapped to the grid, and Width, the distance Top·Unit
// between the bounds they are measured from.
type EdgeSums struct {
	Lower, Upper, Width float64
	noise               noise.Sum // of each of S_L and S_U
	unit                float64   // value units per unit of noise
}

// ReleaseEdgeSums releases S_L and S_U with ε from the exact sums on grid
// g (see above).
func ReleaseEdgeSums(src noise.Source, g mech.Grid, s mech.GridSums, epsilon float64) (EdgeSums, error) {
	if err := checkGridSums(g, s); err != nil {
		return EdgeSums{}, err
	}
	l, err := edgeNoise(float64(g.Top), 2, epsilon)
	if err != nil {
		return EdgeSums{}, err
	}
	upper := new(big.Int).Mul(big.NewInt(s.Count), big.NewInt(g.Top))
	upper.Sub(upper, s.Sum)
	return EdgeSums{
		Lower: g.Unit * l.ReleaseExact(src, new(big.Rat).SetInt(s.Sum)),
		Upper: g.Unit * l.ReleaseExact(src, new(big.Rat).SetInt(upper)),
		Width: float64(g.Top) * g.Unit, noise: l.Sum(), unit: g.Unit,
	}, nil
}

// checkGridSums validates the grid and its sums (a failure is a backend
// bug, never a property of the data: mech.GridSums.Check).
func checkGridSums(g mech.Grid, s mech.GridSums) error {
	if !(g.Top > 0) || !(g.Unit > 0) {
		return fmt.Errorf("%w: empty grid", mech.ErrInvalidInput)
	}
	return s.Check(g)
}

// Plus returns the sums of e and o, released on disjoint rows with the same
// bounds: the sums of the union of those rows (WITH ROLLUP's totals),
// whose noise is the sum of their independent noises, so that
// EdgeMeanEstimate gives the union's mean its interval.
func (e EdgeSums) Plus(o EdgeSums) EdgeSums {
	return EdgeSums{Lower: e.Lower + o.Lower, Upper: e.Upper + o.Upper, Width: e.Width, noise: e.noise.Plus(o.noise), unit: e.unit}
}

// edgeMean is L + w·a/(a + b) for a, b limited to ≥ 0, the middle of the
// bounds when both are 0.
func edgeMean(bd mech.Bounds, w, a, b float64) float64 {
	a, b = math.Max(a, 0), math.Max(b, 0)
	if a+b == 0 {
		return bd.Mid()
	}
	return bd.Clamp(bd.Lower + w*(a/(a+b)))
}

// Mean returns the mean derived from the edge sums: post-processing.
func (e EdgeSums) Mean(b mech.Bounds) float64 { return edgeMean(b, e.Width, e.Lower, e.Upper) }

// EdgeMeanEstimate is the mean with a conservative interval at confidence:
// each sum within its half-width at 1 − (1 − confidence)/2 (that of the
// sum of its releases' noises for sums added up by Plus), and the mean,
// increasing in S_L and decreasing in S_U, at the corners of that box.
func EdgeMeanEstimate(b mech.Bounds, e EdgeSums, confidence float64) (mech.Estimate, error) {
	if err := checkDerive(b, confidence); err != nil {
		return mech.Estimate{}, err
	}
	if e.noise.Count() == 0 {
		return mech.Estimate{}, fmt.Errorf("%w: edge sums not released by ReleaseEdgeSums", mech.ErrInvalidInput)
	}
	w := e.unit * e.noise.HalfWidth(1-(1-confidence)/2)
	return mech.Estimate{
		Value: e.Mean(b),
		Low:   edgeMean(b, e.Width, e.Lower-w, e.Upper+w), High: edgeMean(b, e.Width, e.Lower+w, e.Upper-w),
		HasInterval: true,
	}, nil
}

// EdgeSquares are the released A = Σ(x − L)², B = Σ(U − x)² and
// C = 2·Σ(x − L)(U − x) of the clamped values snapped to the grid, and
// Width, the distance Top·Unit between the bounds they are measured from.
type EdgeSquares struct {
	Lower, Upper, Cross, Width float64
	noise                      noise.Sum // of each of A, B and C
	unit                       float64   // value units² per unit of noise
}

// ReleaseEdgeSquares releases A, B and C with ε from the exact sums on
// grid g (see above).
func ReleaseEdgeSquares(src noise.Source, g mech.Grid, s mech.GridSums, epsilon float64) (EdgeSquares, error) {
	if err := checkGridSums(g, s); err != nil {
		return EdgeSquares{}, err
	}
	if err := s.CheckSquares(g); err != nil {
		return EdgeSquares{}, err
	}
	l, err := edgeNoise(squareUp(g.Top), 3, epsilon)
	if err != nil {
		return EdgeSquares{}, err
	}
	a, up, c := edgeSquaresOf(g, s)
	unit2 := g.Unit * g.Unit
	return EdgeSquares{
		Lower: unit2 * l.ReleaseExact(src, a), Upper: unit2 * l.ReleaseExact(src, up), Cross: unit2 * l.ReleaseExact(src, c),
		Width: float64(g.Top) * g.Unit, noise: l.Sum(), unit: unit2,
	}, nil
}

// squareUp returns top² rounded up to a float64.
func squareUp(top int64) float64 {
	t := big.NewInt(top)
	f, _ := new(big.Float).SetPrec(53).SetMode(big.ToPositiveInf).SetInt(t.Mul(t, t)).Float64()
	return f
}

// edgeSquaresOf returns, exactly in grid units², A = Σk², B = Σ(Top − k)²
// = n·Top² − 2·Top·Σk + Σk² and C = 2Σk(Top − k) = 2(Top·Σk − Σk²).
func edgeSquaresOf(g mech.Grid, s mech.GridSums) (a, up, c *big.Rat) {
	top := big.NewInt(g.Top)
	topSum := new(big.Int).Mul(top, s.Sum)
	b := new(big.Int).Mul(big.NewInt(s.Count), new(big.Int).Mul(top, top))
	b.Sub(b, new(big.Int).Lsh(topSum, 1))
	b.Add(b, s.SumSquares)
	cross := new(big.Int).Sub(topSum, s.SumSquares)
	cross.Lsh(cross, 1)
	return new(big.Rat).SetInt(s.SumSquares), new(big.Rat).SetInt(b), new(big.Rat).SetInt(cross)
}

// edgeMoments returns n, Σ(x − L) and Σ(x − L)² from A, B, C measured
// across width w.
func edgeMoments(w, a, up, c float64) (n, s, q float64) {
	return (a + up + c) / (w * w), (a + c/2) / w, a
}

// Variance returns the variance of kind derived from the released sums:
// VAR_POP is clamp(Q/n₁ − (S/n₁)², 0, ((U−L)/2)²), n₁ = max(n, 1), and
// VAR_SAMP that times n₂/(n₂ − 1), n₂ = max(n, 2), with n, S = Σ(x − L)
// and Q = Σ(x − L)² from A, B and C (the count comes with the squares: no
// count is released beside them). Post-processing.
func (e EdgeSquares) Variance(b mech.Bounds, kind VarianceKind) float64 {
	n, s, q := edgeMoments(e.Width, e.Lower, e.Upper, e.Cross)
	n1 := math.Max(n, 1)
	h := b.HalfRange()
	v := mech.Clamp(q/n1-(s/n1)*(s/n1), 0, h*h)
	if kind == SampleVariance {
		n2 := math.Max(n, 2)
		v *= n2 / (n2 - 1)
	}
	return v
}

// Plus returns the sums of e and o, released on disjoint rows with the same
// bounds: the squares of the union of those rows (WITH ROLLUP's totals),
// whose noise is the sum of their independent noises, so that
// EdgeVarianceEstimate gives the union's variance its interval.
func (e EdgeSquares) Plus(o EdgeSquares) EdgeSquares {
	return EdgeSquares{Lower: e.Lower + o.Lower, Upper: e.Upper + o.Upper, Cross: e.Cross + o.Cross, Width: e.Width,
		noise: e.noise.Plus(o.noise), unit: e.unit}
}

// EdgeVarianceEstimate is the variance of kind with a conservative
// interval at confidence: each of A, B, C within its half-width at
// 1 − (1 − confidence)/3 (that of the sum of its releases' noises for
// squares added up by Plus), the count, the sum and the sum of squares
// (linear in them) bounded over that box, then populationVarianceSpan,
// and for VAR_SAMP × n/(n − 1) at the ends of the count's span.
func EdgeVarianceEstimate(b mech.Bounds, kind VarianceKind, e EdgeSquares, confidence float64) (mech.Estimate, error) {
	if err := checkDerive(b, confidence); err != nil {
		return mech.Estimate{}, err
	}
	if kind != PopulationVariance && kind != SampleVariance {
		return mech.Estimate{}, fmt.Errorf("%w: variance kind %d", mech.ErrInvalidInput, kind)
	}
	if e.noise.Count() == 0 {
		return mech.Estimate{}, fmt.Errorf("%w: edge squares not released by ReleaseEdgeSquares", mech.ErrInvalidInput)
	}
	value, top := e.Variance(b, kind), varianceRange(b, kind)
	minCount := 1.0
	if kind == SampleVariance {
		minCount = 2
	}
	w := e.unit * e.noise.HalfWidth(1-(1-confidence)/3)
	nLo, sLo, qLo := edgeMoments(e.Width, e.Lower-w, e.Upper-w, e.Cross-w)
	nHi, sHi, qHi := edgeMoments(e.Width, e.Lower+w, e.Upper+w, e.Cross+w)
	n := span{math.Max(math.Ceil(nLo), minCount), math.Floor(nHi)}
	if n.hi < n.lo {
		return mech.Estimate{Value: value, Low: 0, High: top, HasInterval: true}, nil
	}
	v := populationVarianceSpan(b, n, span{sLo, sHi}, span{qLo, qHi})
	if kind == SampleVariance { // × n/(n-1), decreasing in n
		v = span{v.lo * n.hi / (n.hi - 1), v.hi * n.lo / (n.lo - 1)}
	}
	return mech.Estimate{Value: value, Low: mech.Clamp(v.lo, 0, top), High: mech.Clamp(v.hi, 0, top), HasInterval: true}, nil
}

// CheckEdgeSums and CheckEdgeSquares build, without data, the grid and
// the noise ReleaseEdgeSums and ReleaseEdgeSquares would use with b and ε:
// they fail where the releases would.
func CheckEdgeSums(b mech.Bounds, epsilon float64) error { return checkEdges(b, epsilon, false) }

func CheckEdgeSquares(b mech.Bounds, epsilon float64) error { return checkEdges(b, epsilon, true) }

func checkEdges(b mech.Bounds, epsilon float64, squares bool) error {
	g, err := mech.NewGrid(b)
	if err != nil {
		return err
	}
	if !(g.Top > 0) {
		return fmt.Errorf("%w: empty bounds", mech.ErrInvalidInput)
	}
	if !squares {
		_, err := edgeNoise(float64(g.Top), 2, epsilon)
		return err
	}
	_, err = edgeNoise(squareUp(g.Top), 3, epsilon)
	return err
}
