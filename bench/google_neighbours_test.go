package bench

import (
	"fmt"
	"math"
	"testing"
)

// TestQuantileNeighbours checks the neighbours of a hand-made column: the
// median of 1,2,2,3,3,3 interpolates between 2 and 3, so each size moves
// rows at both values, and removal stops at the rows a value has.
func TestQuantileNeighbours(t *testing.T) {
	d := &Dataset{Name: "x", Values: []float64{1, 2, 2, 3, 3, 3}, Lower: 0, Upper: 4, Integer: true}
	got := map[string][]float64{}
	for _, nb := range QuantileNeighbours(d, 0.5, []int{1, 3}) {
		got[nb.Data.Name] = nb.Data.Values
		if nb.Data.Name != fmt.Sprintf("x%+d@%g", nb.Rows, nb.Value) {
			t.Errorf("%s: rows %d value %g", nb.Data.Name, nb.Rows, nb.Value)
		}
	}
	want := map[string][]float64{
		"x-1@2": {1, 2, 3, 3, 3}, "x+1@2": {1, 2, 2, 2, 3, 3, 3}, "x+3@2": {1, 2, 2, 2, 2, 2, 3, 3, 3},
		"x-1@3": {1, 2, 2, 3, 3}, "x+1@3": {1, 2, 2, 3, 3, 3, 3}, "x-3@3": {1, 2, 2}, "x+3@3": {1, 2, 2, 3, 3, 3, 3, 3, 3},
	}
	if len(got) != len(want) {
		t.Fatalf("%d neighbours %v, want %d", len(got), got, len(want))
	}
	for name, w := range want {
		g, ok := got[name]
		if !ok || len(g) != len(w) {
			t.Errorf("%s: %v, want %v", name, g, w)
			continue
		}
		for i := range w {
			if g[i] != w[i] {
				t.Errorf("%s: %v, want %v", name, g, w)
				break
			}
		}
	}
}

// TestTargetBound checks the bound by hand: truths 3956 and 3955 two rows
// apart at ε = 0.1 with a target of 0.286 give e^{−0.2}·0.714 = 0.5846;
// a target at or past the truths' distance gives 0.
func TestTargetBound(t *testing.T) {
	if got, want := TargetBound(3956, 3955, 2, 0.1, 0.286), math.Exp(-0.2)*0.714; math.Abs(got-want) > 1e-12 || math.Abs(got-0.5846) > 1e-4 {
		t.Errorf("bound %v, want %v", got, want)
	}
	if got := TargetBound(3956, 3955, 2, 0.1, 1); got != 0 {
		t.Errorf("bound %v with a target past the distance, want 0", got)
	}
}
