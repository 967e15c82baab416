package privtest

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

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

// VariedBounds are column bounds [lower, upper] for running a package's
// exact privacy checks beyond its own bounds: negative, asymmetric about 0,
// symmetric, a short non-dyadic range, a tiny width (10^−3), a large
// magnitude where an ulp of the bounds (1.2·10^−10 at 10^6) is no longer
// negligible against the width, a range far longer on one side of 0, and
// ±10^9.
var VariedBounds = [][2]float64{
	{-7.3, -1.1}, {-10, 3}, {-1, 1}, {0.1, 0.7}, {0, 1e-3}, {1e6, 1e6 + 3}, {-3, 1e4}, {-1e9, 1e9},
}

// TiedNeighbours returns add/remove neighbours (d, d plus one row) for a
// column bounded to [lower, upper], both datasets sorted and every value
// inside the bounds: for mechanisms that read sorted windows or grid sums
// of clamped values (BoundedNeighbours also adds rows beyond the bounds
// and leaves them unsorted, for releases that clamp). The values are
// placed relative to the width w = upper − lower so they keep their roles
// on any bounds: the bounds and the floats next to them, the midpoint
// (lower/2 + upper/2, mech.Bounds.Mid) and a float just below it, a tenth,
// a third and seven tenths of the way, and upper − 10^−12·w (which rounds
// to upper where an ulp of the bounds exceeds it, as on [10^6, 10^6+3]).
//
// The pairs are: one such value added to the empty dataset, to one row and
// to two tied rows of each such value, and to {lower, upper}; large tied
// datasets (100 rows at the midpoint or a tenth, 50 at each bound) plus a
// bound or the midpoint; then random datasets of fewer than maxRows rows
// with at most three distinct values (mostly the first: ties), drawn from
// the special values and the hundredths of the range, the added row one
// of them or (half the time) any special value.
func TiedNeighbours(lower, upper float64, rng *rand.Rand, random, maxRows int) [][2][]float64 {
	w := upper - lower
	mid := lower/2 + upper/2
	at := func(f float64) float64 { return min(max(lower+f*w, lower), upper) }
	special := []float64{
		lower, math.Nextafter(lower, upper), at(0.1), at(1.0 / 3), math.Nextafter(mid, lower), mid,
		at(0.7), max(upper-1e-12*w, lower), math.Nextafter(upper, lower), upper,
	}
	var pairs [][2][]float64
	add := func(d []float64, x float64) {
		sorted, added := WithRow(d, x)
		pairs = append(pairs, [2][]float64{sorted, added})
	}
	for _, x := range special {
		add(nil, x)
		add([]float64{lower, upper}, x)
		for _, y := range special {
			add([]float64{y}, x)
			add([]float64{y, y}, x)
		}
	}
	for _, x := range []float64{lower, mid, upper} {
		add(slices.Repeat([]float64{mid}, 100), x)
		add(slices.Repeat([]float64{at(0.1)}, 100), x)
		add(slices.Concat(slices.Repeat([]float64{lower}, 50), slices.Repeat([]float64{upper}, 50)), x)
	}
	pick := func() float64 { return special[rng.IntN(len(special))] }
	for range random {
		vals := []float64{pick(), at(float64(rng.IntN(101)) / 100), pick()}
		d := make([]float64, rng.IntN(maxRows))
		for i := range d {
			d[i] = vals[rng.IntN(1+rng.IntN(len(vals)))]
		}
		x := vals[rng.IntN(len(vals))]
		if rng.IntN(2) == 0 {
			x = pick()
		}
		add(d, x)
	}
	return pairs
}

// FormatRows renders a sorted dataset for a log line, runs of tied rows as
// value×count: [0×50 0.5 1×50].
func FormatRows(d []float64) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; i < len(d); {
		j := i + 1
		for j < len(d) && d[j] == d[i] {
			j++
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatFloat(d[i], 'g', -1, 64))
		if j-i > 1 {
			b.WriteString("×" + strconv.Itoa(j-i))
		}
		i = j
	}
	b.WriteByte(']')
	return b.String()
}

// WithRow returns d sorted and d with the row x added, sorted: an add/remove
// neighbour pair. d itself is not changed.
func WithRow(d []float64, x float64) (sorted, added []float64) {
	sorted = slices.Sorted(slices.Values(d))
	added = append(slices.Clone(sorted), x)
	slices.Sort(added)
	return sorted, added
}
