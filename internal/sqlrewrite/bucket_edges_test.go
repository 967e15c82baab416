package sqlrewrite_test

import (
	"math"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestBucketEdgesAsFloor: comparing a value with the edges of the buckets
// (the grouped fetch's CASE: the bucket of a value is the first's number
// plus the inner edges it is not below) gives every value k/100 and
// k/1000 in [-10, 10] the bucket FLOOR((x - o) / w) gives it in double
// arithmetic, as the databases compute it, for widths that are no powers
// of two, with and without an origin. The products k * w (+ o) are no
// such edges: -1.8 / 0.3 is -6 in doubles, -6 * 0.3 is
// -1.7999999999999998, above -1.8.
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
			first, last := floor(-10), floor(10)
			edges := make([]float64, 0, int(last-first)+2)
			for k := first; k <= last+1; k++ {
				e, ok := b.Edge(k)
				if !ok {
					t.Fatalf("w = %g, o = %g: bucket %g has no edge", w, o, k)
				}
				if len(edges) > 0 && !(e > edges[len(edges)-1]) {
					t.Fatalf("w = %g, o = %g: edge of bucket %g is %v, not above the previous %v", w, o, k, e, edges[len(edges)-1])
				}
				if prev := math.Nextafter(e, math.Inf(-1)); floor(e) < k || floor(prev) >= k {
					t.Errorf("w = %g, o = %g: edge %v of bucket %g is not the least double of bucket %g or above (bucket %g; the double below it: %g)", w, o, e, k, k, floor(e), floor(prev))
				}
				edges = append(edges, e)
			}
			wrong := 0
			for _, x := range values {
				bucket := first
				for _, e := range edges[1 : len(edges)-1] {
					if x >= e {
						bucket++
					}
				}
				if want := floor(x); bucket != want {
					if wrong++; wrong <= 5 {
						t.Errorf("w = %g, o = %g: %v is in bucket %g by the edges, FLOOR gives %g", w, o, x, bucket, want)
					}
				}
				if got := b.Of(x); got != floor(x) {
					t.Errorf("w = %g, o = %g: Of(%v) = %g, want %g", w, o, x, got, floor(x))
				}
			}
		}
	}
}

// TestBucketEdgeCancellation: with an origin far from the values, x - o
// is one double over an interval of x as wide as an ulp of o, and the
// edge at its end is found (by bisection: stepping one double at a time
// from k * w + o would not end).
func TestBucketEdgeCancellation(t *testing.T) {
	b := sqlrewrite.Bucketing{Column: "x", Width: 1, Origin: 1e10}
	e, ok := b.Edge(-1e10)
	if !ok || b.Of(e) < -1e10 || b.Of(math.Nextafter(e, math.Inf(-1))) >= -1e10 {
		t.Fatalf("Edge(-1e10) = %v, %v: not the least double of bucket -1e10 or above", e, ok)
	}
	if !(e < -1e-7) {
		t.Errorf("Edge(-1e10) = %v, want about -ulp(1e10)/2", e)
	}
	// Subnormal quotients round to -0, whose FLOOR is bucket 0.
	b = sqlrewrite.Bucketing{Column: "x", Width: 10}
	if e, _ := b.Edge(0); !(e < 0) || math.Floor(e/10) != 0 {
		t.Errorf("Edge(0) of width 10 = %v, want the least negative subnormal x with x / 10 = -0", e)
	}
	// No finite double is in a bucket beyond the largest's.
	if _, ok := b.Edge(math.Floor(math.MaxFloat64/10) + 1e300); ok {
		t.Errorf("Edge beyond the largest double's bucket found an edge")
	}
}
