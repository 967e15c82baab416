package sqlrewrite

import (
	"math"
	"math/big"
	"strconv"
)

// Of returns the bucket index MySQL gives x, FLOOR((x - Origin) / Width):
//
//   - in double arithmetic, each operation rounded to nearest, as SQLite,
//     PostgreSQL (double precision) and MySQL/MariaDB (DOUBLE) compute it
//     for a double x and number literals; FLOOR(x / Width) when Origin is
//     0 (x - 0 is x);
//   - when Exact, exactly, on x's shortest decimal digits (an integer
//     below 2^53 is its own), as MySQL computes a DECIMAL.
//
// It is monotone non-decreasing in x: a difference, a quotient by a
// positive number and FLOOR each are, and so are rounding to nearest and
// the shortest digits.
func (b Bucketing) Of(x float64) float64 {
	if !b.Exact || math.IsInf(x, 0) || math.IsNaN(x) {
		if b.Origin != 0 {
			x -= b.Origin
		}
		return math.Floor(x / b.Width)
	}
	w, o := b.exactParts()
	q := new(big.Rat).Quo(new(big.Rat).Sub(shortestDecimal(x), o), w)
	f, _ := new(big.Rat).SetInt(new(big.Int).Div(q.Num(), q.Denom())).Float64()
	return f
}

// Label returns bucket k's key, as MySQL computes it: k itself for a
// bucket number (Index); else k * Width + Origin in double arithmetic
// (each operation rounded, never fused), or when Exact the double
// nearest the exact k * WidthDecimal + OriginDecimal (a DECIMAL; with a
// float literal as the multiplier, or a DIV by one, MySQL's label is a
// DOUBLE product, which may differ from it by an ulp).
func (b Bucketing) Label(k float64) float64 {
	switch {
	case b.Index:
		return k
	case b.Exact:
		w, o := b.exactParts()
		f, _ := exactStart(k, w, o).Float64()
		return f
	}
	return float64(k*b.Width) + b.Origin
}

// Edges returns the edges of the n buckets first, first+1, …: edges[i]
// is the least finite double whose bucket (Of) is at least first + i,
// for i up to n (the end of the last bucket). The rows of buckets k and
// above are exactly those with a value not below edge k, so comparing the
// column with the edges puts every row in the bucket MySQL's FLOOR gives
// it; the labels are no such edges (-1.8 / 0.3 is -6 in doubles, while
// -6 * 0.3 rounds to -1.7999999999999998, above -1.8). ok is false when
// a bucket has no such double.
func (b Bucketing) Edges(first float64, n int) (edges []float64, ok bool) {
	edges = make([]float64, n+1)
	var w, o *big.Rat
	if b.Exact {
		w, o = b.exactParts()
	}
	for i := range edges {
		k := first + float64(i)
		var e float64
		if b.Exact {
			e, ok = exactEdge(exactStart(k, w, o))
		} else {
			e, ok = leastReaching(float64(k*b.Width)+b.Origin, func(x float64) bool { return b.Of(x) >= k })
		}
		if !ok {
			return nil, false
		}
		edges[i] = e
	}
	return edges, true
}

// exactParts returns WidthDecimal and OriginDecimal as exact numbers.
func (b Bucketing) exactParts() (w, o *big.Rat) {
	w, o = new(big.Rat), new(big.Rat)
	w.SetString(b.WidthDecimal)
	if b.OriginDecimal != "" {
		o.SetString(b.OriginDecimal)
	}
	return w, o
}

// exactStart returns k * w + o exactly.
func exactStart(k float64, w, o *big.Rat) *big.Rat {
	start := new(big.Rat).SetFloat64(k)
	return start.Add(start.Mul(start, w), o)
}

// exactEdge returns the least finite double whose shortest digits are
// at least start: the double D nearest start, or the one above D when
// D's digits are below start. No other double can be: shortest digits
// lie in their double's rounding interval, so the digits of the double
// below D are below the midpoint between the two, which is at most start
// (start rounds to D; at a tie D is even, and the odd one's digits round
// to it, not to the midpoint), and the digits of the double above D are
// above the midpoint above D, which is at least start. ok is false when
// no finite double's digits reach start.
func exactEdge(start *big.Rat) (float64, bool) {
	d, _ := start.Float64()
	switch {
	case math.IsInf(d, -1):
		return -math.MaxFloat64, true
	case math.IsInf(d, 1):
		return 0, false
	case shortestDecimal(d).Cmp(start) >= 0:
		return d, true
	case d == math.MaxFloat64:
		return 0, false
	}
	return math.Nextafter(d, math.Inf(1)), true
}

// shortestDecimal returns the finite x's shortest decimal digits as an
// exact number: the DECIMAL MySQL converts a DOUBLE to.
func shortestDecimal(x float64) *big.Rat {
	r, _ := new(big.Rat).SetString(strconv.FormatFloat(x, 'g', -1, 64))
	return r
}

// leastReaching returns the least finite double x for which reaches
// holds, reaches being monotone (false below some double, true from it
// on); ok is false when no finite double reaches. It searches the
// doubles' positions (ordinal) outward from guess by doubling steps to
// bracket the answer, then by bisection: about 2·log2(d) + 2 evaluations
// for an answer d doubles from guess, at most about 128 for any, each on
// a finite double. (Stepping one double at a time would need no bound:
// with an origin far larger than the bucket's values, FLOOR((x - o) / w)
// is constant on an interval of x as wide as an ulp of o, which may hold
// 2^62 doubles near 0.)
func leastReaching(guess float64, reaches func(float64) bool) (float64, bool) {
	// Invariant: no double at or below lo reaches, every finite one at or
	// above hi does; -Inf counts as not reaching and +Inf as reaching,
	// so the search starts with both known without evaluating them.
	// Differences of positions are below 2^64, exact as unsigned; a
	// position between two others is computed exactly by wrapping int64
	// arithmetic.
	lo, hi := ordinal(math.Inf(-1)), ordinal(math.Inf(1))
	g := int64(0)
	if !math.IsNaN(guess) {
		g = ordinal(max(min(guess, math.MaxFloat64), -math.MaxFloat64))
	}
	if reaches(fromOrdinal(g)) {
		hi = g
		for step := uint64(1); uint64(hi-lo) > step; step *= 2 {
			c := hi - int64(step)
			if !reaches(fromOrdinal(c)) {
				lo = c
				break
			}
			hi = c
		}
	} else {
		lo = g
		for step := uint64(1); uint64(hi-lo) > step; step *= 2 {
			c := lo + int64(step)
			if reaches(fromOrdinal(c)) {
				hi = c
				break
			}
			lo = c
		}
	}
	for uint64(hi-lo) > 1 {
		mid := lo + int64(uint64(hi-lo)/2)
		if reaches(fromOrdinal(mid)) {
			hi = mid
		} else {
			lo = mid
		}
	}
	if hi == ordinal(math.Inf(1)) {
		return 0, false
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
