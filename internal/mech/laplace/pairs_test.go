package laplace

import (
	"math/rand/v2"

	"github.com/dpproxy/dpproxy/internal/mech"
)

// sumAroundPairs returns add/remove neighbours (d, d + one row) over b:
// empty and tiny datasets, values at and beyond the bounds, ties, and
// random datasets of up to 30 rows.
func sumAroundPairs(b mech.Bounds, rng *rand.Rand) [][2][]float64 {
	special := []float64{b.Lower - 5, b.Lower, b.Lower + 0.1, (b.Lower + b.Upper) / 3, b.Mid(), b.Upper - 1e-9, b.Upper, b.Upper + 7}
	var pairs [][2][]float64
	for _, x := range special {
		for _, base := range [][]float64{nil, {b.Lower}, {b.Upper, b.Upper}, {b.Mid(), x}, {b.Lower, b.Upper, 0.5}} {
			pairs = append(pairs, [2][]float64{base, append(append([]float64{}, base...), x)})
		}
	}
	for range 300 {
		d := make([]float64, rng.IntN(30))
		for i := range d {
			d[i] = special[rng.IntN(len(special))]
		}
		pairs = append(pairs, [2][]float64{d, append(append([]float64{}, d...), special[rng.IntN(len(special))])})
	}
	return pairs
}
