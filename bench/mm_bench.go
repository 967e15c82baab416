package bench

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/mm"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// The benchmark of the median mechanism against its baselines (digest §9),
// for bench/: at the same total ε and target α, how many online counting
// queries does each mechanism answer within α? It uses seeded noise and is
// never part of the proxy's query path.

// MMQueryGenerator draws the next query of a benchmark workload.
type MMQueryGenerator func(r *rand.Rand) mm.Predicate

// MMRangeQueries returns the workload of random ranges [a, b] over an
// ordered domain of cells cells (a ≤ b from two uniform endpoints).
func MMRangeQueries(cells int) MMQueryGenerator {
	return func(r *rand.Rand) mm.Predicate {
		a, b := r.IntN(cells), r.IntN(cells)
		return mm.MmRangePredicate(cells, min(a, b), max(a, b))
	}
}

// MMConjunctionQueries returns the workload of random conjunctions over a
// product domain with the given column sizes (cell index in mixed radix,
// the first column most significant): each query constrains 2 or 3
// distinct columns (at most len(dims)), each by a random range of its
// values or, with probability ½, a random non-empty IN-list (each value
// kept with probability ½).
func MMConjunctionQueries(dims []int) MMQueryGenerator {
	dims = slices.Clone(dims)
	cells := 1
	for _, d := range dims {
		cells *= d
	}
	return func(r *rand.Rand) mm.Predicate {
		allowed := make([][]bool, len(dims))
		for c, d := range dims {
			allowed[c] = slices.Repeat([]bool{true}, d)
		}
		k := min(2+r.IntN(2), len(dims))
		for _, c := range r.Perm(len(dims))[:k] {
			allowed[c] = mmRandomCondition(r, dims[c])
		}
		var members []int
		for x := range cells {
			in, rest := true, x
			for c := len(dims) - 1; c >= 0 && in; c-- {
				in = allowed[c][rest%dims[c]]
				rest /= dims[c]
			}
			if in {
				members = append(members, x)
			}
		}
		p, _ := mm.NewPredicate(cells, members) // members are in range by construction
		return p
	}
}

// mmRandomCondition returns the values of a column of d values one random
// condition allows: a range or a non-empty IN-list.
func mmRandomCondition(r *rand.Rand, d int) []bool {
	ok := make([]bool, d)
	if r.IntN(2) == 0 {
		a, b := r.IntN(d), r.IntN(d)
		for v := min(a, b); v <= max(a, b); v++ {
			ok[v] = true
		}
		return ok
	}
	for !slices.Contains(ok, true) {
		for v := range ok {
			ok[v] = r.IntN(2) == 0
		}
	}
	return ok
}

// MMMixtureHistogram returns a histogram of n rows drawn i.i.d. over the
// product domain dims (mixed radix as in MMConjunctionQueries) from the
// digest's §9.2 mixture: cell probability ∝ 0.6·Π_c g(u_c; a_c, s_c) +
// 0.4·Π_c g(u_c; b_c, t_c) + 0.02 with u_c = index/d_c and
// g(u; m, s) = exp(−(u−m)²/s). The first two columns use the digest's
// centres and widths (Synth-1D, Synth-2D); further ones alternate them.
// The same seed gives the same histogram.
func MMMixtureHistogram(dims []int, n int64, seed uint64) []int64 {
	centres := [2][]float64{{0.3, 0.4}, {0.75, 0.7}}
	widths := [2][]float64{{0.02, 0.04}, {0.01, 0.02}}
	cells := 1
	for _, d := range dims {
		cells *= d
	}
	cumulative := make([]float64, cells)
	total := 0.0
	for x := range cells {
		g := [2]float64{0.6, 0.4}
		rest := x
		for c := len(dims) - 1; c >= 0; c-- {
			u := float64(rest%dims[c]) / float64(dims[c])
			rest /= dims[c]
			for k := range g {
				m, s := centres[k][c%2], widths[k][c%2]
				g[k] *= math.Exp(-(u - m) * (u - m) / s)
			}
		}
		total += g[0] + g[1] + 0.02
		cumulative[x] = total
	}
	r := rand.New(mmStream(seed, 0))
	hist := make([]int64, cells)
	for range n {
		u := r.Float64() * total
		x, _ := slices.BinarySearchFunc(cumulative, u, func(c, u float64) int {
			if c <= u {
				return -1
			}
			return 1
		})
		hist[min(x, cells-1)]++
	}
	return hist
}

