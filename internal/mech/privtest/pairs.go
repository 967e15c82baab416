package privtest

import "math/rand/v2"

// BoundedNeighbours returns add/remove neighbours (d, d plus one row) for
// a column bounded to [lower, upper]: empty and tiny datasets, values at,
// just inside and beyond the bounds, ties, and 300 random datasets of up
// to 30 rows drawn from those values, the extremes every sum's
// sensitivity is attained at.
func BoundedNeighbours(lower, upper float64, rng *rand.Rand) [][2][]float64 {
	mid := lower/2 + upper/2 // mech.Bounds.Mid
	special := []float64{lower - 5, lower, lower + 0.1, (lower + upper) / 3, mid, upper - 1e-9, upper, upper + 7}
	var pairs [][2][]float64
	for _, x := range special {
		for _, base := range [][]float64{nil, {lower}, {upper, upper}, {mid, x}, {lower, upper, 0.5}} {
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
