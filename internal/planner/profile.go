package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// maxProfileValues is the widest declared integer range whose column a
// profile groups by (the executor reads windows of such columns grouped,
// exec.maxGroupedValues, by the same rule).
const maxProfileValues = 1 << 16

// profileOf chooses the one scan of a plan (sqlrewrite.Profile), from
// public facts only: when a release asks for a GROUP BY histogram of an
// integer column with at most maxProfileValues declared values that the
// column's values determine (sqlrewrite.ProfileHistogram: the grid
// median of auto-mean, auto-variance and the exponential mechanism), the
// statement reads the filtered rows grouped by that column's clamped value,
// with the count of each group and the sums of every other summary term
// of the statement (all of them counts and sums), and the count and exact
// sum of grid indices of every other column whose grid sums n and Σk a
// release reads (SUM, AVG: GridIndexSum). Every summary term, that
// histogram and the others of the column, and every window and grid sum of
// the column the mechanisms then ask for, come from those groups
// (backend.Snapshot.Profile) instead of one query each. Otherwise, when a
// release asks for a histogram of another column (the 2^14 bins of a
// real-valued column's grid median), the rows are grouped by that
// histogram's bins, and the summary terms and that histogram come from the
// groups (the column's windows and grid sums are further queries). Else,
// when squares is set (groupsSquares) and a release sums the squares of an
// integer column with at most maxProfileValues declared values (VARIANCE,
// STDDEV), the rows are grouped by that column's clamped value as above:
// one GROUP BY that reads the column once per row, where the summary query
// evaluates its clamp for the sum and (on SQLite) twice for the square.
// Else, when a release reads the exact grid sums of such a column (AVG and
// VARIANCE by auto-mean and auto-variance), the rows are grouped by its
// value as above: the grid sums of a column with few values are a GROUP BY
// by value anyway (backend.Snapshot.GridSumsGrouped), except n and Σk
// alone (AVG, SUM) on MySQL/MariaDB (groupsSums). Nil when no
// release has a histogram or (with squares) a sum of squares of such a
// column, or a summary term is not a count or a sum (COUNT(DISTINCT)), or
// the table has a privacy unit (its fetches read bounded rows,
// render_unit.go).
//
// What is released does not change: each number computed from the groups
// is the per-row map of the fetch it replaces applied to the row's value
// clamped to the column's bounds, which equals the fetch's own map
// (sqlrewrite.ProfileHistogram, GridIndex); sums derived from values are
// exact where the database's were rounded, and carried sums are the
// database's per-group sums added exactly (the rounding of a parallel
// aggregate's partial sums). So every mechanism sees the statistic its
// analysis assumes (each row's contribution clamped to the public bounds),
// with the same sensitivity.
func profileOf(p *Plan, driver string) *sqlrewrite.Profile {
	squares := groupsSquares(driver)
	if p.Table.HasPrivacyUnit() {
		return nil
	}
	var prof *sqlrewrite.Profile
	for _, r := range p.Releases {
		h := r.Mechanism.Histogram(r)
		if h == nil || r.Stat.Column == nil || !fewValues(r.Stat.Column) {
			continue
		}
		lo, hi, _ := r.Stat.Column.Bounds()
		candidate := &sqlrewrite.Profile{Column: r.Stat.Column.Source, Lower: lo, Upper: hi}
		if sqlrewrite.ProfileHistogram(candidate, h) {
			prof = candidate
			break
		}
	}
	for _, r := range p.Releases { // else the first histogram's bins (a real-valued column)
		if h := r.Mechanism.Histogram(r); prof == nil && h != nil {
			prof = &sqlrewrite.Profile{Column: h.Column, Lower: h.Lower, Upper: h.Upper, Bins: h.Bins}
		}
	}
	for _, r := range p.Releases { // else a sum of squares of such an integer column
		if !squares || prof != nil || r.Stat.Column == nil || !fewValues(r.Stat.Column) {
			continue
		}
		lo, hi, _ := r.Stat.Column.Bounds()
		for _, t := range r.Mechanism.Terms(r) {
			if t.Kind == sqlrewrite.ClampedSumSquares && t.Column == r.Stat.Column.Source && t.Lower == lo && t.Upper == hi {
				prof = &sqlrewrite.Profile{Column: t.Column, Lower: lo, Upper: hi}
				break
			}
		}
	}
	for _, r := range p.Releases { // else the grid sums of such a column (AVG, VARIANCE)
		if prof != nil || r.Stat.Column == nil || !fewValues(r.Stat.Column) || !readsGridSums(r) {
			continue
		}
		if g, ok := GridSumsRead(r); ok && g.SumOnly && !groupsSums(driver) {
			continue
		}
		lo, hi, _ := r.Stat.Column.Bounds()
		prof = &sqlrewrite.Profile{Column: r.Stat.Column.Source, Lower: lo, Upper: hi}
	}
	if prof == nil {
		return nil
	}
	for _, r := range p.Releases {
		terms := r.Mechanism.Terms(r)
		if g, ok := GridSumsRead(r); ok && g.SumOnly && (prof.Bins > 0 || g.Column != prof.Column) {
			// n and Σk of another column (SUM, AVG): carried exactly.
			terms = append(terms, sqlrewrite.SummaryTerm{Kind: sqlrewrite.CountNumbers, Column: g.Column},
				sqlrewrite.SummaryTerm{Kind: sqlrewrite.GridIndexSum, Column: g.Column, Lower: g.Lower, Upper: g.Upper, Unit: g.Unit})
		}
		for _, t := range terms {
			switch {
			case !sqlrewrite.Carries(t):
				return nil
			case prof.Derives(t) || slices.Contains(prof.Terms, t):
			default:
				prof.Terms = append(prof.Terms, t)
			}
		}
	}
	return prof
}

