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
//
// A DOUBLE label of fixed decimals (Type) is rounded to them, as
// MariaDB's GROUP BY stores it in a DOUBLE of those decimals: -7.2 for
// bucket -24 of FLOOR(d / 0.3) * 0.3, whose product is
// -7.199999999999999.
func (b Bucketing) Label(k float64) float64 {
	switch {
	case b.Index:
		return k
	case b.Exact:
		w, o := b.exactParts()
		f, _ := exactStart(k, w, o).Float64()
		return f
	}
	x := float64(k*b.Width) + b.Origin
	if b.Type.Kind == LabelDouble && b.Type.Scale < notFixedDecimals && !math.IsInf(x, 0) {
		if r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'f', b.Type.Scale, 64), 64); err == nil {
			return r
		}
	}
	return x
}

// Key returns bucket k's key as a value: Label, and for a KeyDecimal
// bucketing whose label is an integer its digits (Value.Decimal), which
// the nearest double may lose beyond 2^53 (FLOOR(b / 5) * 5 of a BIGINT b
// labels bucket 1801439850948201 9007199254741005, no double).
func (b Bucketing) Key(k float64) Value {
	v := Value{Num: b.Label(k)}
	if b.Type.Kind == LabelDecimal {
		// A DECIMAL label is written with its type's scale: 3.0 for
		// FLOOR(b / 0.3) * 0.3 of a BIGINT b.
		label := new(big.Rat).SetFloat64(k)
		switch {
		case b.Exact && !b.Index:
			w, o := b.exactParts()
			label = exactStart(k, w, o)
		case !b.Index:
			label = shortestDecimal(v.Num)
		}
		v.Decimal = label.FloatString(b.Type.Scale)
		return v
	}
	if !b.KeyDecimal {
		return v
	}
	label := new(big.Rat).SetFloat64(k)
	if !b.Index {
		w, o := b.exactParts()
		label = exactStart(k, w, o)
	}
	if label.IsInt() {
		v.Decimal = label.Num().String()
	}
	return v
}

// Edge is where a bucket starts: the least value of the bucketed column
// (or row expression) that the bucket holds. With Exact empty it is Num;
// otherwise it is no double, and Exact is its digits (an integer, or a
// decimal without exponent), which every backend compares a BIGINT or
// DECIMAL exactly with, and Num the double nearest them.
type Edge struct {
	Num   float64
	Exact string
}

// DoubleEdges returns the edges at the doubles xs (declared edges).
func DoubleEdges(xs []float64) []Edge {
	edges := make([]Edge, len(xs))
	for i, x := range xs {
		edges[i] = Edge{Num: x}
	}
	return edges
}

// Rat returns the edge as an exact number.
func (e Edge) Rat() *big.Rat {
	if e.Exact == "" {
		return new(big.Rat).SetFloat64(e.Num)
	}
	r, _ := new(big.Rat).SetString(e.Exact)
	return r
}

// Below reports whether e is below f, exactly.
func (e Edge) Below(f Edge) bool {
	if e.Exact == "" && f.Exact == "" {
		return e.Num < f.Num
	}
	return e.Rat().Cmp(f.Rat()) < 0
}

// Edges returns the edges of the n buckets first, first+1, …: edges[i]
// is the least value whose bucket (Of) is at least first + i, for i up
// to n (the end of the last bucket), among the values the column holds:
// doubles, or with integers set (a BIGINT column, an integer row
// expression) integers, or when Exact and ExactValues DECIMALs. The rows
// of buckets k and above are exactly those with a value not below edge
// k, so comparing the column with the edges puts every row in the bucket
// MySQL's FLOOR gives it; the labels are no such edges (-1.8 / 0.3 is -6
// in doubles, while -6 * 0.3 rounds to -1.7999999999999998, above -1.8).
//
// For integers up to 2^53 in magnitude the least double in a bucket is
// its edge too (an integer below it would be a double below it, or lie
// between two). Beyond, an integer may fall between two doubles
// (9007199254741005 is in bucket 1801439850948201 of FLOOR(b / 5), whose
// least double is 9007199254741006), and the edge is an integer: for an
// exact bucketing the ceiling of k * w + o, in double arithmetic the
// least integer that MySQL's conversion to DOUBLE rounds into the
// bucket. The edge of an exact bucketing of DECIMALs is k * w + o itself.
// Decimals in double arithmetic have no least value beyond 2^53 (those
// above a midpoint between two doubles round up), and ok is false for
// them, as when a bucket has no edge at all.
func (b Bucketing) Edges(first float64, n int, integers bool) (edges []Edge, ok bool) {
	edges = make([]Edge, n+1)
	var w, o *big.Rat
	if b.Exact {
		w, o = b.exactParts()
	}
	for i := range edges {
		k := first + float64(i)
		var e float64
		if b.Exact {
			start := exactStart(k, w, o)
			e, ok = exactEdge(start)
			edges[i] = Edge{Num: e}
			switch {
			case !ok || !b.ExactValues:
			case !integers:
				edges[i] = exactDigits(start)
			case new(big.Rat).Abs(start).Cmp(twoTo53) >= 0:
				edges[i] = exactDigits(new(big.Rat).SetInt(ceilRat(start)))
			}
		} else {
			e, ok = leastReaching(float64(k*b.Width)+b.Origin, func(x float64) bool { return b.Of(x) >= k })
			edges[i] = Edge{Num: e}
			if ok && b.ExactValues && math.Abs(e) >= 1<<53 {
				ok = integers
				edges[i] = exactDigits(new(big.Rat).SetInt(leastRoundingTo(e)))
			}
		}
		if !ok {
			return nil, false
		}
	}
	return edges, true
}

// twoTo53 is 2^53, from which on not every integer is a double.
var twoTo53 = new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), 53))

// ceilRat returns the least integer not below r.
func ceilRat(r *big.Rat) *big.Int {
	q, m := new(big.Int).DivMod(r.Num(), r.Denom(), new(big.Int))
	if m.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	return q
}

// leastRoundingTo returns the least integer that rounds to a double not
// below the finite integral double e, as MySQL converts a BIGINT or a
// DECIMAL to DOUBLE (to nearest, ties to even): the ceiling of the
// midpoint between e and the double below it, or the integer above it
// when the midpoint is an integer that rounds down.
func leastRoundingTo(e float64) *big.Int {
	mid := new(big.Rat).Add(new(big.Rat).SetFloat64(e), new(big.Rat).SetFloat64(math.Nextafter(e, math.Inf(-1))))
	i := ceilRat(mid.Quo(mid, big.NewRat(2, 1)))
	if f, _ := new(big.Float).SetInt(i).Float64(); f < e {
		i.Add(i, big.NewInt(1))
	}
	return i
}

// exactDigits returns the edge at the exact number r, whose decimal
// digits end (k * w + o of decimal literals, or an integer).
func exactDigits(r *big.Rat) Edge {
	f, exact := r.Float64()
	if exact {
		return Edge{Num: f}
	}
	return Edge{Num: f, Exact: r.FloatString(decimalScale(r))}
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
