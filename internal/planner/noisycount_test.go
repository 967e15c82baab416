package planner

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestNoisyCountExactPrivacy is the exact privacy check of the noisy count
// ñ that preprocessing and PTR release before their statistic
// (releaseNoisyCount), from the law of the noise it draws: ñ = n + Z with
// Z ~ DLap(β), β the scale of that noise, P[Z = z] ∝ exp(−|z|/β), the
// same normalising constant for every n. Adding or removing a row moves n
// by 1, so the log-ratio of the laws on n and n + 1 at output y is
// (|y − n − 1| − |y − n|)/β, computed here at every y within 40 scales of
// both centres (beyond them it repeats), and must not exceed the count's
// share ε·CountShare; the share and the ε left for the statistic must add
// up to at most ε. Mutation: with the noise scale cut by 25% (from the
// scale drawn, or by ε·4/3 handed to the count's noise) the check fails.
// It is exact and seeded: no false rejections.
func TestNoisyCountExactPrivacy(t *testing.T) {
	src := rand.NewChaCha8([32]byte{7})
	worstLoss := func(beta float64, n int64) float64 {
		worst := 0.0
		span := int64(40*beta) + 2
		for y := n - span; y <= n+1+span; y++ {
			a, b := math.Abs(float64(y-n)), math.Abs(float64(y-n-1))
			worst = max(worst, math.Abs(a-b)/beta)
		}
		return worst
	}
	for _, eps := range []float64{0.001, 0.05, 0.5, 1, 3, 20, 100} {
		share := eps * CountShare
		for _, n := range []int64{0, 1, 1000} {
			count, rest, err := releaseNoisyCount(src, eps, n)
			if err != nil {
				t.Fatal(err)
			}
			if share+rest > eps*(1+1e-15) || rest < eps*(1-CountShare)*(1-1e-12) {
				t.Errorf("ε = %v: count share %v and statistic's %v do not split ε", eps, share, rest)
			}
			beta := count.Scale()
			if loss := worstLoss(beta, n); loss > share*(1+1e-9) {
				t.Errorf("ε = %v, n = %d: exact loss of the noisy count %v > its share %v", eps, n, loss, share)
			}
			if mutant := worstLoss(0.75*beta, n); !(mutant > share) {
				t.Errorf("ε = %v, n = %d: with the noise cut by 25%% the loss %v stays within %v: no power", eps, n, mutant, share)
			}
		}
	}
}
