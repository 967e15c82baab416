package ptr

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// RegressionRows are the n rows (x_i, y_i) of a linear model
// y = xᵀβ + φ with x ∈ ℝ^P, as the database returned them (each value
// clamped to its column's bounds, rows with a NULL dropped).
type RegressionRows struct {
	// P is the number of coefficients.
	P int
	// X holds the rows' x vectors one after the other: len n·P.
	X []float64
	// Y holds the responses: len n.
	Y []float64
}

// SimpleRegressionRows returns the rows ((1, x_i), y_i) of the model
// y = β0 + β1·x: coefficient 0 is REGR_INTERCEPT(y, x), coefficient 1 is
// REGR_SLOPE(y, x).
func SimpleRegressionRows(x, y []float64) (RegressionRows, error) {
	if len(x) != len(y) {
		return RegressionRows{}, fmt.Errorf("%w: %d x values and %d y values", mech.ErrInvalidInput, len(x), len(y))
	}
	design := make([]float64, 0, 2*len(x))
	for _, v := range x {
		design = append(design, 1, v)
	}
	return RegressionRows{P: 2, X: design, Y: y}, nil
}

// n returns the number of rows.
func (r RegressionRows) n() int { return len(r.Y) }

// row returns x_i.
func (r RegressionRows) row(i int) []float64 { return r.X[i*r.P : (i+1)*r.P] }

// validate checks r has p coefficients and finite values.
func (r RegressionRows) validate(p int) error {
	if r.P != p || len(r.X) != p*len(r.Y) {
		return fmt.Errorf("%w: rows with %d coefficients and %d x values for %d responses, need %d coefficients",
			mech.ErrInvalidInput, r.P, len(r.X), len(r.Y), p)
	}
	for _, v := range r.X {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: x value %v", mech.ErrInvalidInput, v)
		}
	}
	for _, v := range r.Y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: y value %v", mech.ErrInvalidInput, v)
		}
	}
	return nil
}

// RegressionParams are the public inputs of the PTR regressions.
type RegressionParams struct {
	// Epsilon and Delta are the (ε, δ) of the whole release, δ in (0, 0.5].
	Epsilon, Delta float64
	// Size is the public stand-in N for the private number of rows (a
	// noisy count, paid separately, or a size hint), as in Params. The
	// number of blocks is computed from it clamped to ptrMaxSize, so a
	// wild noisy count cannot size the work.
	Size float64
	// Coefficients are public bounds for each of the P coefficients: block
	// fits are clamped to them, a block without a unique fit is mapped to
	// one of their ends (even blocks the lower, odd blocks the upper), and
	// the outputs are limited to them. They should be generous but not
	// absurd: bin widths are at least 4 ulps of the largest bound
	// (ptrWidthLimits), 5·10^-10 for ±10^6.
	Coefficients []mech.Bounds
}

// validate checks p for a mechanism of the given number of steps.
func (p RegressionParams) validate(steps int) error {
	if err := ptrCheckBudget(p.Epsilon, p.Delta, p.Size, steps); err != nil {
		return err
	}
	if len(p.Coefficients) < 1 || len(p.Coefficients) > ptrMaxCoefficients {
		return fmt.Errorf("%w: %d coefficients, must be 1 to %d", mech.ErrInvalidInput, len(p.Coefficients), ptrMaxCoefficients)
	}
	for _, b := range p.Coefficients {
		if err := ptrCheckBounds(b); err != nil {
			return err
		}
	}
	return nil
}

// ptrMaxCoefficients bounds P: the block fits solve P×P systems.
const ptrMaxCoefficients = 8

// ptrBlockRows is the mean number of rows per block, in units of P.
const ptrBlockRows = 2

// ptrMaxSize bounds the public size N the block count is computed from:
// N is a noisy count, whose noise at a tiny ε reaches 10^8 and more, and
// the block step allocates and fits m = N/(2P) blocks whatever the number
// of rows. Clamping a public N to a public constant is post-processing, so
// the guarantee is unchanged; a table of more than 2^24 rows gets blocks of
// more than 2P rows on average, which only changes the blocks' sizes.
const ptrMaxSize = 1 << 24

// ptrBlockCount returns the public number of blocks
// m = ⌊min(N, ptrMaxSize)/(2P)⌋ ≥ 1.
func ptrBlockCount(size float64, p int) int {
	return int(math.Max(math.Floor(math.Min(ptrSize(size), ptrMaxSize)/float64(ptrBlockRows*p)), 1))
}

