package sqlrewrite

import "github.com/dpproxy/dpproxy/internal/catalog"

// Fetch is what the proxy reads from the backend for one plan step: a typed,
// dialect-neutral description rendered to SQL by Render. Every name in it is
// the backend's (catalog Source names); every bound is public.
type Fetch struct {
	// Table is the backend table (Source), possibly schema-qualified.
	Table string
	// Partitions, if set, are backend relations that together hold
	// exactly Table's rows, each row in one of them
	// (catalog.Table.Partitions): aggregates are then computed per
	// partition and combined (partitioned.go). PostgreSQL only; not with
	// Unit.
	Partitions []string
	// Filter is the conjunction of row conditions, with backend column names.
	Filter []Condition
	// Boolean, if set, is a further row condition with OR and NOT (backend
	// column names in its leaves), ANDed with Filter. It has SQL's meaning:
	// a row whose column is NULL satisfies neither a leaf nor its NOT.
	Boolean *Predicate
	// Unit, if set, bounds the rows each privacy unit contributes, after
	// Filter and Boolean (render_unit.go).
	Unit *UnitBound
	// Derived are row expressions computed as columns of the table
	// (render_rowexpr.go); the other parts may name them as columns, and a
	// Unit bound reads them as columns of the table.
	Derived []DerivedColumn
	// Exactly one of Summary, Window, Histogram, Pairs, GridSums, Cells,
	// Grouped, Keys and Profile is set.
	Summary   []SummaryTerm
	Window    *Window
	Histogram *Histogram
	Pairs     *Pairs
	// GridSums are exact integer sums on a fixed-point grid (render_grid.go).
	GridSums *GridSums
	// Cells is a histogram over a product domain (cells.go).
	Cells *Cells
	// Grouped is a summary per cell of a product domain (render_grouped.go).
	Grouped *GroupedSummary
	// GroupedHist is a histogram per cell of a product domain
	// (render_grouped.go).
	GroupedHist *GroupedHistogram
	// GroupedGrid is GridSums per cell of a product domain
	// (render_grid.go).
	GroupedGrid *GroupedGridSums
	// Keys asks for the distinct values of a column with their counts
	// (render_grouped.go), for partition selection.
	Keys *KeyCounts
	// Profile groups the rows by the clamped value of a column, with
	// per-group counts and sums (profile.go): one scan for a statement's
	// summary terms, histograms, windows and grid sums of that column.
	Profile *Profile
	// OrderByValue ranks the rows of a Window (not Grouped) and of a
	// GridSums rank slice by the value the fetch returns (the clamped
	// value or its grid index) instead of by the column itself. The
	// column's own order, which an index serves, is the value's order
	// only where the backend sorts the column as numbers; MySQL and
	// MariaDB read a text column as numbers in the clamp yet sort it as
	// text ('10' before '9'), so a window ranked by it would hold other
	// ranks than the mechanism's. The caller sets it when the column's
	// backend type does not vouch for its order (backend.Snapshot reads
	// that type in the fetch's own transaction).
	OrderByValue bool
	// Booleans are the columns of Table, declared integer, that PostgreSQL
	// stores as boolean: every part of the fetch reads such a column's
	// value as the number MySQL's BOOLEAN (TINYINT(1)) is, 1 for true and
	// 0 for false, NULL staying NULL (renderer.column). The backend sets
	// it from the types it read for the configured table Declared
	// (backend.Backend.SetBooleans). PostgreSQL only.
	Booleans []string
	// Declared is the configured table (catalog.Table.Name) whose
	// declarations the fetch reads Table by: two configured tables over
	// one backend table may declare its columns differently (one integer,
	// one text, or not at all), and each reads them as it declares them.
	Declared string
}

// TermKind is a summary aggregate the database computes.
type TermKind int

