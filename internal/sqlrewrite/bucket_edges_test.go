package sqlrewrite_test

import (
	"math"
	"math/big"
	"strconv"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// edgeBucket is the bucket the grouped fetch's CASE gives x: the first
// bucket's number plus the inner edges x is not below.
func edgeBucket(first float64, edges []float64, x float64) float64 {
	bucket := first
	for _, e := range edges[1 : len(edges)-1] {
		if x >= e {
			bucket++
		}
	}
	return bucket
}

// checkEdges checks that edges[i] is the least double whose bucket by
// floor is at least first + i, and that each value of values is in the
// bucket floor gives it by the edges (at most five errors reported).
func checkEdges(t *testing.T, name string, b sqlrewrite.Bucketing, floor func(float64) float64, first, last float64, values []float64) {
	t.Helper()
	exact, ok := b.Edges(first, int(last-first)+1, false)
	if !ok {
		t.Fatalf("%s: no edges", name)
	}
	edges := make([]float64, len(exact))
	for i, e := range exact {
		edges[i] = e.Num
	}
	for i, e := range edges {
		k := first + float64(i)
		if i > 0 && !(e > edges[i-1]) {
			t.Fatalf("%s: edge of bucket %g is %v, not above the previous %v", name, k, e, edges[i-1])
		}
		if prev := math.Nextafter(e, math.Inf(-1)); floor(e) < k || floor(prev) >= k {
			t.Errorf("%s: edge %v of bucket %g is not the least double of bucket %g or above (bucket %g; the double below it: %g)", name, e, k, k, floor(e), floor(prev))
		}
	}
	wrong := 0
	for _, x := range values {
		if got, want := edgeBucket(first, edges, x), floor(x); got != want {
			if wrong++; wrong <= 5 {
				t.Errorf("%s: %v is in bucket %g by the edges, FLOOR gives %g", name, x, got, want)
			}
		}
		if got, want := b.Of(x), floor(x); got != want {
			t.Errorf("%s: Of(%v) = %g, want %g", name, x, got, want)
		}
	}
}

// TestBucketEdgesAsFloor: comparing a value with the edges of the buckets
// gives every value k/100 and k/1000 in [-10, 10] the bucket FLOOR((x -
// o) / w) gives it in double arithmetic, as the databases compute it for
// a DOUBLE, for widths that are no powers of two, with and without an
// origin. The products k * w (+ o) are no such edges: -1.8 / 0.3 is -6 in
// doubles, -6 * 0.3 is -1.7999999999999998, above -1.8.
func TestBucketEdgesAsFloor(t *testing.T) {
	var values []float64
	for k := -1000; k <= 1000; k++ {
		values = append(values, float64(k)/100)
	}
	for k := -10000; k <= 10000; k++ {
		values = append(values, float64(k)/1000)
	}
	for _, w := range []float64{0.1, 0.3, 0.01, 0.05, 0.7} {
		for _, o := range []float64{0, 0.15, -0.05, 1.3, 0.1} {
			b := sqlrewrite.Bucketing{Column: "x", Width: w, Origin: o}
			floor := func(x float64) float64 {
				if o == 0 {
					return math.Floor(x / w)
				}
				d := x - o
				return math.Floor(d / w)
			}
			checkEdges(t, "w = "+strconv.FormatFloat(w, 'g', -1, 64)+", o = "+strconv.FormatFloat(o, 'g', -1, 64), b, floor, floor(-10), floor(10), values)
		}
	}
}

// TestExactBucketEdgesAsDecimalFloor: an exact bucketing (MySQL's DECIMAL
// arithmetic: an integer column by a decimal literal, or x DIV w) puts
// every integer in [-1000, 1000], and every value k/100 read by its
// shortest digits, in the bucket the exact FLOOR((x - o) / w) gives it,
// where doubles differ (0.3 / 0.1 is 2.9999999999999996 in doubles, 3
// exactly; 3.3 / 0.1 is 32.99999999999999).
func TestExactBucketEdgesAsDecimalFloor(t *testing.T) {
	var integers, hundredths []float64
	for k := -1000; k <= 1000; k++ {
		integers = append(integers, float64(k))
		hundredths = append(hundredths, float64(k)/100)
	}
	for _, c := range []struct{ w, o string }{{"0.7", ""}, {"0.3", ""}, {"0.1", ""}, {"0.05", ""}, {"7", ""}, {"0.7", "0.35"}, {"0.3", "-0.15"}, {"2.5", "1"}} {
		w, _ := new(big.Rat).SetString(c.w)
		o := new(big.Rat)
		if c.o != "" {
			o.SetString(c.o)
		}
		wf, _ := strconv.ParseFloat(c.w, 64)
		of, _ := o.Float64()
		b := sqlrewrite.Bucketing{Column: "x", Width: wf, Origin: of, Exact: true, WidthDecimal: c.w, OriginDecimal: c.o}
		floor := func(x float64) float64 {
			d, _ := new(big.Rat).SetString(strconv.FormatFloat(x, 'g', -1, 64))
			q := d.Quo(d.Sub(d, o), w)
			f, _ := new(big.Float).SetInt(new(big.Int).Div(q.Num(), q.Denom())).Float64()
			return f
		}
		name := "w = " + c.w + ", o = " + c.o
		checkEdges(t, name+" (integers)", b, floor, floor(-1000), floor(1000), integers)
		checkEdges(t, name+" (hundredths)", b, floor, floor(-10), floor(10), hundredths)
		if !b.Index {
			label, _ := new(big.Float).SetRat(new(big.Rat).Add(new(big.Rat).Mul(new(big.Rat).SetInt64(3), w), o)).Float64()
			if got := b.Label(3); got != label {
				t.Errorf("%s: Label(3) = %v, want %v, the double nearest 3 * w + o", name, got, label)
			}
		}
	}
	// Doubles disagree with the exact buckets: 0.3 DIV 0.1 is 3.
	x, w := 0.3, 0.1
	b := sqlrewrite.Bucketing{Column: "x", Width: w, Exact: true, WidthDecimal: "0.1"}
	if math.Floor(x/w) != 2 || b.Of(x) != 3 {
		t.Errorf("FLOOR(0.3 / 0.1): doubles %g, exact Of %g; want 2 and 3", math.Floor(x/w), b.Of(x))
	}
}

// TestBucketEdgeSearch: with an origin far from the values, x - o is one
// double over an interval of x as wide as an ulp of o, and the edge at
// its end is found (stepping one double at a time from k * w + o would
// not end); a subnormal quotient rounds to -0, whose FLOOR is bucket 0;
// no finite double is in a bucket beyond the largest double's.
func TestBucketEdgeSearch(t *testing.T) {
	b := sqlrewrite.Bucketing{Column: "x", Width: 1, Origin: 1e10}
	edges, ok := b.Edges(-1e10, 0, false)
	if e := edges[0].Num; !ok || b.Of(e) < -1e10 || b.Of(math.Nextafter(e, math.Inf(-1))) >= -1e10 || !(e < -1e-7) {
		t.Fatalf("edge of bucket -1e10 = %v, %v: not the least double of bucket -1e10 or above, about -ulp(1e10)/2", edges, ok)
	}
	b = sqlrewrite.Bucketing{Column: "x", Width: 10}
	if edges, _ := b.Edges(0, 0, false); !(edges[0].Num < 0) || math.Floor(edges[0].Num/10) != 0 {
		t.Errorf("edge of bucket 0 of width 10 = %v, want the least negative subnormal x with x / 10 = -0", edges)
	}
	if _, ok := b.Edges(math.Floor(math.MaxFloat64/10)+1e300, 0, false); ok {
		t.Errorf("an edge beyond the largest double's bucket was found")
	}
}
