package backend

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"slices"

	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// profiled is the result of a profile fetch (sqlrewrite.Profile): the
// readable values of its column (or their histogram bins, folded) with
// their counts, the number of rows, and the totals of its carried terms.
type profiled struct {
	fetch   sqlrewrite.Fetch // the profile fetch: its table, filter and column
	values  []group          // strictly increasing
	rows    int64            // every filtered row, readable or not
	carried []float64        // the totals of fetch.Profile.Terms
	// gridCarried are the exact totals of its GridIndexSum terms (nil
	// for the others).
	gridCarried []*big.Int
}

// Profile runs a profile fetch and keeps its groups for the rest of the
// snapshot: every later Summary, Histogram, grouped Window and
// GridSumsGrouped fetch over the same rows (table and filter, no unit
// bound) that the groups determine is computed from them without a query:
//
//   - a summary term: COUNT(*), the count of readable values, the clamped
//     sum and sum of squares of the column over the profile's bounds
//     (Σ count·v and Σ count·v², in exact arithmetic, rounded once), or a
//     carried term (the sum of the groups' totals, in exact arithmetic);
//   - a histogram of the column that sqlrewrite.ProfileHistogram accepts
//     (each group's count in the bin of its value; grouped by bin, the
//     groups' own counts);
//   - grouped by value, a grouped window or the grid sums of the column
//     over the profile's bounds (the values, or their grid indices
//     sqlrewrite.GridIndex);
//   - the grid sums n, Σk (SumOnly, all ranks) of another column whose
//     count of readable values and GridIndexSum the profile carries (the
//     exact integer totals of the groups' exact sums).
//
// Each is the same per-row map the corresponding fetch renders, applied to
// the row's profile value, so the numbers are those of the fetch (sums
// exact where the database's own would be rounded). A fetch the profile
// does not determine is sent as before.
func (s *Snapshot) Profile(ctx context.Context, f sqlrewrite.Fetch) error {
	p := f.Profile
	if p == nil || f.Unit != nil {
		return dperr.New(dperr.Internal, "internal error: profile fetch without profile, or with a unit bound")
	}
	out := &profiled{fetch: f, carried: make([]float64, len(p.Terms)), gridCarried: make([]*big.Int, len(p.Terms))}
	sums := make([]*big.Float, len(p.Terms))
	for i := range sums {
		sums[i] = exactFloat()
	}
	width := sqlrewrite.GridIndexSumWidth(s.b.dialect)
	err := s.b.query(ctx, s.q, f, func(rows *sql.Rows) error {
		var v sql.NullFloat64
		var n int64
		terms := make([]sql.NullFloat64, len(p.Terms))
		gridText := make([][]sql.RawBytes, len(p.Terms)) // a GridIndexSum's integers, read as text
		dest := []any{&v, &n}
		for i, t := range p.Terms {
			if t.Kind != sqlrewrite.GridIndexSum {
				dest = append(dest, &terms[i])
				continue
			}
			gridText[i] = make([]sql.RawBytes, width)
			for j := range gridText[i] {
				dest = append(dest, &gridText[i][j])
			}
			out.gridCarried[i] = new(big.Int)
		}
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				return err
			}
			if n < 1 {
				return fmt.Errorf("profile: group of %d rows", n)
			}
			out.rows += n
			switch {
			case !v.Valid:
			case p.Bins > 0: // a bin, Bins for the value Upper: folded into the last
				if !(v.Float64 >= 0 && v.Float64 <= float64(p.Bins)) || v.Float64 != math.Trunc(v.Float64) {
					return fmt.Errorf("profile: bin %v out of range", v.Float64)
				}
				out.values = append(out.values, group{value: min(v.Float64, float64(p.Bins-1)), count: n})
			default:
				out.values = append(out.values, group{value: sqlrewrite.ClampValue(v.Float64, p.Lower, p.Upper), count: n})
			}
			for i, text := range gridText {
				if text == nil {
					continue
				}
				ints := make([]*big.Int, len(text))
				for j, x := range text {
					var ok bool
					if ints[j], ok = new(big.Int).SetString(string(x), 10); !ok || ints[j].Sign() < 0 {
						return fmt.Errorf("profile: grid index sum %q is not a natural number", x)
					}
				}
				sum, err := sqlrewrite.DecodeGridIndexSum(s.b.dialect, ints)
				if err != nil {
					return err
				}
				out.gridCarried[i].Add(out.gridCarried[i], sum)
			}
			for i, t := range terms {
				if math.IsNaN(t.Float64) || math.IsInf(t.Float64, 0) {
					return fmt.Errorf("profile: term %d is not finite", i) // never: clamped sums are finite
				}
				sums[i].Add(sums[i], exactFloat().SetFloat64(t.Float64)) // NULL (a sum over no rows) is 0
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, x := range sums {
		out.carried[i], _ = x.Float64()
	}
	slices.SortFunc(out.values, func(a, b group) int { return cmpFloat(a.value, b.value) })
	out.values = mergeGroups(out.values)
	s.profiles = append(s.profiles, out)
	return nil
}

// exactFloat is a big.Float wide enough to add exactly every sum a profile
// computes: values are 0 or of magnitude in [2^-400, 2^430] with 53-bit
// significands (Render's clamp), so a square's lowest bit is at least
// 2^-904, and a total of at most 2^126 rows' squares is below 2^987.
func exactFloat() *big.Float { return new(big.Float).SetPrec(2048) }

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// mergeGroups adds up the counts of equal neighbouring values of sorted
// groups (the database returns one group per value; a map such as the grid
// index can send neighbours to one value).
func mergeGroups(gs []group) []group {
	out := gs[:0]
	for _, g := range gs {
		if n := len(out); n > 0 && out[n-1].value == g.value {
			out[n-1].count += g.count
			continue
		}
		out = append(out, g)
	}
	return out
}

// profileFor returns the snapshot's profile of the rows f reads, if any
// and if f renders (a malformed fetch is sent, and fails, as before).
func (s *Snapshot) profileFor(f sqlrewrite.Fetch) *profiled {
	if f.Unit != nil || len(s.profiles) == 0 {
		return nil
	}
	if _, err := s.b.render(f); err != nil {
		return nil
	}
	for _, p := range s.profiles {
		if p.fetch.Table == f.Table && sameConditions(p.fetch.Filter, f.Filter) && reflect.DeepEqual(p.fetch.Boolean, f.Boolean) &&
			reflect.DeepEqual(p.fetch.Derived, f.Derived) && slices.Equal(p.fetch.Partitions, f.Partitions) {
			return p
		}
	}
	return nil
}

func sameConditions(a, b []sqlrewrite.Condition) bool {
	return len(a) == 0 && len(b) == 0 || reflect.DeepEqual(a, b)
}

// profileSummary computes a summary fetch from the snapshot's profile, if
// it determines every term.
func (s *Snapshot) profileSummary(f sqlrewrite.Fetch) ([]float64, bool) {
	pr := s.profileFor(f)
	if pr == nil {
		return nil, false
	}
	p := pr.fetch.Profile
	out := make([]float64, len(f.Summary))
	for i, t := range f.Summary {
		if j := slices.Index(p.Terms, t); j >= 0 {
			out[i] = pr.carried[j]
			continue
		}
		if !p.Derives(t) {
			return nil, false
		}
		switch t.Kind {
		case sqlrewrite.CountAll:
			out[i] = float64(pr.rows)
		case sqlrewrite.CountNumbers:
			var n int64
			for _, g := range pr.values {
				n += g.count
			}
			out[i] = float64(n)
		default: // the clamped sum or sum of squares
			sum, term := exactFloat(), exactFloat()
			for _, g := range pr.values {
				term.SetFloat64(g.value)
				if t.Kind == sqlrewrite.ClampedSumSquares {
					term.Mul(term, term)
				}
				sum.Add(sum, term.Mul(term, exactFloat().SetInt64(g.count)))
			}
			out[i], _ = sum.Float64()
		}
	}
	return out, true
}

// profileGridSums computes a grid-sums fetch of n and Σk (SumOnly, all
// ranks) from the snapshot's profile, if it carries that column's count of
// readable values and its GridIndexSum on the same grid: the rows the
// fetch counts and sums are those the terms count and sum.
func (s *Snapshot) profileGridSums(f sqlrewrite.Fetch) (sqlrewrite.GridTotals, bool) {
	g := f.GridSums
	if g == nil || !g.SumOnly || g.Ranks != nil {
		return sqlrewrite.GridTotals{}, false
	}
	pr := s.profileFor(f)
	if pr == nil {
		return sqlrewrite.GridTotals{}, false
	}
	terms := pr.fetch.Profile.Terms
	count := slices.Index(terms, sqlrewrite.SummaryTerm{Kind: sqlrewrite.CountNumbers, Column: g.Column})
	sum := slices.Index(terms, sqlrewrite.SummaryTerm{Kind: sqlrewrite.GridIndexSum, Column: g.Column, Lower: g.Lower, Upper: g.Upper, Unit: g.Unit})
	if count < 0 || sum < 0 || pr.gridCarried[sum] == nil {
		return sqlrewrite.GridTotals{}, false
	}
	return sqlrewrite.GridTotals{Count: int64(pr.carried[count]), Sum: new(big.Int).Set(pr.gridCarried[sum])}, true
}

// profileHistogram computes a histogram fetch from the snapshot's profile.
func (s *Snapshot) profileHistogram(f sqlrewrite.Fetch) ([]int64, bool) {
	pr := s.profileFor(f)
	if pr == nil || f.Histogram == nil || !sqlrewrite.ProfileHistogram(pr.fetch.Profile, f.Histogram) {
		return nil, false
	}
	counts := make([]int64, f.Histogram.Bins)
	for _, g := range pr.values {
		if pr.fetch.Profile.Bins > 0 {
			counts[int(g.value)] += g.count // the same histogram, its bins
			continue
		}
		counts[f.Histogram.HistogramBin(g.value)] += g.count
	}
	return counts, true
}

// profileGroups returns the groups of a grouped window (gridUnit 0: the
// values; else their grid indices) of column over [lo, hi] from the
// snapshot's profile, if it is of that column over those bounds.
func (s *Snapshot) profileGroups(f sqlrewrite.Fetch, column string, lo, hi, gridUnit float64) ([]group, bool) {
	pr := s.profileFor(f)
	if pr == nil {
		return nil, false
	}
	if p := pr.fetch.Profile; p.Bins > 0 || p.Column != column || p.Lower != lo || p.Upper != hi {
		return nil, false
	}
	if gridUnit == 0 {
		return slices.Clone(pr.values), true
	}
	out := make([]group, len(pr.values))
	for i, g := range pr.values {
		out[i] = group{value: float64(sqlrewrite.GridIndex(g.value, lo, hi, gridUnit)), count: g.count}
	}
	return mergeGroups(out), true
}
