package planner

import (
	"fmt"
	"math"
	"slices"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// Domain is a column's histogram domain: Bins equal-width bins over
// [Lower, Upper) (catalog.Column.HistogramDomain). Bin j covers the values
// [Lower + j·h, Lower + (j+1)·h), h = (Upper-Lower)/Bins; bin coordinates
// are real positions in [0, cells()], bin j covering [j, j+1). A real
// column's domain has one more cell, Bins, holding exactly the upper bound
// (with the values clamped to it): MySQL's FLOOR(x / w) * w puts x = Upper
// in a bucket of its own when Upper is a multiple of w, and x < Upper
// leaves it out, which the bin below, holding it, could not tell.
type Domain struct {
	Lower, Upper float64
	Bins         int
	// Integer is set for an integer column: the value k takes the cell
	// [k, k+1), so a condition selects whole integers.
	Integer bool
}

// Cells is the number of cells of the synopsis: the bins, and the real
// column's cell of its upper bound.
func (d Domain) Cells() int {
	if d.Integer {
		return d.Bins
	}
	return d.Bins + 1
}

// describe renders the domain's cells, e.g. "4096 bins over [0, 10)
// and a cell for 10" (a real column) or "100 bins over [0, 100)" (an
// integer column, whose upper end is the declared bound plus 1).
func (d Domain) describe() string {
	s := fmt.Sprintf("%d bins over [%s, %s)", d.Bins, formatNumber(d.Lower), formatNumber(d.Upper))
	if !d.Integer {
		s += " and a cell for " + formatNumber(d.Upper)
	}
	return s
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

// value maps bin coordinates back to a column value (the upper bound
// for the real column's cell of its upper bound).
func (d Domain) value(pos float64) float64 {
	if pos >= float64(d.Bins) {
		return d.Upper
	}
	return d.Lower + pos*(d.Upper-d.Lower)/float64(d.Bins)
}

// Span is a half-open interval [From, To) of bin coordinates.
type Span struct{ From, To float64 }

// aligned reports whether both ends of the span are bin edges.
func (s Span) aligned() bool { return s.From == math.Trunc(s.From) && s.To == math.Trunc(s.To) }

// Spans is a sorted list of disjoint non-empty spans: the part of the
// domain a set of conditions on the column selects. nil selects nothing;
// the whole domain is one span [0, cells()].
type Spans []Span

// whole returns the spans of the whole domain.
func (d Domain) whole() Spans { return Spans{{0, float64(d.Cells())}} }

// rangeSpan returns the span of the values in r: for an integer column
// the cells of the integers in r, for a real column the interval between
// its ends, open or closed alike (a synopsis spreads each bin's count
// uniformly over the bin, so one value counts for nothing; realSpans
// refuses the ends on a bin edge, where that is wrong), with the cell of
// the upper bound when r holds it (or a value above it, clamped to it).
func (d Domain) rangeSpan(r sqlrewrite.Range) Spans {
	from, to := 0.0, float64(d.Cells())
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
		bins, top := float64(d.Bins), float64(d.Bins+1)
		switch {
		case !r.HasLower:
		case r.Lower > d.Upper || r.Lower == d.Upper && r.LowerOpen:
			from = top
		case r.Lower == d.Upper:
			from = bins
		default:
			from = d.position(r.Lower)
		}
		switch {
		case !r.HasUpper:
		case r.Upper > d.Upper || r.Upper == d.Upper && !r.UpperOpen:
			to = top
		case r.Upper == d.Upper:
			to = bins
		default:
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

// unanswerable says why a synopsis cannot answer the conditions on its
// column.
type unanswerable struct {
	// reason is what the synopsis cannot count; free names the nearest
	// forms it answers ("" when none is near).
	reason, free string
}

// String is a refusal's text: the reason, and the nearest forms answered
// (a plain COUNT(*) with the same WHERE is a fresh Laplace count).
func (u *unanswerable) String() string {
	instead := "use a plain COUNT(*) with this WHERE (a fresh Laplace count)"
	if u.free != "" {
		instead = u.free + ", or " + instead
	}
	return u.reason + "; " + instead
}

// columnSpans returns the spans that conds, conditions on the column
// named name, select together, or why a synopsis cannot answer them:
// IS NULL and a Complement select unreadable rows, in no bin; equality
// and IN on a real column, and a real range of one value, select a point,
// which has no width in a binned synopsis (nor does text on an integer
// column). A real column's ranges are intersected before they are read,
// so that realSpans sees the ends the rows are selected by.
func (d Domain) columnSpans(name string, conds []sqlrewrite.Condition) (Spans, *unanswerable) {
	spans := d.whole()
	within := sqlrewrite.Range{} // a real column's ranges, intersected
	for _, c := range conds {
		switch {
		case c.IsNull || c.Complement:
			return nil, &unanswerable{reason: fmt.Sprintf("IS NULL (and col <> v OR col IS NULL) on %s selects NULLs, which are in no bin of its synopsis", name)}
		case c.Range != nil && !sqlrewrite.ExactRange(*c.Range) || slices.ContainsFunc(c.In, func(v sqlrewrite.Value) bool { return !sqlrewrite.ExactValue(v) }):
			return nil, &unanswerable{reason: fmt.Sprintf("a constant compared with %s that a double does not hold exactly (more than 15 to 17 significant digits) is not answered from its synopsis", name)}
		case c.Range != nil && d.Integer:
			spans = spans.intersect(d.rangeSpan(*c.Range))
		case c.Range != nil:
			within = intersectRange(within, *c.Range)
		case !d.Integer:
			return nil, d.pointUnanswerable(name)
		default:
			var in Spans
			for _, v := range c.In {
				if v.IsText {
					return nil, d.pointUnanswerable(name)
				}
				if v.Num != math.Trunc(v.Num) {
					continue // an integer column holds no such value
				}
				in = in.union(d.rangeSpan(sqlrewrite.Range{Lower: v.Num, Upper: v.Num, HasLower: true, HasUpper: true}))
			}
			spans = spans.intersect(in)
		}
	}
	if d.Integer {
		return spans, nil
	}
	s, u := d.realSpans(name, within)
	if u != nil {
		return nil, u
	}
	return spans.intersect(s), nil
}

// pointUnanswerable is why equality and IN on a real column (or text on
// an integer one) are not answered from its synopsis.
func (d Domain) pointUnanswerable(name string) *unanswerable {
	if d.Integer {
		return &unanswerable{reason: fmt.Sprintf("text values of the integer column %s are in no bin of its synopsis", name), free: "compare it with numbers"}
	}
	return &unanswerable{
		reason: fmt.Sprintf("equality and IN on the real column %s select single values, which have no width in its binned synopsis", name),
		free:   "use a range"}
}

// realSpans returns the span of the values of a real column in r, or why
// a synopsis cannot count them. The database puts a value on a bin edge
// in the bin above it (and the upper bound, with the values clamped to
// it, in the cell of its own above the bins), and a synopsis knows each
// bin's count only as a whole. So an end of r exactly on an edge is exact
// when r leaves the edge value out and the span leaves its bin out too
// (x < e), or r takes it and the span takes its bin from its start
// (x >= e); but x <= e, x > e (and, at the lower bound, x <= lower,
// x > lower) ask about the rows holding exactly e, which the span would
// silently drop or keep whole (every row with x = 5 left out of x <= 5: a
// quarter of the count when a real column holds whole numbers). Every end
// at the upper bound is exact, its rows being the cell of their own. No released figure says
// how many rows hold e: counting the bin past the edge in full would be
// exact on whole numbers and a bin too many on spread values, counting it
// in proportion gives nothing (the end meets it in one point), and
// either would answer a count the synopsis has no estimate of. Such an
// end is therefore what equality on the column is (x <= e is x < e or
// x = e), a point: a plain COUNT(*) is a fresh Laplace count and a range
// count or histogram is refused. An integer column needs none of this:
// the integer k takes the cell [k, k+1), and x <= k ends at k+1. A range
// of one value (BETWEEN v AND v) is equality too.
func (d Domain) realSpans(name string, r sqlrewrite.Range) (Spans, *unanswerable) {
	if r.HasLower && r.HasUpper && (r.Lower > r.Upper || r.Lower == r.Upper && (r.LowerOpen || r.UpperOpen)) {
		return nil, nil // no value
	}
	if r.HasLower && r.HasUpper && r.Lower == r.Upper {
		return nil, d.pointUnanswerable(name)
	}
	bins := float64(d.Bins)
	for _, end := range []struct {
		has, open, upper bool
		v                float64
	}{{r.HasLower, r.LowerOpen, false, r.Lower}, {r.HasUpper, r.UpperOpen, true, r.Upper}} {
		p := (end.v - d.Lower) * bins / (d.Upper - d.Lower) // as position computes it, unclipped
		if !end.has || end.v >= d.Upper || p < 0 || p > bins || p != math.Trunc(p) {
			continue
		}
		// The span takes the edge value's bin (the one above the edge)
		// when it starts at the edge.
		if spanTakes := !end.upper; spanTakes == !end.open {
			continue
		}
		return nil, d.edgeUnanswerable(name, end.v, end.upper, end.open, p)
	}
	return d.rangeSpan(r), nil
}

// edgeUnanswerable is why a real range end v on the edge at position p is
// not answered from the synopsis (realSpans).
func (d Domain) edgeUnanswerable(name string, v float64, upper, open bool, p float64) *unanswerable {
	ops := map[[2]bool]string{{false, false}: ">=", {false, true}: ">", {true, false}: "<=", {true, true}: "<"}
	b := math.Min(p, float64(d.Bins-1)) // the bin holding v
	bin := fmt.Sprintf("[%s, %s)", formatNumber(d.value(b)), formatNumber(d.value(b+1)))
	free := "end the range inside a bin (counted in proportion)"
	if flipped := ops[[2]bool{upper, !open}]; p > 0 && p < float64(d.Bins) {
		// x < e and x >= e inside the domain are exact.
		with := "with"
		if !open {
			with = "without"
		}
		free = fmt.Sprintf("write %s %s %s (%s the rows holding %s), or ", name, flipped, formatNumber(v), with, formatNumber(v)) + free
	}
	return &unanswerable{
		reason: fmt.Sprintf("%s %s %s ends exactly on an edge of the synopsis bins of the real column %s (width %s), and the rows holding %s are in the bin %s, whose count the synopsis knows only as a whole",
			name, ops[[2]bool{upper, open}], formatNumber(v), name, formatNumber((d.Upper-d.Lower)/float64(d.Bins)), formatNumber(v), bin),
		free: free}
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
