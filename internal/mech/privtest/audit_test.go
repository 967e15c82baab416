package privtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// randomizedResponse answers the true bit (1 on D, 0 on D') with
// probability e^ε/(1+e^ε): exactly ε-DP and no better, a sharp test case.
func randomizedResponse(epsilon float64) Mechanism {
	keep := math.Exp(epsilon) / (1 + math.Exp(epsilon))
	return func(src rand.Source, neighbour int) float64 {
		truth := 1 - neighbour
		if rand.New(src).Float64() < keep {
			return float64(truth)
		}
		return float64(1 - truth)
	}
}

// leaky is (0, δ)-DP: with probability δ it returns NaN on D only.
func leaky(delta float64) Mechanism {
	return func(src rand.Source, neighbour int) float64 {
		r := rand.New(src)
		if neighbour == 0 && r.Float64() < delta {
			return math.NaN()
		}
		return r.Float64()
	}
}

// fakeReporter records what Audit reports.
type fakeReporter struct{ errors []string }

func (f *fakeReporter) Helper()                   {}
func (f *fakeReporter) Logf(string, ...any)       {}
func (f *fakeReporter) Errorf(s string, a ...any) { f.errors = append(f.errors, fmt.Sprintf(s, a...)) }

// The audits below pass a correct mechanism with probability ≥ 0.999 (the
// Bonferroni-corrected Clopper–Pearson bounds, see the package comment); with
// the fixed seeds they are deterministic. The broken mechanisms leak ln(9) ≈ 2.2
// against a claim of 1 (or δ = 0.02 against 0.005): with 10^5 samples the
// lower bound exceeds the claim by a wide margin.
func TestRun(t *testing.T) {
	seed := Seed(t, 0x5eed01)
	for _, tc := range []struct {
		name     string
		cfg      Config
		mech     Mechanism
		wantFail bool
	}{
		{name: "randomized response at its ε", cfg: Config{Epsilon: 1, Edges: []float64{0.5}}, mech: randomizedResponse(1)},
		{name: "randomized response claiming less", cfg: Config{Epsilon: 1, Edges: []float64{0.5}}, mech: randomizedResponse(math.Log(9)), wantFail: true},
		{name: "leak within δ", cfg: Config{Epsilon: 0, Delta: 0.02}, mech: leaky(0.02)},
		{name: "leak beyond δ", cfg: Config{Epsilon: 0.01, Delta: 0.005}, mech: leaky(0.02), wantFail: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Samples, cfg.Seed = 100000, seed
			res, err := Run(cfg, tc.mech)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("ε̂_lb=%.4f at %s, point %.4f, %d events", res.LowerBound, res.Event, res.PointEstimate, res.Events)
			if failed := res.LowerBound > cfg.Epsilon; failed != tc.wantFail {
				t.Errorf("audit failed: got %v, want %v (lower bound %v, claimed ε %v)", failed, tc.wantFail, res.LowerBound, cfg.Epsilon)
			}
		})
	}
}

func TestAuditReportsFailure(t *testing.T) {
	var f fakeReporter
	Audit(&f, Config{Epsilon: 1, Samples: 100000, Seed: Seed(t, 0x5eed02), Edges: []float64{0.5}}, randomizedResponse(3))
	if len(f.errors) != 1 {
		t.Errorf("errors reported: got %v, want 1", f.errors)
	}
	f = fakeReporter{}
	Audit(&f, Config{Epsilon: 1, Samples: 0}, randomizedResponse(1))
	if len(f.errors) != 1 {
		t.Errorf("errors reported for an invalid config: got %v, want 1", f.errors)
	}
}

func TestEvents(t *testing.T) {
	// Three ordered buckets: 3 single buckets, prefix [0,2), suffix [1,3),
	// "not NaN" [0,3), and NaN.
	es := events(3)
	want := []event{{lo: 0, hi: 1}, {lo: 1, hi: 2}, {lo: 2, hi: 3}, {lo: 0, hi: 2}, {lo: 1, hi: 3}, {lo: 0, hi: 3}, {nan: true}}
	if fmt.Sprint(es) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", es, want)
	}
	if got, want := (event{lo: 1, hi: 3}).describe([]float64{0, 1}), "[0, +Inf)"; got != want {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestChiSquare(t *testing.T) {
	// Hand-checked: counts 10, 20, 30 against 1/6, 1/3, 1/2 fit exactly;
	// the critical value of χ²(2) at 0.95 is 5.991.
	stat, crit, err := ChiSquare([]int{10, 20, 30}, []float64{1.0 / 6, 1.0 / 3, 0.5}, 0.05)
	if err != nil || math.Abs(stat) > 1e-12 || math.Abs(crit-5.991465) > 1e-5 {
		t.Errorf("got (%v, %v, %v), want (0, 5.991465, nil)", stat, crit, err)
	}
	// 12 vs 6 expected and 48 vs 54: (36/6 + 36/54) = 6.6667.
	stat, _, _ = ChiSquare([]int{12, 48}, []float64{0.1, 0.9}, 0.05)
	if math.Abs(stat-20.0/3) > 1e-12 {
		t.Errorf("got %v, want %v", stat, 20.0/3)
	}
	if _, _, err := ChiSquare([]int{1, 0}, []float64{0, 1}, 0.05); err == nil {
		t.Errorf("draws in a cell of probability 0: got nil error, want one")
	}
}

// spreadLeak is (0, 0.03)-DP and no better at δ < 0.03: on D' it answers a
// uniform even integer in [0, 60); on D the same with probability 0.97,
// else a uniform odd integer. Each odd bucket holds 0.001 < δ = 0.01, and
// every prefix or suffix union mixes odd and even buckets evenly, so
// subtracting δ per bucket hides the leak; the whole odd region holds 0.03.
func spreadLeak(src rand.Source, neighbour int) float64 {
	r := rand.New(src)
	if neighbour == 0 && r.Float64() < 0.03 {
		return float64(2*r.IntN(30) + 1)
	}
	return float64(2 * r.IntN(30))
}

// TestRunSeesSpreadLeak: δ bounds the total mass where the ratio is
// large, so a leak of 0.03 spread over 30 buckets of 0.001 must fail a
// claim of δ = 0.01 (without the ratio-ranked unions the lower bound is
// 0, checked by hand on the old event family), and pass a claim of 0.04.
func TestRunSeesSpreadLeak(t *testing.T) {
	for _, tc := range []struct {
		delta    float64
		wantFail bool
	}{{0.01, true}, {0.04, false}} {
		cfg := Config{Epsilon: 0.1, Delta: tc.delta, Samples: 100000, Seed: Seed(t, 0x5eed03), Edges: IntegerEdges(0, 60)}
		res, err := Run(cfg, spreadLeak)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("δ = %v: ε̂_lb=%.4f at %s", tc.delta, res.LowerBound, res.Event)
		if failed := res.LowerBound > cfg.Epsilon; failed != tc.wantFail {
			t.Errorf("δ = %v: audit failed %v, want %v (lower bound %v)", tc.delta, failed, tc.wantFail, res.LowerBound)
		}
	}
}
