package histogram

import (
	"math"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// Exact privacy checks of NoisyRowCount and NoisyCells, from the law of
// the noise countNoise builds (the noise both draw, so a cut there fails
// the check): Z ~ DLap(β), P[Z = z] = (1 − r)/(1 + r)·r^|z| with
// r = exp(−1/β), and P[Z ≤ z] = r^(−z)/(1 + r) for z ≤ 0,
// 1 − r^(z+1)/(1 + r) for z > 0.

// dlapLogPMF returns ln P[Z = z] for Z ~ DLap(beta).
func dlapLogPMF(beta float64, z int64) float64 {
	r := math.Exp(-1 / beta)
	return math.Log(-math.Expm1(-1/beta)) - math.Log1p(r) - math.Abs(float64(z))/beta
}

// dlapLogCDF returns ln P[Z ≤ z] for Z ~ DLap(beta).
func dlapLogCDF(beta float64, z int64) float64 {
	r := math.Exp(-1 / beta)
	if z <= 0 {
		return float64(z)/beta - math.Log1p(r)
	}
	return math.Log1p(-math.Exp(-float64(z+1)/beta) / (1 + r))
}

// countLawWindow is how far from the centres the outputs are compared:
// beyond two of them every log-ratio repeats.
const countLawWindow = 40

// rowCountLoss returns the largest |log-ratio| of the laws of
// NoisyRowCount's output max(n + Z, 1) on n and n + 1 rows (a row added
// or removed), over n in a range that covers the clamp's atom at 1 and
// outputs around both centres.
func rowCountLoss(d *noise.DiscreteLaplace) float64 {
	beta := d.Scale()
	law := func(n, y int64) float64 {
		if y == 1 {
			return dlapLogCDF(beta, 1-n)
		}
		return dlapLogPMF(beta, y-n)
	}
	worst := 0.0
	for _, n := range []int64{0, 1, 2, 3, 7, 1000} {
		for y := int64(1); y <= n+countLawWindow; y++ {
			worst = max(worst, math.Abs(law(n, y)-law(n+1, y)))
		}
	}
	return worst
}

// cellsLoss returns the largest |log-ratio| of the laws of NoisyCells'
// output on neighbours: one cell's count c and c + 1, every other cell
// equal (its law the same on both sides).
func cellsLoss(d *noise.DiscreteLaplace) float64 {
	beta := d.Scale()
	worst := 0.0
	for _, c := range []int64{0, 5, 1000} {
		for y := c - countLawWindow; y <= c+countLawWindow; y++ {
			worst = max(worst, math.Abs(dlapLogPMF(beta, y-c)-dlapLogPMF(beta, y-c-1)))
		}
	}
	return worst
}

// noisyCountsEpsilons are the ε the checks run at: from a small
// instance's n̂ share to a large ε.
var noisyCountsEpsilons = []float64{0.001, 0.01, 0.1, 0.5, 1, 3, 8}

// noisyCountsLosses returns the exact losses of NoisyRowCount and
// NoisyCells built for epsilon.
func noisyCountsLosses(t *testing.T, epsilon float64) (rowCount, cells float64) {
	t.Helper()
	d, err := countNoise(epsilon)
	if err != nil {
		t.Fatal(err)
	}
	return rowCountLoss(d), cellsLoss(d)
}

// TestNoisyCountsExactPrivacy: NoisyRowCount and NoisyCells lose at most
// ε on neighbours, exactly.
func TestNoisyCountsExactPrivacy(t *testing.T) {
	for _, eps := range noisyCountsEpsilons {
		rowCount, cells := noisyCountsLosses(t, eps)
		if rowCount > eps*(1+1e-9) || cells > eps*(1+1e-9) {
			t.Errorf("ε = %v: exact loss %v (row count), %v (cells)", eps, rowCount, cells)
		}
		t.Logf("ε = %v: exact loss %.6g (row count), %.6g (cells)", eps, rowCount, cells)
	}
}

// TestNoisyCountsMutationFails: built for 4/3 of ε (the noise cut by
// 25%) while claiming ε, both fail the exact check.
func TestNoisyCountsMutationFails(t *testing.T) {
	for _, eps := range noisyCountsEpsilons {
		rowCount, cells := noisyCountsLosses(t, eps*4/3)
		if rowCount <= eps*(1+1e-9) || cells <= eps*(1+1e-9) {
			t.Errorf("ε = %v, noise cut 25%%: exact loss %v (row count), %v (cells) within ε, the check cannot see it", eps, rowCount, cells)
		}
	}
}

// TestNoisyCountsDrawCountNoise: NoisyRowCount and NoisyCells release
// exactly countNoise's draws (in cell order, the count clamped to 1), so
// the exact checks above are of the released law.
func TestNoisyCountsDrawCountNoise(t *testing.T) {
	const eps = 0.7
	d, err := countNoise(eps)
	if err != nil {
		t.Fatal(err)
	}
	cells := []int64{0, 3, 0, 12, 1, 0, 250}
	for seed := range uint64(50) {
		a, b := privtest.NewSource(seed, 1), privtest.NewSource(seed, 1)
		n, err := NoisyRowCount(a, int64(seed%3), eps)
		if err != nil {
			t.Fatal(err)
		}
		if want := max(d.Release(b, int64(seed%3)), 1); n != want {
			t.Fatalf("seed %d: NoisyRowCount %d, countNoise's draw %d", seed, n, want)
		}
		noisy, err := NoisyCells(a, cells, eps)
		if err != nil {
			t.Fatal(err)
		}
		for x, c := range cells {
			if want := d.Release(b, c); noisy[x] != want {
				t.Fatalf("seed %d, cell %d: NoisyCells %d, countNoise's draw %d", seed, x, noisy[x], want)
			}
		}
	}
}
