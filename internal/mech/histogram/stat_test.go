package histogram

import (
	"errors"
	"math"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// stage2Runs is the number of releases of each statistical test.
const stage2Runs = 3000

// meanAndStdErr returns the sample mean of xs and its standard error.
func meanAndStdErr(xs []float64) (mean, stderr float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1) / float64(len(xs)))
}

// TestStage2UnbiasedWithPredictedError releases a fixed partition's bucket
// totals many times (stage 2 alone, with and without extra observations
// of the bucket totals like the noisy histogram's) and checks (a) every
// bin's mean estimate against the truth, (b) without extra observations,
// the mean total squared error on the workload against the prediction
// 2·trace/ε² of the matrix mechanism (the paper's Eq. 6).
//
// False rejections: each comparison is a z-test at privtest.Z6 = 4.89 standard
// errors (two-sided 10⁻⁶ under the normal approximation, which 3000
// runs of a sum of Laplace variables justify), 12 bins + 1 error per
// case and 6 cases: at most about 8·10⁻⁵ in all.
func TestStage2UnbiasedWithPredictedError(t *testing.T) {
	src := privtest.Seeded(t, 0xc1)
	hist := []int64{3, 0, 0, 7, 7, 7, 120, 1, 0, 0, 0, 44}
	n := len(hist)
	uniform, _ := UniformIntervalsWorkload(n, 30, 9)
	all, _ := AllRangesWorkload(n)
	prefix, _ := PrefixWorkload(n)
	for _, tc := range []struct {
		name     string
		starts   []int
		w        Workload
		observed bool
	}{
		{"bins, uniform intervals", identityStarts(n), uniform, false},
		{"bins, all ranges", identityStarts(n), all, false},
		{"buckets, prefix", []int{0, 1, 3, 6, 7, 8}, prefix, false},
		{"buckets, all ranges", []int{0, 3, 6, 7, 11}, all, false},
		{"buckets, all ranges, observed", []int{0, 3, 6, 7, 11}, all, true},
		{"buckets, uniform, observed", []int{0, 1, 3, 6, 7, 8}, uniform, true},
	} {
		const epsilon = 0.7
		counts, lengths := dawaBucketCounts(hist, tc.starts)
		tr := newDawaTree(len(tc.starts), 2)
		st := dawaGreedyScaling(tr, newDawaGram(tc.w, tc.starts, tr), 2)
		truth := make([]float64, n)
		for c, start := range tc.starts {
			for j := start; j < start+lengths[c]; j++ {
				truth[j] = float64(counts[c]) / float64(lengths[c])
			}
		}
		estimates := make([][]float64, n)
		var sse []float64
		for range stage2Runs {
			var obs *dawaBucketObservations
			if tc.observed {
				obs = &dawaBucketObservations{value: make([]float64, len(counts)), variance: make([]float64, len(counts))}
				lap, _ := noise.NewLaplace(1, 0.3)
				for c, x := range counts {
					obs.value[c] = lap.Release(src, float64(x))
					obs.variance[c] = 2 * lap.Scale() * lap.Scale()
				}
			}
			totals, err := dawaRelease(src, st, counts, lengths, epsilon, obs)
			if err != nil {
				t.Fatal(err)
			}
			s := newSynopsis("test", epsilon, n, tc.starts, totals)
			for j, v := range s.Estimate() {
				estimates[j] = append(estimates[j], v)
			}
			e := 0.0
			for i := range tc.w.Len() {
				r := tc.w.At(i)
				d := s.RangeSum(r.Lo, r.Hi)
				for j := r.Lo; j <= r.Hi; j++ {
					d -= truth[j]
				}
				e += d * d
			}
			sse = append(sse, e)
		}
		for j := range n {
			mean, se := meanAndStdErr(estimates[j])
			if math.Abs(mean-truth[j]) > privtest.Z6*se {
				t.Errorf("%s: bin %d mean estimate got %v ± %v, want %v", tc.name, j, mean, se, truth[j])
			}
		}
		if tc.observed {
			continue
		}
		mean, se := meanAndStdErr(sse)
		if want := 2 * st.trace / (epsilon * epsilon); math.Abs(mean-want) > privtest.Z6*se {
			t.Errorf("%s: mean squared workload error got %v ± %v, want %v", tc.name, mean, se, want)
		}
	}
}

