package bench

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/ptr"
)

// ptrTestData returns the shared data directory, or "" (PUMS skipped)
// when it is not there.
func ptrTestData(t *testing.T) string {
	dir := filepath.Join("..", "..", "shared", "data")
	if _, err := os.Stat(filepath.Join(dir, "pums", "PUMS.csv")); err != nil {
		t.Logf("no PUMS data (%v): PUMS cells skipped", err)
		return ""
	}
	return dir
}

// ptrTestSeed returns the seed of the miniature runs: 1, or
// DPPROXY_TEST_SEED.
func ptrTestSeed(t *testing.T) uint64 {
	seed := uint64(1)
	if s := os.Getenv("DPPROXY_TEST_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 0, 64)
		if err != nil {
			t.Fatalf("DPPROXY_TEST_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("seed %d (override with DPPROXY_TEST_SEED)", seed)
	return seed
}

// TestRunPTRMiniature runs a miniature benchmark twice (one and two
// workers) and checks its shape, its reproducibility and its report.
//
// One statistical check: on the normal column at n = 10^5 and ε = 5 the
// PTR median must answer in every trial. Both of its distances are then
// far above the test's cap (mech's TestPTRMedianGaussianRate derives
// ⊥ < 10⁻⁸ per run at the smaller per-step ε of 0.5; here it is 0.75), so
// the check fails by chance with probability below 10·10⁻⁸ = 10⁻⁷.
func TestRunPTRMiniature(t *testing.T) {
	start := time.Now()
	cfg := PTRConfig{
		Data: ptrTestData(t), Sizes: []int{1000, 100000}, Epsilons: []float64{5}, Delta: 1e-6,
		ColumnTrials: 10, RegressionTrials: 2, Seed: ptrTestSeed(t), Workers: 1,
	}
	one, err := RunPTR(cfg)
	if err != nil {
		t.Fatal(err)
	}
	datasets := len(ptrColumnKinds) * len(cfg.Sizes)
	pairs := 0
	if cfg.Data != "" {
		datasets, pairs = datasets+2, 1
	}
	if got, want := len(one.Columns), datasets*len(ptrColumnStatistics); got != want {
		t.Errorf("column cells: got %d, want %d", got, want)
	}
	if got, want := len(one.Regression), len(ptrNoiseKinds)*len(cfg.Sizes)+pairs; got != want {
		t.Errorf("regression cells: got %d, want %d", got, want)
	}
	for _, c := range one.Columns {
		if c.PTR.Trials != cfg.ColumnTrials || c.Baseline.Refused != 0 || math.IsNaN(c.Baseline.Mean) {
			t.Errorf("%s %s: got PTR %+v, baseline %+v, want %d trials and a baseline answer in each", c.Dataset, c.Statistic, c.PTR, c.Baseline, cfg.ColumnTrials)
		}
	}
	if c, ok := one.column("normal-n100000", "median", 5); !ok || c.PTR.Refused != 0 || math.IsNaN(c.PTR.Mean) || math.IsInf(c.PTR.Mean, 0) {
		t.Errorf("PTR median, normal, n = 10^5, ε = 5: got %+v, want no ⊥ and a finite error", c.PTR)
	}
	cfg.Workers = 2
	two, err := RunPTR(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, b := ptrComparable(one), ptrComparable(two)
	for i := range max(len(a), len(b)) {
		if i >= len(a) || i >= len(b) || a[i] != b[i] {
			t.Fatalf("not reproducible across worker counts, cell %d: got %v, then %v", i, a[i:], b[i:])
		}
	}
	var buf bytes.Buffer
	if err := WritePTRReport(&buf, "go run ./bench/cmd/ptr", one, time.Second); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Regenerate with `go run ./bench/cmd/ptr`", "## Findings", "| PTR median | 5 | ⊥ ", "| R_S slope | 5 |",
		"### median: PTR against exponential", "### trimmed mean: PTR against Laplace mean", "### IQR: PTR against exponential quartiles",
		"| gaussian | 100000 | R_S | 5 | 2 |",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	t.Logf("two miniature runs in %v", time.Since(start))
}

// ptrComparable returns r's cells printed without the timings, which vary
// between runs (printed, so that NaN equals NaN).
func ptrComparable(r *PTRResults) []string {
	var out []string
	for _, c := range r.Columns {
		out = append(out, fmt.Sprintf("%+v", c))
	}
	for _, c := range r.Regression {
		c.Seconds = 0
		out = append(out, fmt.Sprintf("%+v", c))
	}
	return out
}

// TestRunPTRHampel runs R_H once where it is cheap (n = 1000, where it
// answers ⊥ at ε = 1) to exercise its path and the report's R_H rows.
func TestRunPTRHampel(t *testing.T) {
	cfg := PTRConfig{
		Sizes: []int{1000}, Epsilons: []float64{1}, Delta: 1e-6, ColumnTrials: 1, RegressionTrials: 1,
		HampelEpsilons: []float64{1}, HampelTrials: 1, Seed: ptrTestSeed(t), Workers: 2,
	}
	r, err := RunPTR(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := r.regression("gaussian", 1000, "R_H", 1)
	if !ok || c.Slope.Trials != 1 || c.Slope.Refused != c.Intercept.Refused {
		t.Errorf("R_H cell: got %+v (found %v), want one trial with both coefficients answered or ⊥ together", c, ok)
	}
}

func TestPTRTrimmedMeanTruth(t *testing.T) {
	// 1 … 20 with α = 0.1: lo = ⌈1⌉ = 1, hi = ⌊19⌋ = 19, mean of ranks
	// 2 … 18 = 10.
	values := make([]float64, 20)
	for i := range values {
		values[i] = float64(i + 1)
	}
	c := newPTRColumn(&Dataset{Name: "ramp", Values: values, Lower: 0, Upper: 100})
	if got, want := c.trimmedMean(0.1), 10.0; got != want {
		t.Errorf("trimmed mean: got %v, want %v", got, want)
	}
	// The fetch of the trimmed mean: windows around ranks 1 and 19 and
	// the sum of the ranks strictly between them.
	m, err := ptr.NewTrimmedMean(ptr.Params{Epsilon: 1, Delta: 1e-6, Size: 1e5, Bounds: mech.Bounds{Lower: 0, Upper: 100}}, 0.1, 0)
	if err != nil {
		t.Fatal(err)
	}
	big := make([]float64, 1000)
	for i := range big {
		big[i] = float64(i+1) / 10
	}
	d := newPTRColumn(&Dataset{Name: "big", Values: big, Lower: 0, Upper: 100}).fetch(m.Fetch())
	first, last := d.Windows[0].Ranks().Last+1, d.Windows[1].Ranks().First-1
	var want int64
	for r := first; r <= last; r++ {
		want += m.Fetch().Grid.Index(big[r-1])
	}
	if d.SumBetween == nil || !d.SumBetween.IsInt64() || d.SumBetween.Int64() != want {
		t.Errorf("grid sum between ranks %d and %d: got %v, want %v", first, last, d.SumBetween, want)
	}
}

func TestPTRSummarize(t *testing.T) {
	var outcomes []ptrOutcome
	for i := 1; i <= 10; i++ {
		outcomes = append(outcomes, ptrOutcome{err: float64(11 - i)})
	}
	outcomes = append(outcomes, ptrOutcome{refused: true}, ptrOutcome{refused: true})
	got := ptrSummarize(outcomes)
	if want := (PTRErrors{Trials: 12, Refused: 2, Mean: 5.5, P90: 9}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got, want := ptrSummarize([]ptrOutcome{{refused: true}}).RefusalRate(), 1.0; got != want {
		t.Errorf("all ⊥: got rate %v, want %v", got, want)
	}
}

func TestPTRCoefficientBounds(t *testing.T) {
	// PUMS income [0, 500000] against age [0, 100]: slope ±50000, the
	// intercept within [0, 500000] widened by 50000·100.
	got := ptrCoefficientBounds(&ptrPair{xLower: 0, xUpper: 100, yLower: 0, yUpper: 500000})
	want := []mech.Bounds{{Lower: -5e6, Upper: 5.5e6}, {Lower: -5e4, Upper: 5e4}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
