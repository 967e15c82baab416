package sqlrewrite

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

// Profile asks for the filtered rows grouped by their value of Column,
// each group with its value read by clamp to [Lower, Upper] (Render's rule;
// NULL for unreadable values), its number of rows and the sum over its rows
// of each of Terms. The fetch returns (v, count, term_1, …, term_m) per
// group (a GridIndexSum term as GridIndexSumWidth integers), in no order;
// groups with equal v (values beyond a bound, and the unreadable ones) are
// one group to the reader.
//
// It is one scan of the table that answers, computed by the proxy from the
// group totals, every summary term of the statement (Derives tells which
// come from the values themselves; the others are carried as Terms, each a
// count or a sum, so that the totals of the groups add up to it), and,
// for an integer column with few values, every histogram (HistogramBin),
// window and grid sum (GridIndex) of Column over the same bounds: the
// per-row maps of those fetches applied to the group's value. It is meant
// for a column with few distinct values; the number of groups is the number
// of distinct values, so hostile data (fractions or values far beyond the
// bounds in an integer column) makes it larger, never an error.
//
// With Bins set (a real-valued column), the rows are grouped by their bin
// of Histogram{Column, Lower, Upper, Bins} instead (NULL for unreadable
// values): the fetch returns (bin, count, term_1, …) with the bin before
// the histogram's fold (Bins for the value Upper), that histogram and the
// counts are derived, and the column's own sums are carried like any
// other term.
type Profile struct {
	Column       string
	Lower, Upper float64
	// Bins, if not 0, groups by histogram bin rather than by value.
	Bins int
	// Terms are the carried terms: CountNonNull, CountNumbers, ClampedSum
	// or ClampedSumSquares (terms whose group totals add up to the total).
	Terms []SummaryTerm
}

// Derives reports whether the summary term t is computed from the groups'
// values and counts alone: COUNT(*) (every group), the count of readable
// values of Column (the non-NULL groups), and, grouped by value, the
// clamped sum and sum of squares of Column over the profile's own bounds
// (Σ count·v, Σ count·v²).
func (p *Profile) Derives(t SummaryTerm) bool {
	switch t.Kind {
	case CountAll:
		return true
	case CountNumbers:
		return t.Column == p.Column
	case ClampedSum, ClampedSumSquares:
		return p.Bins == 0 && t.Column == p.Column && t.Lower == p.Lower && t.Upper == p.Upper
	}
	return false
}

// Carries reports whether the summary term t can be a carried term: a
// count or a sum, whose totals over the groups add up to the term over
// all rows (COUNT(DISTINCT c) cannot).
func Carries(t SummaryTerm) bool {
	switch t.Kind {
	case CountAll, CountNonNull, CountNumbers, ClampedSum, ClampedSumSquares, GridIndexSum:
		return true
	}
	return false
}

// GridIndexSumWidth is the number of integers a profile's GridIndexSum
// term returns per group on d: Σk on PostgreSQL and MySQL/MariaDB (a
// NUMERIC or DECIMAL, exact at any size); on SQLite, which sums INTEGERs
// in int64 and fails on overflow (an error that would depend on the
// data), Σ⌊k/2^15⌋ and Σ(k mod 2^15), each term below 2^16, so neither
// overflows below 2^47 rows.
func GridIndexSumWidth(d Dialect) int {
	if d == SQLite {
		return 2
	}
	return 1
}

// gridIndexSumShift is the split of a grid index on SQLite
// (GridIndexSumWidth).
const gridIndexSumShift = 15

// DecodeGridIndexSum returns Σk from a group's GridIndexSumWidth integers
// on d.
func DecodeGridIndexSum(d Dialect, x []*big.Int) (*big.Int, error) {
	if len(x) != GridIndexSumWidth(d) {
		return nil, fmt.Errorf("sqlrewrite: %d integers of a grid index sum, want %d", len(x), GridIndexSumWidth(d))
	}
	if d != SQLite {
		return new(big.Int).Set(x[0]), nil
	}
	sum := new(big.Int).Lsh(x[0], gridIndexSumShift)
	return sum.Add(sum, x[1]), nil
}

// profileTerm renders the aggregates of a carried term: one, or for a
// GridIndexSum GridIndexSumWidth of them.
func (r *renderer) profileTerm(t SummaryTerm) ([]string, error) {
	if t.Kind != GridIndexSum {
		term, err := r.term(t)
		return []string{term}, err
	}
	col, err := r.column(t.Column)
	if err != nil {
		return nil, err
	}
	k, err := r.gridIndex(col, t.Lower, t.Upper, t.Unit)
	if err != nil {
		return nil, err
	}
	if r.dialect != SQLite {
		return []string{"COALESCE(SUM(" + k + "), 0)"}, nil
	}
	part := strconv.Itoa(1 << gridIndexSumShift)
	return []string{"COALESCE(SUM(" + k + " / " + part + "), 0)", "COALESCE(SUM(" + k + " % " + part + "), 0)"}, nil
}