// mmStream returns a ChaCha8 stream keyed by seed and stream number.
func mmStream(seed, stream uint64) *rand.ChaCha8 {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[0:], seed)
	binary.LittleEndian.PutUint64(key[8:], stream)
	return rand.NewChaCha8(key)
}

// MMBenchConfig configures MMBenchmark.
type MMBenchConfig struct {
	// Epsilon is each arm's total budget; Alpha the target accuracy as a
	// fraction of the true row count n.
	Epsilon, Alpha float64
	// Queries is the workload's length k (Laplace splits ε over it).
	Queries int
	// Seed keys the workload and every arm's noise.
	Seed uint64
	// MM tunes the median mechanism; its Epsilon and Alpha are set from
	// the fields above.
	MM mm.Config
}

// MMBenchArm is one mechanism's outcome on the workload. An answer is
// within α when |answer − true count| ≤ α·n.
type MMBenchArm struct {
	// Answered counts the queries answered before a refusal (or all).
	Answered int
	// WithinAlpha counts the answers within α.
	WithinAlpha int
	// FirstBad is the 1-based index of the first answer not within α, 0 if none.
	FirstBad int
	// MaxError is the largest |answer − true count|/n.
	MaxError float64
	// Hard counts the hard queries and Repairs the cuts the pool had to
	// widen (median mechanism only).
	Hard, Repairs int
	// Seconds is the wall time of the arm.
	Seconds float64
}

// Streak returns the digest's headline K(α): the number of queries
// answered, all within α, before the first miss or refusal.
func (a MMBenchArm) Streak() int {
	if a.FirstBad > 0 {
		return a.FirstBad - 1
	}
	return a.Answered
}

// MMBenchResult compares the three arms on one histogram and workload.
type MMBenchResult struct {
	Rows           int64
	Cells, Queries int
	// MM is the median mechanism; Laplace answers each query with
	// DLap(k/ε); Histogram answers every query from one histogram noised
	// with DLap(1/ε) per cell.
	MM, Laplace, Histogram MMBenchArm
	// MMPlan is the median mechanism's plan; MMInfeasible reports that it
	// had too few rows to plan one hard query (then it answers nothing).
	MMPlan       mm.Plan
	MMInfeasible bool
	// LaplaceGuaranteed is k_L = max{k : (k/(nε))·ln(k/β) ≤ α} at β = 0.05:
	// how many queries independent Laplace answers all within α with
	// probability 0.95.
	LaplaceGuaranteed int
}