// ptrBlockFits returns, for each coefficient, the m sorted block
// estimates of the random-block step shared by R_S and R_H.
//
// Decision (the paper partitions the n rows into ⌊n/p⌋ blocks of exactly
// p by a random permutation; under add/remove one added row would shift
// every later block). Each row is assigned to one of m = ⌊N/(2P)⌋ blocks
// (N public) independently and uniformly, from a CSPRNG independent of the
// data and of the row order. A block's estimate is its least-squares fit
// (the exact solve X⁻¹Y when it holds P rows), computed on its rows in a
// canonical order (sorted by value, so it is a function of the block's
// multiset), clamped to the coefficient bounds; a block with fewer than P
// rows or a singular design is mapped to a sentinel end of the bounds
// (even blocks the lower, odd the upper: balanced, digest §3.4, reviewed:
// finite sentinels, never ±∞). For every fixed assignment, adding or
// removing one row changes one block and so exactly one element of each
// coefficient's dataset of public size m: the derived datasets are
// substitution neighbours (Section 9's condition), and S and M run on them
// with m as their public n.
//
// It stops with ctx's error when ctx ends (mech.Poll).
func ptrBlockFits(ctx context.Context, src noise.Source, rows RegressionRows, m int, coef []mech.Bounds) ([][]float64, error) {
	n, p := rows.n(), rows.P
	poll := mech.NewPoll(ctx)
	block := make([]int, n)
	start := make([]int, m+1)
	for i := range n {
		if err := poll.Tick(1); err != nil {
			return nil, err
		}
		block[i] = int(noise.Uniform(src, uint64(m)))
		start[block[i]+1]++
	}
	for b := range m {
		start[b+1] += start[b]
	}
	order := make([]int, n)
	next := slices.Clone(start[:m])
	for i, b := range block {
		order[next[b]] = i
		next[b]++
	}
	fits := make([][]float64, p)
	for d := range fits {
		fits[d] = make([]float64, m)
	}
	solver := newPTRLeastSquares(p)
	for b := range m {
		if err := poll.Tick(1); err != nil {
			return nil, err
		}
		members := order[start[b]:start[b+1]]
		slices.SortFunc(members, rows.compare)
		beta, ok := solver.fit(rows, members)
		for d := range p {
			switch {
			case ok && !math.IsNaN(beta[d]):
				fits[d][b] = coef[d].Clamp(beta[d])
			case b%2 == 0:
				fits[d][b] = coef[d].Lower
			default:
				fits[d][b] = coef[d].Upper
			}
		}
	}
	for _, f := range fits {
		slices.Sort(f)
	}
	return fits, nil
}

// compare orders rows i and j by x, then y.
func (r RegressionRows) compare(i, j int) int {
	if c := slices.Compare(r.row(i), r.row(j)); c != 0 {
		return c
	}
	return cmp.Compare(r.Y[i], r.Y[j])
}

// ptrLeastSquares solves least-squares problems with P coefficients
// through the normal equations, reusing its buffers.
type ptrLeastSquares struct {
	p    int
	a    []float64 // P rows of P+1: the normal equations, augmented
	diag []float64 // the diagonal before elimination
	beta []float64
}

// ptrSingular is the relative pivot below which a block's design counts as
// singular: a deterministic rule, so any threshold keeps the privacy
// argument.
const ptrSingular = 1e-12

// newPTRLeastSquares returns a solver for p coefficients.
func newPTRLeastSquares(p int) *ptrLeastSquares {
	return &ptrLeastSquares{p: p, a: make([]float64, p*(p+1)), diag: make([]float64, p), beta: make([]float64, p)}
}

// fit returns the least-squares coefficients of the given rows, or
// ok = false if there are fewer than P rows or the design is singular.
// The returned slice is reused by the next call.
func (s *ptrLeastSquares) fit(rows RegressionRows, members []int) (beta []float64, ok bool) {
	p, w := s.p, s.p+1
	if len(members) < p {
		return nil, false
	}
	clear(s.a)
	for _, i := range members {
		x, y := rows.row(i), rows.Y[i]
		for j := range p {
			for k := range p {
				s.a[j*w+k] += x[j] * x[k]
			}
			s.a[j*w+p] += x[j] * y
		}
	}
	for j := range p {
		s.diag[j] = s.a[j*w+j]
	}
	// Gaussian elimination with partial pivoting on the augmented matrix.
	for col := range p {
		pivot := col
		for r := col + 1; r < p; r++ {
			if math.Abs(s.a[r*w+col]) > math.Abs(s.a[pivot*w+col]) {
				pivot = r
			}
		}
		if !(math.Abs(s.a[pivot*w+col]) > ptrSingular*s.diag[col]) {
			return nil, false
		}
		for k := range w {
			s.a[col*w+k], s.a[pivot*w+k] = s.a[pivot*w+k], s.a[col*w+k]
		}
		for r := col + 1; r < p; r++ {
			f := s.a[r*w+col] / s.a[col*w+col]
			for k := col; k < w; k++ {
				s.a[r*w+k] -= f * s.a[col*w+k]
			}
		}
	}
	for j := p - 1; j >= 0; j-- {
		v := s.a[j*w+p]
		for k := j + 1; k < p; k++ {
			v -= s.a[j*w+k] * s.beta[k]
		}
		s.beta[j] = v / s.a[j*w+j]
	}
	return s.beta, true
}

