package bench

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/dpproxy/dpproxy/internal/mech/histogram"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// DAWAMechanisms are the range-count mechanisms compared, ours first.
var DAWAMechanisms = []string{"dawa", "identity", "h2", "greedy-h"}

// DAWAWorkloads are the workloads of the comparison: the paper's 2,000
// uniform intervals (a fresh sample per trial) and the n prefixes.
var DAWAWorkloads = []string{"uniform-intervals", "prefix"}

// DAWAConfig is one run of the range-count comparison.
type DAWAConfig struct {
	Epsilons []float64
	// Trials per cell (the paper averages 5 workloads × 3 trials).
	Trials int
	// Intervals is the size of the uniform-intervals workload.
	Intervals int
	Seed      uint64
	Workers   int
}

// DAWACell is the accuracy of one mechanism on one dataset, workload and ε.
type DAWACell struct {
	Dataset, Workload, Mechanism string
	Epsilon                      float64
	// MeanError is the average absolute error per query, (1/m)·‖Wx − Wx̂‖₁,
	// averaged over the trials; StdErr is its standard error.
	MeanError, StdErr float64
	// Buckets is the mean number of buckets of the released synopsis.
	Buckets float64
}

// RunDAWA measures every mechanism of DAWAMechanisms on every histogram,
// workload and ε of cfg. Trials are seeded from cfg.Seed and the cell, so
// a run is reproducible whatever the number of workers.
func RunDAWA(hists []*RangeHistogram, cfg DAWAConfig) ([]DAWACell, error) {
	type job struct {
		h        *RangeHistogram
		workload string
		eps      float64
		mech     string
	}
	var jobs []job
	for _, h := range hists {
		for _, w := range DAWAWorkloads {
			for _, eps := range cfg.Epsilons {
				for _, m := range DAWAMechanisms {
					jobs = append(jobs, job{h, w, eps, m})
				}
			}
		}
	}
	cells := make([]DAWACell, len(jobs))
	errs := make([]error, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(cfg.Workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				j := jobs[i]
				cells[i], errs[i] = runDAWACell(j.h, j.workload, j.eps, j.mech, cfg)
			}
		}()
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return cells, nil
}

// runDAWACell runs the trials of one cell.
func runDAWACell(h *RangeHistogram, workload string, eps float64, name string, cfg DAWAConfig) (DAWACell, error) {
	cell := DAWACell{Dataset: h.Name, Workload: workload, Mechanism: name, Epsilon: eps}
	prefix := dawaPrefixSums(h.Counts)
	errsPerTrial := make([]float64, cfg.Trials)
	for t := range cfg.Trials {
		w, err := dawaWorkload(len(h.Counts), workload, cfg, t)
		if err != nil {
			return cell, err
		}
		src := rand.NewChaCha8(dawaSeed(cfg.Seed, h.Name, workload, name, eps, t))
		syn, err := ReleaseHistogram(name, src, h.Counts, w, eps)
		if err != nil {
			return cell, fmt.Errorf("%s on %s, ε=%g: %w", name, h.Name, eps, err)
		}
		errsPerTrial[t] = dawaWorkloadError(syn, w, prefix)
		cell.Buckets += float64(syn.Buckets()) / float64(cfg.Trials)
	}
	cell.MeanError, cell.StdErr = dawaMeanStdErr(errsPerTrial)
	return cell, nil
}

// ReleaseHistogram runs one range-count mechanism by name.
func ReleaseHistogram(name string, src noise.Source, hist []int64, w histogram.Workload, eps float64) (*histogram.Synopsis, error) {
	switch name {
	case "dawa":
		return histogram.DAWA(src, hist, w, eps, histogram.DAWAOptions{})
	case "identity":
		return histogram.Identity(src, hist, eps)
	case "h2":
		return histogram.H2(src, hist, eps)
	case "greedy-h":
		return histogram.GreedyH(src, hist, w, eps)
	}
	return nil, fmt.Errorf("unknown range-count mechanism %q", name)
}

// dawaWorkload returns trial t's workload over n bins.
func dawaWorkload(n int, kind string, cfg DAWAConfig, trial int) (histogram.Workload, error) {
	if kind == "prefix" {
		return histogram.PrefixWorkload(n)
	}
	return histogram.UniformIntervalsWorkload(n, cfg.Intervals, cfg.Seed*1000+uint64(trial))
}

// dawaWorkloadError is the average absolute error per query of the synopsis
// on w, from the true prefix sums of the histogram.
func dawaWorkloadError(syn *histogram.Synopsis, w histogram.Workload, prefix []int64) float64 {
	total := 0.0
	m := w.Len()
	for i := range m {
		r := w.At(i)
		truth := float64(prefix[r.Hi+1] - prefix[r.Lo])
		total += math.Abs(syn.RangeSum(r.Lo, r.Hi) - truth)
	}
	return total / float64(m)
}

// dawaPrefixSums returns p with p[j] = Σ_{i<j} x_i.
func dawaPrefixSums(x []int64) []int64 {
	p := make([]int64, len(x)+1)
	for j, v := range x {
		p[j+1] = p[j] + v
	}
	return p
}

// dawaSeed derives a trial's noise seed from the run's seed and the cell.
func dawaSeed(seed uint64, parts ...any) [32]byte {
	h := fnv.New64a()
	fmt.Fprint(h, seed, parts)
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], h.Sum64())
	binary.LittleEndian.PutUint64(key[8:], seed)
	return key
}

// dawaMeanStdErr returns the mean of xs and its standard error.
func dawaMeanStdErr(xs []float64) (mean, se float64) {
	for _, x := range xs {
		mean += x / float64(len(xs))
	}
	if len(xs) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1) / float64(len(xs)))
}

// DAWATiming is the time of one batch: building a synopsis from the
// histogram and answering every query of the workload from it.
type DAWATiming struct {
	Dataset   string
	N         int
	Mechanism string
	// Build and Answer are medians over the repetitions.
	Build, Answer time.Duration
	Buckets       int
}

// TimeDAWA times every mechanism on h at ε with the uniform-intervals
// workload of cfg.Intervals ranges, the median of reps repetitions.
func TimeDAWA(h *RangeHistogram, eps float64, cfg DAWAConfig, reps int) ([]DAWATiming, error) {
	w, err := histogram.UniformIntervalsWorkload(len(h.Counts), cfg.Intervals, cfg.Seed)
	if err != nil {
		return nil, err
	}
	var out []DAWATiming
	for _, name := range DAWAMechanisms {
		var builds, answers []time.Duration
		k := 0
		for r := range reps {
			src := rand.NewChaCha8(dawaSeed(cfg.Seed, "timing", h.Name, name, r))
			start := time.Now()
			syn, err := ReleaseHistogram(name, src, h.Counts, w, eps)
			if err != nil {
				return nil, err
			}
			built := time.Now()
			for i := range w.Len() {
				r := w.At(i)
				_ = syn.Answer(r.Lo, r.Hi)
			}
			builds = append(builds, built.Sub(start))
			answers = append(answers, time.Since(built))
			k = syn.Buckets()
		}
		out = append(out, DAWATiming{Dataset: h.Name, N: len(h.Counts), Mechanism: name, Build: dawaMedian(builds), Answer: dawaMedian(answers), Buckets: k})
	}
	return out, nil
}

// dawaMedian returns the median duration.
func dawaMedian(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
