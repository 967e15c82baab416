package bench

import (
	"fmt"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// Timing is the measured time of one release.
type Timing struct {
	Name       string
	PerRelease time.Duration
}

// ReleaseBenchmark is one complete release of a mechanism from what the
// database returns for it (window, histogram, summary or sketch; the fetch
// itself is not timed), including every data-dependent computation:
// preprocessing computes g for a fresh noisy count each time.
type ReleaseBenchmark struct {
	Name    string
	Release func(src noise.Source) error
}

// releaseEpsilon is the ε of the timing benchmarks.
const releaseEpsilon = 1.0

// TimingSizes are the column sizes of the timing benchmarks.
var TimingSizes = []int{10_000, 1_000_000}

// ReleaseBenchmarks returns the timing benchmarks of the main mechanisms at
// ε = 1: every candidate on the median, mean and variance of a normal
// column of each size in TimingSizes, and preprocessing's slow case, a
// uniform column spanning its bounds (its mean and variance then need the
// sorted rows).
func ReleaseBenchmarks() ([]ReleaseBenchmark, error) {
	var out []ReleaseBenchmark
	cands := Candidates()
	for _, n := range TimingSizes {
		d, err := Synthetic("normal", n, 1)
		if err != nil {
			return nil, err
		}
		c := NewColumn(d)
		for _, s := range []Statistic{Statistics[0], Statistics[3], Statistics[4]} {
			for _, cand := range cands {
				if !cand.Supports(s) {
					continue
				}
				b, err := releaseBenchmark(cand, s, c)
				if err != nil {
					return nil, err
				}
				out = append(out, b)
			}
		}
		u, err := Synthetic("uniform", n, 1)
		if err != nil {
			return nil, err
		}
		// Bounds the data touch: the preprocessing aggregates cannot settle g.
		u.Lower, u.Upper = u.Values[0], u.Values[len(u.Values)-1]
		u.Name += " (bounds = data range)"
		for _, s := range []Statistic{Statistics[3], Statistics[4]} {
			b, err := releaseBenchmark(preprocessCandidate(), s, NewColumn(u))
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		}
	}
	return out, nil
}

// releaseBenchmark times cand on s over c. Preprocessing is timed uncached
// (preprocess for the true n, plus its noise); every other candidate through
// its Prepared, whose Draw is one full release.
func releaseBenchmark(cand Candidate, s Statistic, c *Column) (ReleaseBenchmark, error) {
	name := fmt.Sprintf("%s/%s/%s", s.Name, cand.Name, c.d.Name)
	if cand.NeedsCount {
		return ReleaseBenchmark{Name: name, Release: func(src noise.Source) error {
			nTilde, err := noisyCount(src, c.d, releaseEpsilon)
			if err != nil {
				return err
			}
			p, err := runPreprocess(s, c, statisticEpsilon(releaseEpsilon), nTilde)
			if err != nil {
				return err
			}
			p.noise.Release(src, p.g)
			return nil
		}}, nil
	}
	p, err := cand.Prepare(s, c, releaseEpsilon)
	if err != nil {
		return ReleaseBenchmark{}, err
	}
	return ReleaseBenchmark{Name: name, Release: func(src noise.Source) error {
		_, err := p.Draw(src)
		return err
	}}, nil
}

// MeasureReleaseTimes runs every ReleaseBenchmark with testing.Benchmark
// and reports each result to progress (if set) as it comes.
func MeasureReleaseTimes(progress func(Timing)) ([]Timing, error) {
	bs, err := ReleaseBenchmarks()
	if err != nil {
		return nil, err
	}
	var out []Timing
	for _, b := range bs {
		var failed error
		res := testing.Benchmark(func(tb *testing.B) {
			src := trialSource(1, "timing", b.Name)
			for tb.Loop() {
				if err := b.Release(src); err != nil {
					failed = err
					tb.FailNow()
				}
			}
		})
		if failed != nil {
			return nil, fmt.Errorf("%s: %w", b.Name, failed)
		}
		t := Timing{Name: b.Name, PerRelease: time.Duration(res.NsPerOp())}
		if progress != nil {
			progress(t)
		}
		out = append(out, t)
	}
	return out, nil
}
