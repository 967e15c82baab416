package sqlrewrite

import (
	"errors"
	"strconv"
	"strings"
)

// partitionAlias names the union of the per-partition aggregates.
const partitionAlias = "dpproxy_p"

// partitioned renders a fetch whose Partitions are set, on PostgreSQL, as
// the same aggregate computed on each partition and combined:
//
//	SELECT keys, combine(p_i)… FROM (inner(t₁) UNION ALL inner(t₂) …) AS dpproxy_p (p1, p2, …)
//	[GROUP BY keys] [ORDER BY keys]
//
// where inner(tⱼ) is the fetch's own unpartitioned query with tⱼ for the
// table (Render's shapes, a grouped window without its ORDER BY), each a
// complete aggregate of one relation that postgres_fdw can send to the
// partition's server whole, and combine adds the partitions' values of
// one output: CAST(SUM(p) AS BIGINT) for a count, SUM(p) for a clamped
// sum (a double) or a grid sum (a NUMERIC), grouped by the inner query's
// keys (bin, cell keys, value, grid index) where it has them. Every row is
// in one partition (catalog.Table.Partitions), so each count, and each
// integer grid sum, is the unpartitioned one exactly; a clamped sum adds
// the same clamped values, as partial sums in another order (as a
// parallel aggregate does), so it may differ from the unpartitioned one in
// the last bits of float64 rounding, whose analysis (each row's
// contribution clamped to the public bounds) is unchanged. Totality holds
// as for the unpartitioned shapes: each inner query is one, and the outer
// sums add at most as many partial sums as there are rows (a clamped sum
// of squares of 2^63 rows is finite, Render), over at least one row per
// aggregate without keys (each partition's aggregate returns one row), so
// never NULL.
//
// A profile's groups are merged by their clamped value (the reader adds up
// groups of one value anyway, Profile).
//
// Shapes that read rows rather than an aggregate (a window, its sum, the
// grid sums of ranks, pairs)
// and summaries with a term that partial results cannot combine
// (COUNT(DISTINCT)) read the table itself (Fetch.Table): ok is false. A
// window per partition would have to return each partition's first
// Offset+Limit rows for the coordinator to merge, no fewer than the
// parent's ordered scan of the partitions reads.
func (r *renderer) partitioned(f Fetch) (query string, ok bool, err error) {
	if r.spec.name != "postgres" {
		return "", false, errors.New("sqlrewrite: partitions are rendered for PostgreSQL only")
	}
	if f.Unit != nil {
		return "", false, errors.New("sqlrewrite: partitions with a unit bound")
	}
	var keys int        // leading inner outputs that are group keys
	var outs []TermKind // the kind of each inner output after the keys
	var inner func(Fetch) (string, error)
	var order string
	switch {
	case len(f.Summary) > 0:
		outs, inner = termKinds(f.Summary), r.summary
	case f.Histogram != nil:
		keys, outs, inner = 1, []TermKind{CountAll}, r.histogram
	case f.Window != nil && f.Window.Grouped:
		keys, outs, order = 1, []TermKind{CountAll}, " ORDER BY p1"
		inner = func(g Fetch) (string, error) {
			q, err := r.window(g)
			return strings.TrimSuffix(q, groupedWindowOrder), err
		}
	case f.Cells != nil:
		keys, outs, inner = len(f.Cells.Dims), []TermKind{CountAll}, r.cells
	case f.Grouped != nil:
		keys, outs, inner = len(f.Grouped.Dims), termKinds(f.Grouped.Terms), r.grouped
	case f.GroupedHist != nil:
		keys, outs, inner = len(f.GroupedHist.Dims)+1, []TermKind{CountAll}, r.groupedHistogram
	case f.Keys != nil:
		keys, outs, inner = 1, []TermKind{CountAll}, r.keyCounts
	case f.Profile != nil:
		keys, outs, inner = 1, append([]TermKind{CountAll}, termKinds(f.Profile.Terms)...), r.profile
	case f.GridSums != nil && f.GridSums.Ranks == nil:
		outs, inner = []TermKind{CountAll}, r.gridSums
		for range GridSumWidth(r.dialect) - 1 {
			outs = append(outs, gridSum)
		}
	case f.GroupedGrid != nil:
		keys, outs, inner = len(f.GroupedGrid.Dims), []TermKind{CountAll}, r.groupedGridSums
		for range GridSumWidth(r.dialect) - 1 {
			outs = append(outs, gridSum)
		}
	default: // a window of values or their sum, ranked grid sums, or pairs: rows, not an aggregate
		return "", false, nil
	}
	cols := make([]string, 0, keys+len(outs))
	names := make([]string, 0, keys+len(outs))
	var group []string
	for i := range keys + len(outs) {
		name := "p" + strconv.Itoa(i+1)
		names = append(names, name)
		if i < keys {
			cols, group = append(cols, name), append(group, name)
			continue
		}
		switch outs[i-keys] {
		case CountAll, CountNonNull, CountNumbers:
			cols = append(cols, "CAST(SUM("+name+") AS "+r.spec.integer+")")
		case ClampedSum, ClampedSumSquares, GridIndexSum, gridSum:
			cols = append(cols, "SUM("+name+")")
		default: // COUNT(DISTINCT): partial counts do not add up
			return "", false, nil
		}
	}
	parts := make([]string, len(f.Partitions))
	for i, p := range f.Partitions {
		g := f
		g.Table, g.Partitions = p, nil
		if parts[i], err = inner(g); err != nil {
			return "", false, err
		}
	}
	query = "SELECT " + strings.Join(cols, ", ") + " FROM (" + strings.Join(parts, " UNION ALL ") + ") AS " +
		partitionAlias + " (" + strings.Join(names, ", ") + ")"
	if len(group) > 0 {
		query += " GROUP BY " + strings.Join(group, ", ")
	}
	return query + order, true, nil
}

// gridSum marks an integer sum of a GridSums fetch among the outputs
// partitioned combines (not a summary term kind).
const gridSum TermKind = -1

func termKinds(terms []SummaryTerm) []TermKind {
	kinds := make([]TermKind, len(terms))
	for i, t := range terms {
		kinds[i] = t.Kind
	}
	return kinds
}
