package bench

import (
	"bytes"
	"strings"
	"testing"
)

// TestRunDAWATiny runs the range-count comparison on two small histograms
// and checks the cells, the rule and the report.
func TestRunDAWATiny(t *testing.T) {
	sparse := &RangeHistogram{Name: "sparse", Counts: make([]int64, 256)}
	sparse.Counts[10], sparse.Counts[200] = 5000, 3000
	dense := &RangeHistogram{Name: "dense", Counts: make([]int64, 256)}
	for j := range dense.Counts {
		dense.Counts[j] = int64(50 + j%17*7)
	}
	cfg := DAWAConfig{Epsilons: []float64{0.1, 1}, Trials: 5, Intervals: 200, Seed: 3, Workers: 2}
	cells, err := RunDAWA([]*RangeHistogram{sparse, dense}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(cells), 2*len(DAWAWorkloads)*2*len(DAWAMechanisms); got != want {
		t.Fatalf("cells: got %d, want %d", got, want)
	}
	idx := indexDAWA(cells)
	// On two spikes DAWA merges most bins and beats Identity.
	if r := idx.ratio("sparse", "uniform-intervals", 0.1, "identity"); !(r > 1) {
		t.Errorf("identity/DAWA on the sparse histogram: got %v, want > 1", r)
	}
	if k := idx[dawaKey("sparse", "prefix", 1, "dawa")].Buckets; k > 64 {
		t.Errorf("DAWA buckets on two spikes: got %v, want at most 64 of the 256 bins", k)
	}
	again, err := RunDAWA([]*RangeHistogram{sparse, dense}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if again[5] != cells[5] {
		t.Errorf("not reproducible: got %+v, then %+v", cells[5], again[5])
	}
	var buf bytes.Buffer
	WriteDAWAReport(&buf, DAWAReport{Command: "go run ./bench/cmd/dawa", Config: cfg, Datasets: []*RangeHistogram{sparse, dense},
		RuleGroups: []DAWARuleGroup{{Label: "tiny", Datasets: []string{"sparse", "dense"}}}, Cells: cells})
	for _, want := range []string{"## Table 2", "### uniform-intervals", "| sparse | prefix | 1 |", "### tiny", "## Table 1"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func TestCoarsenAndRefineKeepTheTotal(t *testing.T) {
	h := &RangeHistogram{Name: "h", Counts: []int64{3, 0, 7, 1000, 2}}
	for _, g := range []*RangeHistogram{h.Coarsen(2), h.Refine(16, 1)} {
		if g.Total() != h.Total() {
			t.Errorf("%s: total %d, want %d", g.Name, g.Total(), h.Total())
		}
	}
	if got := h.Coarsen(2).Counts; len(got) != 3 || got[1] != 1007 {
		t.Errorf("coarsen: got %v, want [3 1007 2]", got)
	}
}
