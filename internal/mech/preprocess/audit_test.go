package preprocess

import (
	"math/rand/v2"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// Privacy audit of sensitivity preprocessing on the hard neighbour pairs of
// privtest.NeighbourPairs (n = 0 → 1, 1 → 2 at the bounds, ties at the
// median); see privtest.AuditPair for the false-rejection rate.

func TestAuditPreprocess(t *testing.T) {
	b := mech.Bounds{Lower: 0, Upper: 10}
	p := Params{Bounds: b, Delta: 1, Center: 5}
	vp := Params{Bounds: b, Delta: 2}
	med, _ := NewMedian(p, 1)
	mean, _ := NewMean(p, 1)
	vari, _ := NewVariance(vp, 1)
	trim, _ := NewOrdered(TrimmedMean, 0.25, p, 1)
	top, _ := NewOrdered(Maximum, 0, p, 1)
	values := map[string]func([]float64) (float64, error){
		"median":       func(x []float64) (float64, error) { return med.Value(mech.WindowOf(med.Window(), x)) },
		"mean":         func(x []float64) (float64, error) { s, idx := SummaryOf(mean.Grid(), x); return mean.Value(s, idx) },
		"variance":     func(x []float64) (float64, error) { s, idx := SummaryOf(vari.Grid(), x); return vari.Value(s, idx) },
		"trimmed mean": trim.Value,
		"maximum":      top.Value,
	}
	noise := map[string]*noise.Laplace{"median": med.noise, "mean": mean.noise, "variance": vari.noise,
		"trimmed mean": trim.noise, "maximum": top.noise}
	for _, stat := range []string{"median", "mean", "variance", "trimmed mean", "maximum"} {
		for i, pair := range privtest.NeighbourPairs {
			t.Run(stat+"/"+pair.Name, func(t *testing.T) {
				g, err := values[stat](pair.D)
				if err != nil {
					t.Fatal(err)
				}
				g2, err := values[stat](pair.D2)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("g(D) = %v, g(D') = %v", g, g2)
				l := noise[stat]
				privtest.AuditPair(t, 0xb100+uint64(i), 1,
					func(src rand.Source) float64 { return l.Release(src, g) },
					func(src rand.Source) float64 { return l.Release(src, g2) })
			})
		}
	}
}