// The summary terms.
const (
	// CountAll is COUNT(*) over the filtered rows.
	CountAll TermKind = iota + 1
	// CountNonNull is COUNT(col), of the values SummaryTerm.Type reads.
	CountNonNull
	// CountNumbers counts the rows whose col holds a value the clamped
	// terms and fetches read as a number (Render: not NULL, and on SQLite
	// an INTEGER or REAL): the count that matches the values a window of
	// the column returns.
	CountNumbers
	// ClampedSum is SUM of col clamped to [Lower, Upper], NULLs skipped.
	ClampedSum
	// ClampedSumSquares is SUM of the square of col clamped to [Lower, Upper].
	ClampedSumSquares
	// CountDistinctValues is COUNT(DISTINCT col), of the values
	// SummaryTerm.Type reads.
	CountDistinctValues
	// GridIndexSum is the exact integer sum of col's grid indices on the
	// grid of [Lower, Upper] with step Unit (GridSums' map), over the
	// values read as numbers. Only a Profile carries it, read exactly in
	// GridIndexSumWidth integers (DecodeGridIndexSum).
	GridIndexSum
)

// SummaryTerm is one aggregate of a summary fetch; the fetch returns one row
// with one float64 per term, in order (0 for a sum over no rows).
type SummaryTerm struct {
	Kind         TermKind
	Column       string
	Lower, Upper float64
	// Unit is the grid step of a GridIndexSum.
	Unit float64
	// Type is the declared type of Column on a CountNonNull or
	// CountDistinctValues term, which then count only the values the
	// type's reading rule reads, every other value being NULL as col IS
	// NULL reads it (Condition): on an integer or real column the numbers
	// (on SQLite a value stored as INTEGER or REAL, never text, even
	// numeric text such as '12.5', nor a blob: CountNumbers' rule), on a
	// date or timestamp column the values dates.go's rule reads as dates
	// (Condition.Temporal). On a text column, or unset, they count every
	// non-NULL value.
	Type catalog.ColumnType
}

// Window asks for the values of Column, clamped to [Lower, Upper], NULLs
// skipped, sorted ascending, with 0-based ranks in [Offset, Offset+Limit).
type Window struct {
	Column       string
	Lower, Upper float64
	Offset       int64
	Limit        int64
	// GridUnit, if not 0, asks for the values' grid indices (GridSums, with
	// Lower, Upper and this unit) instead of the values.
	GridUnit float64
	// Grouped asks for the same window in another shape: every distinct
	// value (or grid index) of the filtered column with its count, in
	// increasing order, from which the reader takes ranks Offset to
	// Offset+Limit-1 itself. It is one aggregate scan instead of a sort of
	// the column, worth it when the column has few distinct values (an
	// integer column with a small declared range).
	Grouped bool
}

// Pairs asks for every row's (Y, X), each clamped to its bounds, over the
// rows where both are non-NULL, in no particular order: what the
// regression mechanisms need (they read every row; the plan says so).
type Pairs struct {
	Y, X           string
	YLower, YUpper float64
	XLower, XUpper float64
}

// Histogram asks for the count of rows per bin of Column clamped to
// [Lower, Upper], NULLs skipped, with Bins equal-width bins; the fetch returns
// (bin, count) for the non-empty bins, the value Upper falling in the last bin
// or, with Top, in a cell of its own, bin Bins.
type Histogram struct {
	Column       string
	Lower, Upper float64
	Bins         int
	// Top gives the value Upper (and so every value clamped to it) the
	// cell Bins of its own: a real column's synopsis, whose buckets and
	// ranges tell the upper bound apart from the values just below it
	// (GROUP BY FLOOR(x / w) * w puts x = Upper in a bucket of its own
	// when Upper is a multiple of w).
	Top bool
}

// Cells is the number of counts the histogram returns: Bins, and one
// more with Top.
func (h *Histogram) Cells() int {
	if h.Top {
		return h.Bins + 1
	}
	return h.Bins
}

// Dialect is the SQL dialect of a backend.
type Dialect int

// The dialects.
const (
	SQLite Dialect = iota + 1
	PostgreSQL
	MySQL
)
