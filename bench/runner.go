package bench

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// Result is the accuracy of one candidate on one statistic, dataset and ε
// (a cell of the tables).
type Result struct {
	Statistic string
	Dataset   string
	N         int
	Epsilon   float64
	Mechanism string
	Truth     float64
	// MeanAbs, MedianAbs and P90Abs are the mean, median and 90th
	// percentile of |release − truth| over the answered trials; StdErr is
	// the standard error of MeanAbs.
	MeanAbs, MedianAbs, P90Abs, StdErr float64
	// Expected is the analytic mean absolute error of the continuous
	// mechanism before clamping, where the mechanism provides it (piecewise,
	// inverse), else NaN.
	Expected float64
	// Refused is the fraction of trials answered ⊥ (NaN releases).
	Refused float64
	// Time is the running time of one uncached release, its share of the
	// preparation included.
	Time time.Duration
	// Trials is the number of trials run; Note says why it is below the
	// configured number (the cell's time budget ran out).
	Trials int
	Note   string
	Err    string
	// Elapsed is the wall time of the whole cell.
	Elapsed time.Duration
}

// Config is one benchmark run.
type Config struct {
	Statistics []Statistic
	Data       []*Dataset
	Epsilons   []float64
	Candidates []Candidate
	// Trials per cell; trial i of a cell draws its noise from a ChaCha8
	// stream keyed by Seed, the cell and i.
	Trials int
	Seed   uint64
	// Workers is the number of cells measured in parallel (at least 1).
	Workers int
	// CellBudget, if positive, caps the time of one cell's trials: once it
	// is spent and MinTrials trials are done the cell stops, and its Note
	// says so. Slow cells (sensitivity preprocessing on 10^7 rows) thus
	// report fewer trials instead of stalling the run.
	CellBudget time.Duration
	MinTrials  int
	// Progress, if set, is called (serially) with each finished cell.
	Progress func(Result)
}

// cell is one (statistic, dataset, ε, candidate) to measure.
type cell struct {
	index int
	stat  Statistic
	col   *Column
	eps   float64
	cand  Candidate
	truth float64
}

// Run measures every candidate on every supported statistic, dataset and
// ε, and returns the results in the order statistic, dataset, ε, candidate.
// Cells run on cfg.Workers goroutines, the largest datasets first.
func Run(cfg Config) []Result {
	var cells []cell
	cols := map[*Dataset]*Column{}
	for _, s := range cfg.Statistics {
		for _, d := range cfg.Data {
			col, ok := cols[d]
			if !ok {
				col = NewColumn(d)
				cols[d] = col
			}
			truth := Truth(s, d)
			for _, eps := range cfg.Epsilons {
				for _, c := range cfg.Candidates {
					if c.Supports(s) {
						cells = append(cells, cell{index: len(cells), stat: s, col: col, eps: eps, cand: c, truth: truth})
					}
				}
			}
		}
	}
	order := slices.Clone(cells)
	slices.SortStableFunc(order, func(a, b cell) int { return len(b.col.d.Values) - len(a.col.d.Values) })
	results := make([]Result, len(cells))
	jobs := make(chan cell)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range max(cfg.Workers, 1) {
		wg.Go(func() {
			for c := range jobs {
				r := measure(cfg, c)
				results[c.index] = r
				if cfg.Progress != nil {
					mu.Lock()
					cfg.Progress(r)
					mu.Unlock()
				}
			}
		})
	}
	for _, c := range order {
		jobs <- c
	}
	close(jobs)
	wg.Wait()
	return results
}

// measure runs the trials of one cell.
func measure(cfg Config, c cell) Result {
	d := c.col.d
	r := Result{Statistic: c.stat.Name, Dataset: d.Name, N: len(d.Values), Epsilon: c.eps, Mechanism: c.cand.Name, Truth: c.truth, Expected: math.NaN()}
	start := time.Now()
	p, err := c.cand.Prepare(c.stat, c.col, c.eps)
	prep := time.Since(start)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	if p.Expected != nil {
		if r.Expected, err = p.Expected(); err != nil {
			r.Err = err.Error()
			return r
		}
	}
	errs := make([]float64, 0, cfg.Trials)
	refused := 0
	begin := time.Now()
	for i := range cfg.Trials {
		src := trialSource(cfg.Seed, c.stat.Name, d.Name, c.cand.Name, c.eps, i)
		v, err := p.Draw(src)
		if err != nil {
			r.Err = fmt.Sprintf("trial %d: %v", i, err)
			return r
		}
		r.Trials++
		if math.IsNaN(v) {
			refused++
		} else {
			errs = append(errs, math.Abs(v-c.truth))
		}
		if cfg.CellBudget > 0 && r.Trials < cfg.Trials && r.Trials >= cfg.MinTrials && time.Since(begin) > cfg.CellBudget {
			r.Note = fmt.Sprintf("%d of %d trials (time budget %s)", r.Trials, cfg.Trials, cfg.CellBudget)
			break
		}
	}
	sampling := time.Since(begin)
	if p.Saved != nil {
		sampling += p.Saved()
	}
	r.Elapsed = time.Since(start)
	r.Time = prep + sampling/time.Duration(r.Trials)
	r.Refused = float64(refused) / float64(r.Trials)
	r.MeanAbs, r.MedianAbs, r.P90Abs, r.StdErr = errorStats(errs)
	return r
}

// errorStats returns the mean, median, 90th percentile and standard error
// of the mean of errs (NaN when empty). errs is sorted in place.
func errorStats(errs []float64) (mean, median, p90, stdErr float64) {
	if len(errs) == 0 {
		return math.NaN(), math.NaN(), math.NaN(), math.NaN()
	}
	slices.Sort(errs)
	var sum, squares kahan
	for _, e := range errs {
		sum.add(e)
	}
	n := float64(len(errs))
	mean = sum.value() / n
	for _, e := range errs {
		squares.add((e - mean) * (e - mean))
	}
	if len(errs) > 1 {
		stdErr = math.Sqrt(squares.value() / (n - 1) / n)
	}
	return mean, rank(errs, 0.5), rank(errs, 0.9), stdErr
}

// rank returns the q-quantile of sorted xs (nearest rank).
func rank(xs []float64, q float64) float64 {
	return xs[max(0, min(len(xs)-1, int(math.Ceil(q*float64(len(xs))))-1))]
}

// trialSource is a ChaCha8 stream determined by the configuration and the
// trial number, so every result is reproducible and candidates see
// independent noise.
func trialSource(seed uint64, parts ...any) noise.Source {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed)
	h := fnv.New64a()
	fmt.Fprint(h, parts...)
	binary.LittleEndian.PutUint64(key[8:], h.Sum64())
	return rand.NewChaCha8(key)
}