// ShortcutRegression is the short-cut PTR regression R_S of Dwork and
// Lei (digest §3.4; REGR_SLOPE and REGR_INTERCEPT with SimpleRegressionRows):
// random blocks give one least-squares fit each, and the median M with its
// own scale S runs on each released coefficient's block estimates.
//
// Guarantee: (Epsilon, Delta)-DP under add/remove of one row. For a fixed
// block assignment each coefficient's dataset of public size m changes in
// one element (ptrBlockFits), so each coefficient's M is (6ε, 4δ0) under
// substitution (Theorem 12(a), with the substitution spread distance);
// over the L released coefficients Corollary 35 gives (6Lε, 4Lδ0), and
// averaging over the assignment keeps it (Example 36). Here
// ε = Epsilon/(6L) and δ0 = Delta/(4L), L = len(coordinates): releasing
// only the slope costs half of releasing both. Any ⊥ makes the release ⊥
// (the paper's rule).
//
// Data: every row (Fetch: AllRows): the blocks are drawn in the proxy from
// its CSPRNG. Time O(n·P² + n log n + m log m + K), with m ≤ ptrMaxSize/(2P)
// blocks and the stability cap K ≤ ptrMaxCap; Release stops when its
// context ends.
type ShortcutRegression struct {
	p       int
	coords  []int
	coef    []mech.Bounds
	blocks  int
	medians []ptrMedianCore
}

// NewShortcutRegression returns R_S for params, releasing the
// coefficients listed in coordinates (nil: all of them, in order).
func NewShortcutRegression(params RegressionParams, coordinates []int) (*ShortcutRegression, error) {
	p := len(params.Coefficients)
	if coordinates == nil {
		for d := range p {
			coordinates = append(coordinates, d)
		}
	}
	if len(coordinates) == 0 {
		return nil, fmt.Errorf("%w: no coefficient to release", mech.ErrInvalidInput)
	}
	if err := params.validate(6 * len(coordinates)); err != nil {
		return nil, err
	}
	for i, d := range coordinates {
		if d < 0 || d >= p || slices.Contains(coordinates[:i], d) {
			return nil, fmt.Errorf("%w: coefficient %d of %d listed twice or out of range", mech.ErrInvalidInput, d, p)
		}
	}
	steps := float64(len(coordinates))
	epsilon, delta0 := mech.EvenShare(params.Epsilon, int(6*steps)), mech.EvenShare(params.Delta, int(4*steps))
	m := ptrBlockCount(params.Size, p)
	r := &ShortcutRegression{p: p, coords: slices.Clone(coordinates), coef: slices.Clone(params.Coefficients), blocks: m}
	for _, d := range coordinates {
		core, err := newPTRBlockMedian(float64(m), params.Coefficients[d], epsilon, delta0)
		if err != nil {
			return nil, err
		}
		r.medians = append(r.medians, core)
	}
	return r, nil
}

// newPTRBlockMedian returns M with its own S for a dataset of block
// estimates of public size m under substitution.
func newPTRBlockMedian(m float64, b mech.Bounds, epsilon, delta0 float64) (ptrMedianCore, error) {
	test, err := newPTRStabilityTest(epsilon, delta0)
	if err != nil {
		return ptrMedianCore{}, err
	}
	scale, err := newPTRScaleCore(m, epsilon, delta0, true)
	if err != nil {
		return ptrMedianCore{}, err
	}
	return ptrMedianCore{size: m, bounds: b, epsilon: epsilon, test: test, scale: &scale}, nil
}

// Coordinates returns the indices of the released coefficients, in the
// order of Release's values.
func (r *ShortcutRegression) Coordinates() []int { return slices.Clone(r.coords) }

// Fetch reports that R_S reads every row.
func (r *ShortcutRegression) Fetch() Fetch { return Fetch{AllRows: true} }

// Release returns the released coefficients (value i for coefficient
// Coordinates()[i]), or refused = true for ⊥. It fails with
// ErrInvalidInput if rows do not have P coefficients or hold a non-finite
// value, and with ctx's error if ctx ends first.
func (r *ShortcutRegression) Release(ctx context.Context, src noise.Source, rows RegressionRows) (beta []float64, refused bool, err error) {
	if err := rows.validate(r.p); err != nil {
		return nil, false, err
	}
	fits, err := ptrBlockFits(ctx, src, rows, r.blocks, r.coef)
	if err != nil {
		return nil, false, err
	}
	for i, d := range r.coords {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		v, ok, err := r.medians[i].run(src, ptrSortedOrder(fits[d], r.coef[d]))
		if err != nil || !ok {
			return nil, err == nil, err
		}
		beta = append(beta, v)
	}
	return beta, false, nil
}