// MMBenchmark runs the workload of cfg.Queries queries drawn online from
// queries against the histogram hist with each arm.
func MMBenchmark(hist []int64, queries MMQueryGenerator, cfg MMBenchConfig) (MMBenchResult, error) {
	if err := mm.MmCheckCells(len(hist)); err != nil {
		return MMBenchResult{}, err
	}
	if cfg.Queries < 1 || !(cfg.Alpha > 0) {
		return MMBenchResult{}, fmt.Errorf("%w: %d queries at alpha %v", mech.ErrInvalidInput, cfg.Queries, cfg.Alpha)
	}
	var n int64
	for _, h := range hist {
		if h < 0 {
			return MMBenchResult{}, fmt.Errorf("%w: negative cell count %d", mech.ErrInvalidInput, h)
		}
		n += h
	}
	work := rand.New(mmStream(cfg.Seed, 1))
	preds := make([]mm.Predicate, cfg.Queries)
	truth := make([]int64, cfg.Queries)
	for i := range preds {
		preds[i] = queries(work)
		if preds[i].Cells() != len(hist) {
			return MMBenchResult{}, fmt.Errorf("%w: query over %d cells for %d", mech.ErrInvalidInput, preds[i].Cells(), len(hist))
		}
		truth[i] = preds[i].Count(hist)
	}
	res := MMBenchResult{Rows: n, Cells: len(hist), Queries: cfg.Queries,
		LaplaceGuaranteed: mmLaplaceCapacity(n, cfg.Epsilon, cfg.Alpha, 0.05)}
	score := func(arm *MMBenchArm, i int, answer int64) {
		arm.Answered++
		e := math.Abs(float64(answer-truth[i])) / float64(max(n, 1))
		arm.MaxError = max(arm.MaxError, e)
		if e <= cfg.Alpha {
			arm.WithinAlpha++
		} else if arm.FirstBad == 0 {
			arm.FirstBad = i + 1
		}
	}
	var err error
	if res.Laplace, err = mmBenchLaplace(mmStream(cfg.Seed, 2), truth, cfg.Epsilon, score); err != nil {
		return res, err
	}
	if res.Histogram, err = mmBenchHistogram(mmStream(cfg.Seed, 3), hist, preds, cfg.Epsilon, score); err != nil {
		return res, err
	}
	mmCfg := cfg.MM
	mmCfg.Epsilon, mmCfg.Alpha = cfg.Epsilon, cfg.Alpha
	start := time.Now()
	src := mmStream(cfg.Seed, 4)
	m, err := mm.NewMedianMechanism(src, len(hist), n, mmCfg)
	if errors.Is(err, mm.ErrInfeasible) {
		res.MMInfeasible = true
		return res, nil
	}
	if err != nil {
		return res, err
	}
	res.MMPlan = m.Plan()
	for i, p := range preds {
		a, err := m.Answer(src, p, func() (int64, error) { return truth[i], nil }, nil)
		if errors.Is(err, mm.ErrHardQueryCapReached) {
			break
		}
		if err != nil {
			return res, err
		}
		score(&res.MM, i, a.Count)
	}
	res.MM.Hard, res.MM.Repairs = m.HardUsed(), m.PoolRepairs()
	res.MM.Seconds = time.Since(start).Seconds()
	return res, nil
}

// mmBenchLaplace answers every query with its own DLap(k/ε) noise.
func mmBenchLaplace(src noise.Source, truth []int64, epsilon float64, score func(*MMBenchArm, int, int64)) (MMBenchArm, error) {
	var arm MMBenchArm
	start := time.Now()
	d, err := noise.NewDiscreteLaplace(1, epsilon/float64(len(truth)))
	if err != nil {
		return arm, err
	}
	for i, c := range truth {
		score(&arm, i, d.Release(src, c))
	}
	arm.Seconds = time.Since(start).Seconds()
	return arm, nil
}

// mmBenchHistogram answers every query from one noisy histogram: each cell
// plus DLap(1/ε) (L1 sensitivity 1 under add/remove).
func mmBenchHistogram(src noise.Source, hist []int64, preds []mm.Predicate, epsilon float64, score func(*MMBenchArm, int, int64)) (MMBenchArm, error) {
	var arm MMBenchArm
	start := time.Now()
	d, err := noise.NewDiscreteLaplace(1, epsilon)
	if err != nil {
		return arm, err
	}
	noisy := make([]int64, len(hist))
	for x, h := range hist {
		noisy[x] = d.Release(src, h)
	}
	for i, p := range preds {
		score(&arm, i, p.Count(noisy))
	}
	arm.Seconds = time.Since(start).Seconds()
	return arm, nil
}

// mmLaplaceCapacity returns k_L = max{k : (k/(nε))·ln(k/β) ≤ α}, 0 if even
// k = 1 fails (the left side increases in k once k ≥ β·e, so bisect).
func mmLaplaceCapacity(n int64, epsilon, alpha, beta float64) int {
	fits := func(k int) bool {
		return float64(k)/(float64(n)*epsilon)*math.Log(float64(k)/beta) <= alpha
	}
	if !fits(1) {
		return 0
	}
	lo, hi := 1, 2
	for fits(hi) {
		lo, hi = hi, 2*hi
	}
	for hi-lo > 1 {
		if mid := lo + (hi-lo)/2; fits(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}