// TestHistogramMechanismsWithLittleNoise checks every mechanism recovers
// a piecewise-constant histogram when ε is large.
func TestHistogramMechanismsWithLittleNoise(t *testing.T) {
	src := privtest.Seeded(t, 0xc2)
	hist := make([]int64, 300)
	for j := range hist {
		switch {
		case j < 100:
			hist[j] = 0
		case j < 200:
			hist[j] = 1000
		default:
			hist[j] = int64(j)
		}
	}
	w, _ := UniformIntervalsWorkload(len(hist), 50, 3)
	for _, tc := range []struct {
		name string
		run  func() (*Synopsis, error)
	}{
		{"dawa", func() (*Synopsis, error) { return DAWA(src, hist, w, 60, DAWAOptions{}) }},
		{"dawa-noise-first", func() (*Synopsis, error) { return DAWA(src, hist, w, 60, DAWAOptions{Partition: DAWANoiseFirst}) }},
		{"dawa-noisy-cost", func() (*Synopsis, error) {
			return DAWA(src, hist, w, 60, DAWAOptions{Partition: DAWANoisyCost, Offset: 1, Branching: 3})
		}},
		{"greedy-h", func() (*Synopsis, error) { return GreedyH(src, hist, w, 60) }},
		{"h2", func() (*Synopsis, error) { return H2(src, hist, 60) }},
		{"identity", func() (*Synopsis, error) { return Identity(src, hist, 60) }},
	} {
		s, err := tc.run()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		// Noise of scale ≤ 13/60 per measurement: every range within 8
		// (over 100 times the typical error; the failure probability is
		// far below 10⁻⁹).
		for i := range w.Len() {
			r := w.At(i)
			want := int64(0)
			for _, x := range hist[r.Lo : r.Hi+1] {
				want += x
			}
			if got := s.Answer(r.Lo, r.Hi); math.Abs(float64(got-want)) > 8 {
				t.Errorf("%s: range %v got %d, want %d", tc.name, r, got, want)
			}
		}
	}
}

func TestHistogramMechanismsSmallDomains(t *testing.T) {
	src := privtest.Seeded(t, 0xc3)
	for _, hist := range [][]int64{{5}, {5, 0}, {0, 0, 9}} {
		w, _ := AllRangesWorkload(len(hist))
		for _, p := range []DAWAPartition{DAWADeviationTree, DAWANoiseFirst, DAWANoisyCost} {
			s, err := DAWA(src, hist, w, 1, DAWAOptions{Partition: p})
			if err != nil || s.N() != len(hist) || s.Buckets() < 1 {
				t.Errorf("%v on %v: got (%v, %v), want a synopsis", p, hist, s, err)
			}
		}
		if _, err := GreedyH(src, hist, w, 1); err != nil {
			t.Errorf("greedy-h on %v: %v", hist, err)
		}
		if _, err := H2(src, hist, 1); err != nil {
			t.Errorf("h2 on %v: %v", hist, err)
		}
	}
}

func TestDAWARejects(t *testing.T) {
	src := privtest.Seeded(t, 0xc4)
	w, _ := PrefixWorkload(4)
	hist := []int64{1, 2, 3, 4}
	for _, tc := range []struct {
		name    string
		hist    []int64
		w       Workload
		epsilon float64
		opts    DAWAOptions
		want    error
	}{
		{"negative count", []int64{1, -2, 3, 4}, w, 1, DAWAOptions{}, mech.ErrInvalidInput},
		{"total beyond 2^53", []int64{1 << 52, 1 << 52, 1, 0}, w, 1, DAWAOptions{}, mech.ErrInvalidInput},
		{"wrong length", []int64{1, 2}, w, 1, DAWAOptions{}, mech.ErrInvalidInput},
		{"zero workload", hist, Workload{}, 1, DAWAOptions{}, ErrInvalidWorkload},
		{"NaN ε", hist, w, math.NaN(), DAWAOptions{}, mech.ErrInvalidEpsilon},
		{"ε too small to split", hist, w, 1e-7, DAWAOptions{}, mech.ErrInvalidEpsilon},
		{"rho", hist, w, 1, DAWAOptions{Rho: 1}, mech.ErrInvalidInput},
		{"branching", hist, w, 1, DAWAOptions{Branching: 1}, mech.ErrInvalidInput},
		{"offset", hist, w, 1, DAWAOptions{Offset: -1}, mech.ErrInvalidInput},
		{"max bucket", hist, w, 1, DAWAOptions{MaxBucket: 4}, mech.ErrInvalidInput},
		{"partition", hist, w, 1, DAWAOptions{Partition: 7}, mech.ErrInvalidInput},
	} {
		if _, err := DAWA(src, tc.hist, tc.w, tc.epsilon, tc.opts); !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
	if _, err := GreedyH(src, hist, w, 1e-7); !errors.Is(err, mech.ErrInvalidEpsilon) {
		t.Errorf("greedy-h with ε = 1e-7: got %v, want ErrInvalidEpsilon", err)
	}
	if _, err := H2(src, []int64{-1}, 1); !errors.Is(err, mech.ErrInvalidInput) {
		t.Errorf("h2 with a negative count: got %v, want ErrInvalidInput", err)
	}
	if _, err := Identity(src, hist, 0); !errors.Is(err, mech.ErrInvalidEpsilon) {
		t.Errorf("identity with ε = 0: got %v, want ErrInvalidEpsilon", err)
	}
}
