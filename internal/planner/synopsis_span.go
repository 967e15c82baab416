package planner

import (
	"math"
	"slices"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// Domain is a column's histogram domain: Bins equal-width bins over
// [Lower, Upper) (catalog.Column.HistogramDomain). Bin j covers the values
// [Lower + j·h, Lower + (j+1)·h), h = (Upper-Lower)/Bins; bin coordinates
// are real positions in [0, Bins], bin j covering [j, j+1).
type Domain struct {
	Lower, Upper float64
	Bins         int
	// Integer is set for an integer column: the value k takes the cell
	// [k, k+1), so a condition selects whole integers.
	Integer bool
}

// columnDomain returns the histogram domain of col; ok is false when it
// declares none.
func columnDomain(col *catalog.Column) (Domain, bool) {
	lo, hi, bins, ok := col.HistogramDomain()
	return Domain{Lower: lo, Upper: hi, Bins: bins, Integer: col.Type == catalog.Integer}, ok
}

// position maps a value to bin coordinates, clipped to [0, Bins]. It
// computes (x - Lower)·Bins/(Upper - Lower) in that order, as the
// database does in the histogram fetch (sqlrewrite.Render), so that a
// value on a bin edge lands on the same side in both.
func (d Domain) position(x float64) float64 {
	p := (x - d.Lower) * float64(d.Bins) / (d.Upper - d.Lower)
	return math.Min(math.Max(p, 0), float64(d.Bins))
}

// value maps bin coordinates back to a column value.
func (d Domain) value(pos float64) float64 {
	return d.Lower + pos*(d.Upper-d.Lower)/float64(d.Bins)
}

// Span is a half-open interval [From, To) of bin coordinates.
type Span struct{ From, To float64 }

// aligned reports whether both ends of the span are bin edges.
func (s Span) aligned() bool { return s.From == math.Trunc(s.From) && s.To == math.Trunc(s.To) }

// Spans is a sorted list of disjoint non-empty spans: the part of the
// domain a set of conditions on the column selects. nil selects nothing;
// the whole domain is one span [0, Bins].
type Spans []Span

// whole returns the spans of the whole domain.
func (d Domain) whole() Spans { return Spans{{0, float64(d.Bins)}} }

// rangeSpan returns the span of the values in r: for a real column the
// interval between its ends (whether an end is open does not matter: a
// synopsis spreads each bin's count uniformly over the bin), for an
// integer column the cells of the integers in r.
func (d Domain) rangeSpan(r sqlrewrite.Range) Spans {
	from, to := 0.0, float64(d.Bins)
	if d.Integer {
		lo, hi := d.Lower, d.Upper-1 // the first and last integer
		if r.HasLower {
			lo = math.Max(lo, integerAtLeast(r.Lower, r.LowerOpen))
		}
		if r.HasUpper {
			hi = math.Min(hi, integerAtMost(r.Upper, r.UpperOpen))
		}
		if lo > hi {
			return nil
		}
		from, to = d.position(lo), d.position(hi+1)
	} else {
		if r.HasLower {
			from = d.position(r.Lower)
		}
		if r.HasUpper {
			to = d.position(r.Upper)
		}
	}
	if !(from < to) {
		return nil
	}
	return Spans{{from, to}}
}

// integerAtLeast returns the least integer above x (open) or at least x.
func integerAtLeast(x float64, open bool) float64 {
	if open {
		return math.Floor(x) + 1
	}
	return math.Ceil(x)
}

// integerAtMost returns the greatest integer below x (open) or at most x.
func integerAtMost(x float64, open bool) float64 {
	if open {
		return math.Ceil(x) - 1
	}
	return math.Floor(x)
}

// conditionSpans returns the spans a condition on the column selects; ok
// is false when a synopsis cannot answer it: equality and IN on a real
// column (points have no width in a binned synopsis) or on text, and
// IS NULL or a Complement, which select unreadable rows, in no bin.
func (d Domain) conditionSpans(c sqlrewrite.Condition) (spans Spans, ok bool) {
	if c.IsNull || c.Complement {
		return nil, false
	}
	if c.Range != nil {
		return d.rangeSpan(*c.Range), true
	}
	if !d.Integer {
		return nil, false
	}
	var out Spans
	for _, v := range c.In {
		if v.IsText {
			return nil, false
		}
		if v.Num != math.Trunc(v.Num) {
			continue // an integer column holds no such value
		}
		out = out.union(d.rangeSpan(sqlrewrite.Range{Lower: v.Num, Upper: v.Num, HasLower: true, HasUpper: true}))
	}
	return out, true
}

// intersect returns the spans selected by both s and t.
func (s Spans) intersect(t Spans) Spans {
	var out Spans
	for _, a := range s {
		for _, b := range t {
			if from, to := math.Max(a.From, b.From), math.Min(a.To, b.To); from < to {
				out = append(out, Span{from, to})
			}
		}
	}
	return out.normalize()
}

// union returns the spans selected by s or t.
func (s Spans) union(t Spans) Spans {
	return append(slices.Clone(s), t...).normalize()
}

// normalize sorts the spans and merges those that overlap or touch.
func (s Spans) normalize() Spans {
	slices.SortFunc(s, func(a, b Span) int {
		switch {
		case a.From < b.From:
			return -1
		case a.From > b.From:
			return 1
		}
		return 0
	})
	var out Spans
	for _, sp := range s {
		if n := len(out); n > 0 && sp.From <= out[n-1].To {
			out[n-1].To = math.Max(out[n-1].To, sp.To)
			continue
		}
		out = append(out, sp)
	}
	return out
}

// aligned reports whether every end is a bin edge.
func (s Spans) aligned() bool {
	for _, sp := range s {
		if !sp.aligned() {
			return false
		}
	}
	return true
}

// binRanges returns the bins the spans touch, as inclusive bin ranges:
// what the spans contribute to a workload learned from a statement.
func (s Spans) binRanges(bins int) [][2]int {
	var out [][2]int
	for _, sp := range s {
		lo := int(math.Floor(sp.From))
		hi := min(int(math.Ceil(sp.To))-1, bins-1)
		if lo <= hi {
			out = append(out, [2]int{lo, hi})
		}
	}
	return out
}
