package planner

import (
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/mech/mm"
)

// TestChooseHistogramWhenMedianStateDoesNotFit: under auto, a noisy row
// count below the histogram's threshold takes the Median Mechanism when
// its state fits the ledger (maxHard ≥ 1), with at most maxHard hard
// answers, and the histogram, saying why, when it does not (maxHard 0).
func TestChooseHistogramWhenMedianStateDoesNotFit(t *testing.T) {
	lo, hi := 0.0, 65535.0
	edges := make([]float64, 65537)
	for i := range edges {
		edges[i] = float64(i)
	}
	in := catalog.Interactive{Columns: []catalog.InteractiveColumn{{Name: "x", Edges: edges}},
		Epsilon: 1, Alpha: 0.05, Beta: 0.05, PlannedQueries: 100, Mechanism: catalog.InteractiveAuto}
	table := &catalog.Table{Name: "t", Source: "t", Columns: []catalog.Column{{Name: "x", Source: "x", Type: catalog.Integer, Lower: &lo, Upper: &hi}}, Interactive: &in}
	cells, err := mm.NewPredicate(in.Cells(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ip := &InteractivePlan{Table: table, Config: in, Predicate: cells, Key: interactiveKey(table, &in)}
	const nHat = 20000
	if float64(nHat) >= ip.HistogramRows() {
		t.Fatalf("n̂ %d not below the threshold %v", nHat, ip.HistogramRows())
	}
	if kind, why := ip.Choose(nHat, 5); kind != InteractiveMedian {
		t.Errorf("state fits: %s (%s), want the Median Mechanism", kind, why)
	}
	if p, err := mm.PlanFor(ip.MedianConfig(nHat, 5), nHat); err != nil || p.HardCap > 5 {
		t.Errorf("plan with at most 5 hard answers: H = %d, %v", p.HardCap, err)
	}
	if kind, why := ip.Choose(nHat, 0); kind != InteractiveHistogram || !strings.Contains(why, "would not fit the budget ledger") {
		t.Errorf("state does not fit: %s (%s), want the histogram, saying why", kind, why)
	}
}
