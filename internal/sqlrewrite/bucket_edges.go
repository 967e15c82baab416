package sqlrewrite

import "math"

// Of returns the bucket index the database gives x: FLOOR((x - Origin) /
// Width) in double arithmetic, each operation rounded to nearest, as
// SQLite, PostgreSQL (double precision) and MySQL/MariaDB (DOUBLE)
// compute it for a double x and number literals; FLOOR(x / Width) when
// Origin is 0 (x - 0 is x). It is monotone non-decreasing in x: a
// difference, a quotient by a positive number and FLOOR each are, and so
// is rounding to nearest.
func (b Bucketing) Of(x float64) float64 {
	if b.Origin != 0 {
		x -= b.Origin
	}
	return math.Floor(x / b.Width)
}

// Label returns bucket k's key, as the database computes it: k itself
// for a bucket number (Index), else FLOOR(...) * Width + Origin in
// double arithmetic (each operation rounded, never fused).
func (b Bucketing) Label(k float64) float64 {
	if b.Index {
		return k
	}
	return float64(k*b.Width) + b.Origin
}

// Edge returns the least finite double x whose bucket (Of) is at least
// k: the rows of buckets k and above are exactly those with a value not
// below it, so a comparison of the column with the edges puts every row
// in the bucket the database's own FLOOR gives it (the product k *
// Width, the bucket's label, is no such edge: -1.8 / 0.3 is -6 in
// doubles, while -6 * 0.3 rounds to -1.7999999999999998, above -1.8). ok
// is false when no finite double reaches k.
//
// Since Of is monotone, the doubles it sends to k or above are a final
// segment of the finite doubles in their order, which Edge finds by
// bisection over their positions (ordinal): at most 64 evaluations of Of.
// (Stepping with math.Nextafter from the label would need no bound: with
// Origin far larger than the bucket's values, FLOOR((x - Origin) / Width)
// is constant on an interval of x as wide as an ulp of Origin, which may
// hold 2^62 doubles near 0.)
func (b Bucketing) Edge(k float64) (x float64, ok bool) {
	lo, hi := ordinal(-math.MaxFloat64), ordinal(math.MaxFloat64)
	reaches := func(o int64) bool { return b.Of(fromOrdinal(o)) >= k }
	if !reaches(hi) {
		return 0, false
	}
	if reaches(lo) {
		return -math.MaxFloat64, true
	}
	// Invariant: lo does not reach k, hi does. hi - lo is below 2^64, so
	// it is exact as an unsigned difference.
	for uint64(hi-lo) > 1 {
		mid := lo + int64(uint64(hi-lo)/2)
		if reaches(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return fromOrdinal(hi), true
}

// ordinal maps the doubles other than NaN to integers in their order:
// consecutive doubles to consecutive integers, both zeros to 0.
func ordinal(x float64) int64 {
	bits := int64(math.Float64bits(x))
	if bits < 0 {
		return math.MinInt64 - bits
	}
	return bits
}

// fromOrdinal is the inverse of ordinal (0 gives +0).
func fromOrdinal(o int64) float64 {
	if o < 0 {
		return math.Float64frombits(uint64(math.MinInt64 - o))
	}
	return math.Float64frombits(uint64(o))
}