// readsGridSums reports whether r's mechanism reads only the exact grid
// sums of its column (the edge releases of auto-mean and auto-variance,
// the laplace mechanism's sums and centred sums).
func readsGridSums(r *Release) bool {
	switch r.Mechanism.(type) {
	case autoMean, autoVariance:
		return true
	case laplaceMechanism:
		return r.Stat.Kind == StatSum || r.Stat.Kind == StatCenteredSum || r.Stat.Kind == StatCenteredSumSquares
	}
	return false
}

// groupsSquares reports whether profileOf reads a sum of squares of an
// integer column with few values by grouping the rows on the backend of the
// catalog driver (a public setting): on SQLite, as before; not on
// PostgreSQL or MySQL/MariaDB, where the one-row summary query costs no
// more than the GROUP BY on a column with few values and less on one with
// thousands (end to end, VARIANCE ÷ the exact VAR_POP, PostgreSQL 15:
// 10^6 rows, 75 values, 0.79× summary, 0.83× grouped; 2.8×10^7 rows, 3,842
// values, 1.29× summary, 1.63× grouped, whose hash aggregate dominates;
// MariaDB 10.11, 10^6 rows: 1.41× summary, 1.57× grouped, a temporary
// table and a filesort; bench/RESULTS-latency.md).
func groupsSquares(driver string) bool {
	return driver != catalog.DriverMySQL && driver != catalog.DriverPostgres
}

// groupsSums reports whether profileOf groups the rows by the value of an
// integer column with few values whose n and Σk alone a release reads
// (AVG, SUM) on the backend of the catalog driver: not on MySQL/MariaDB,
// whose one-row sum of grid indices in DOUBLE (sqlrewrite.GridSums.
// FloatSum, backend.Snapshot.GridSumsGrouped) costs 0.77× the GROUP BY's
// temporary table (MariaDB 10.11, 10^6 rows, 75 values, server CPU time;
// bench/RESULTS-latency.md).
func groupsSums(driver string) bool {
	return driver != catalog.DriverMySQL
}

// fewValues reports whether c is an integer column with declared bounds at
// most maxProfileValues apart.
func fewValues(c *catalog.Column) bool {
	lo, hi, ok := c.Bounds()
	return ok && c.Type == catalog.Integer && hi-lo < maxProfileValues
}

// explainProfile is EXPLAIN's row for the plan's one scan.
func (p *Plan) explainProfile() string {
	prof := p.Profile
	name := func(source string) string {
		for _, c := range p.Table.Columns {
			if c.Source == source {
				return c.Name
			}
		}
		return source
	}
	var carried, hists, grids []string
	for _, t := range prof.Terms {
		switch t.Kind {
		case sqlrewrite.CountNonNull, sqlrewrite.CountNumbers:
			carried = append(carried, fmt.Sprintf("COUNT(%s)", name(t.Column)))
		case sqlrewrite.ClampedSum:
			carried = append(carried, fmt.Sprintf("SUM(%s clamped)", name(t.Column)))
		case sqlrewrite.ClampedSumSquares:
			carried = append(carried, fmt.Sprintf("SUM(%s clamped, squared)", name(t.Column)))
		case sqlrewrite.GridIndexSum:
			carried = append(carried, fmt.Sprintf("the exact SUM of %s's grid indices", name(t.Column)))
			grids = append(grids, name(t.Column))
		}
	}
	for i, r := range p.Releases {
		if h := r.Mechanism.Histogram(r); h != nil && sqlrewrite.ProfileHistogram(prof, h) {
			hists = append(hists, fmt.Sprintf("#%d", i+1))
		}
	}
	col := name(prof.Column)
	per := "its row count"
	if len(carried) > 0 {
		per += " and " + strings.Join(carried, ", ")
	}
	gridSums := ""
	if len(grids) > 0 {
		gridSums = ", the grid sums n, Σk of " + strings.Join(grids, ", ")
	}
	if prof.Bins > 0 {
		return fmt.Sprintf("one query reads the filtered rows grouped by the bin of %s clamped to [%g, %g] in %d equal bins (one group for NULL), per group %s; "+
			"the proxy computes from these totals the summary aggregates of every release%s and the histogram(s) of %s, without another query; "+
			"windows and other grid sums are further queries",
			col, prof.Lower, prof.Upper, prof.Bins, per, gridSums, strings.Join(hists, ", "))
	}
	derived := "the summary aggregates of every release" + gridSums
	if len(hists) > 0 {
		derived += ", the histogram(s) of " + strings.Join(hists, ", ")
	}
	return fmt.Sprintf("one query reads the filtered rows grouped by %s clamped to [%g, %g] (a group per value, one for NULL), per group %s; "+
		"the proxy computes from these totals %s and the windows and grid sums of %s "+
		"that the mechanisms ask for, without another query; a window of another column is a further query",
		col, prof.Lower, prof.Upper, per, derived, col)
}
