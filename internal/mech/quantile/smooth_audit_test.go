package quantile

import (
	"math/rand/v2"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// Privacy audit of the smooth-sensitivity median on privtest.NeighbourPairs.

func TestAuditSmoothMedian(t *testing.T) {
	b := mech.Bounds{Lower: 0, Upper: 10}
	m, _ := NewSmoothMedian(b, 1)
	for i, pair := range privtest.NeighbourPairs {
		t.Run(pair.Name, func(t *testing.T) {
			d, err := m.prepare(mech.WindowOf(m.Window(), pair.D))
			if err != nil {
				t.Fatal(err)
			}
			d2, err := m.prepare(mech.WindowOf(m.Window(), pair.D2))
			if err != nil {
				t.Fatal(err)
			}
			privtest.AuditPair(t, 0xb300+uint64(i), 1,
				func(src rand.Source) float64 { return d.draw(src) },
				func(src rand.Source) float64 { return d2.draw(src) })
		})
	}
}