// profile renders a Profile fetch:
//
//	SELECT clamp(c), COUNT(*), term_1, …, term_m FROM t WHERE F GROUP BY c
//
// with clamp and the terms as in Summary. It groups by the column itself,
// so that the database hashes the column's own values and computes the
// clamp once per group (PostgreSQL, 10^6 integers: 0.38 s against 0.51 s
// grouping by the clamped value). Values that GROUP BY puts in one group
// are equal numbers (1 and 1.0; NaN with NaN on PostgreSQL; NULLs), or on
// SQLite text or blobs that are all unreadable, so every row of a group
// has the clamp the group returns; groups with the same clamped value
// (values beyond a bound) are added up by the reader. With Bins, the key
// is the histogram's bin expression, GROUP BY 1, unfolded:
//
//	SELECT CAST(FLOOR((clamp(c) - lo) * bins / width) AS int), COUNT(*), term_1, … FROM t WHERE F GROUP BY 1
func (r *renderer) profile(f Fetch) (string, error) {
	p := f.Profile
	col, err := r.column(p.Column)
	if err != nil {
		return "", err
	}
	var v, group string
	if p.Bins > 0 {
		v, err = r.bin(col, &Histogram{Column: p.Column, Lower: p.Lower, Upper: p.Upper, Bins: p.Bins})
		group = "1"
	} else {
		v, err = r.clamp(col, p.Lower, p.Upper)
		group = col
	}
	if err != nil {
		return "", err
	}
	cols := []string{v, "COUNT(*)"}
	for _, t := range p.Terms {
		if !Carries(t) || t.Kind == CountAll {
			return "", fmt.Errorf("sqlrewrite: a profile cannot carry the summary term kind %d", int(t.Kind))
		}
		terms, err := r.profileTerm(t)
		if err != nil {
			return "", err
		}
		cols = append(cols, terms...)
	}
	from, err := r.from(f, "")
	if err != nil {
		return "", err
	}
	if p.Bins == 0 && r.spec.name == "mysql" && filtersOther(f, p.Column) {
		// The rows pass a condition on another column: MariaDB walks an
		// index on the grouped column to avoid a temporary table, and an
		// index that does not hold the other column costs a row lookup
		// per row (2.8×10^7 rows, 40% selected by a range on another
		// column, 128 MB buffer pool: over 600 s through the index, 8.7 s
		// scanning; bench/RESULTS-latency.md). The hint leaves the index
		// free for the WHERE.
		table, err := r.qualifier(f)
		if err != nil {
			return "", err
		}
		from = strings.Replace(from, " FROM "+table, " FROM "+table+" USE INDEX FOR GROUP BY ()", 1)
	}
	return "SELECT " + strings.Join(cols, ", ") + from + " GROUP BY " + group, nil
}

// ClampValue is clamp of Render's doc comment on a readable value v, in
// float64: lo below lo, hi above hi, 0 for a magnitude below
// catalog.MinBoundMagnitude when [lo, hi] holds such nonzero values, else
// v. It is the map the rendered CASE computes, so a proxy-side map of a
// profile's values agrees with the database's.
func ClampValue(v, lo, hi float64) float64 {
	m := catalog.MinBoundMagnitude
	switch {
	case v < lo:
		return lo
	case v > hi || math.IsNaN(v):
		return hi
	case lo < m && hi > -m && v > -m && v < m:
		return 0
	}
	return v
}

// HistogramBin is the bin the Histogram fetch h puts a readable value v
// in, computed with the float64 operations of the rendered expression:
// FLOOR((clamp(v) − Lower) · Bins / (Upper − Lower)), Bins − 1 for
// anything above. (Each operation is one IEEE operation in every dialect,
// as Render documents; Go does not fuse a multiplication with a division.)
func (h *Histogram) HistogramBin(v float64) int {
	width := h.Upper - h.Lower
	d := ClampValue(v, h.Lower, h.Upper) - h.Lower
	b := math.Floor(float64(d*float64(h.Bins)) / width)
	if b > float64(h.Bins-1) {
		return h.Bins - 1
	}
	return int(b)
}

// ProfileHistogram reports whether the histogram h can be computed from the
// groups of profile p: grouped by bin, h is that histogram; grouped by
// value, h is of p's column, starts at p's lower bound, ends
// at or above its upper bound, and p's upper bound falls in h's last bin.
// Then, for every row, h's bin of the row's value equals h's bin of the
// row's profile value clamp(v, p.Lower, p.Upper): below the lower bound
// both are Lower; above p.Upper the profile value is p.Upper and the
// histogram's value is at least p.Upper, both in the last bin (the bin is
// non-decreasing in the value, each IEEE step being monotone); between
// them the values are equal, except for a magnitude below
// catalog.MinBoundMagnitude that only one of the two clamps flushes to 0,
// which happens only when p.Upper ≤ −MinBoundMagnitude < 0 ≤ h.Upper, so
// that both lie in [p.Upper, h.Upper]: the last bin. A histogram with a
// cell for its upper bound (Top) is never computed from a profile, which
// does not tell that bound apart from the last bin.
func ProfileHistogram(p *Profile, h *Histogram) bool {
	if h.Top {
		return false
	}
	if p.Bins > 0 { // grouped by bin: that histogram only
		return *h == Histogram{Column: p.Column, Lower: p.Lower, Upper: p.Upper, Bins: p.Bins}
	}
	if h.Column != p.Column || h.Lower != p.Lower || !(h.Upper >= p.Upper) || h.Bins < 1 {
		return false
	}
	return h.HistogramBin(p.Upper) == h.Bins-1
}

// GridIndex is the grid index the rendered expression gives a readable
// value v (render_grid.go): FLOOR((clamp(v) − lo)/unit + ½).
func GridIndex(v, lo, hi, unit float64) int64 {
	return int64(math.Floor(float64((ClampValue(v, lo, hi)-lo)/unit) + 0.5))
}
