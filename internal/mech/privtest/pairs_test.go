package privtest

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTiedNeighbours: on every bounds of VariedBounds, each pair is sorted,
// inside the bounds, and its second dataset is the first plus one row.
func TestTiedNeighbours(t *testing.T) {
	rng := rand.New(Seeded(t, 0x7e1))
	for _, b := range VariedBounds {
		for _, p := range TiedNeighbours(b[0], b[1], rng, 200, 25) {
			d, d2 := p[0], p[1]
			if len(d2) != len(d)+1 || !slices.IsSorted(d) || !slices.IsSorted(d2) {
				t.Fatalf("%v: not a sorted add-one pair: %v vs %v", b, d, d2)
			}
			for _, x := range d2 {
				if !(x >= b[0] && x <= b[1]) {
					t.Fatalf("%v: row %v outside the bounds in %v", b, x, d2)
				}
			}
			// Removing one row of d2 gives d.
			i := 0
			for i < len(d) && d[i] == d2[i] {
				i++
			}
			if !slices.Equal(d[i:], d2[i+1:]) {
				t.Fatalf("%v: %v is not %v plus one row", b, d2, d)
			}
		}
	}
}

func TestFormatRows(t *testing.T) {
	for _, tc := range []struct {
		d    []float64
		want string
	}{
		{nil, "[]"},
		{[]float64{0.5}, "[0.5]"},
		{[]float64{0, 0, 0.1, 1e6, 1e6}, "[0×2 0.1 1e+06×2]"},
	} {
		if got := FormatRows(tc.d); got != tc.want {
			t.Errorf("FormatRows(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
