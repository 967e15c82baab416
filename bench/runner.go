package bench

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/dpproxy/dpproxy/internal/mech"
)

// Candidate is a mechanism under test.
type Candidate struct {
	Name string
	// Supports reports whether the candidate estimates s.
	Supports func(s Statistic) bool
	// Prepare does the candidate's deterministic, data-dependent work once
	// (sorting, sensitivities, breakpoints) and returns a function drawing
	// one release; the distribution of releases is the mechanism's.
	Prepare func(s Statistic, d *Dataset, epsilon float64) (func(src mech.Source) (float64, error), error)
}

// Result is the accuracy of one candidate on one statistic, dataset and ε.
type Result struct {
	Statistic string
	Dataset   string
	N         int
	Epsilon   float64
	Mechanism string
	Truth     float64
	// MeanAbs and P90Abs are the mean and 90th percentile of |release - truth|.
	MeanAbs, P90Abs float64
	// Refused is the fraction of trials answered ⊥ (NaN releases).
	Refused float64
	// Time is the running time of one release including its preparation.
	Time   time.Duration
	Trials int
	Err    string
}

// Run measures every candidate on every (statistic, dataset, ε) with the
// given number of trials, seeding trial i of a configuration from seed.
func Run(stats []Statistic, data []*Dataset, epsilons []float64, cands []Candidate, trials int, seed uint64, progress func(Result)) []Result {
	var out []Result
	for _, s := range stats {
		for _, d := range data {
			truth := Truth(s, d)
			for _, eps := range epsilons {
				for _, c := range cands {
					if !c.Supports(s) {
						continue
					}
					r := measure(s, d, eps, c, truth, trials, seed)
					if progress != nil {
						progress(r)
					}
					out = append(out, r)
				}
			}
		}
	}
	return out
}

func measure(s Statistic, d *Dataset, eps float64, c Candidate, truth float64, trials int, seed uint64) Result {
	r := Result{Statistic: s.Name, Dataset: d.Name, N: len(d.Values), Epsilon: eps, Mechanism: c.Name, Truth: truth, Trials: trials}
	start := time.Now()
	release, err := c.Prepare(s, d, eps)
	prep := time.Since(start)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	errs := make([]float64, 0, trials)
	refused := 0
	var sampling time.Duration
	for i := range trials {
		src := trialSource(seed, s.Name, d.Name, c.Name, eps, i)
		t0 := time.Now()
		v, err := release(src)
		sampling += time.Since(t0)
		if err != nil {
			r.Err = fmt.Sprintf("trial %d: %v", i, err)
			return r
		}
		if math.IsNaN(v) {
			refused++
			continue
		}
		errs = append(errs, math.Abs(v-truth))
	}
	r.Refused = float64(refused) / float64(trials)
	r.Time = prep + sampling/time.Duration(trials)
	if len(errs) == 0 {
		r.MeanAbs, r.P90Abs = math.NaN(), math.NaN()
		return r
	}
	slices.Sort(errs)
	var sum float64
	for _, e := range errs {
		sum += e
	}
	r.MeanAbs = sum / float64(len(errs))
	r.P90Abs = errs[min(len(errs)-1, int(math.Ceil(0.9*float64(len(errs))))-1)]
	return r
}

// trialSource is a ChaCha8 stream determined by the configuration and the
// trial number, so every result is reproducible and candidates see
// independent noise.
func trialSource(seed uint64, parts ...any) mech.Source {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed)
	h := fnv.New64a()
	fmt.Fprint(h, parts...)
	binary.LittleEndian.PutUint64(key[8:], h.Sum64())
	return rand.NewChaCha8(key)
}
