package sqlrewrite

import "slices"

// Cells asks for the count of rows per cell of a product domain X: the
// cross product of Dims, each a categorical or a bucketed numeric column.
// The fetch returns (k_1, …, k_d, count) for the non-empty cells, k_i the
// 0-based index of the row's value or bucket in dimension i. Rows with a
// NULL in any dimension, or a value missing from a categorical list, are
// in no cell and are not counted. It is one GROUP BY computed by the
// database: no rows travel.
type Cells struct {
	Dims []CellDim
}

// CellDim is one dimension of a Cells fetch; exactly one of Values,
// Edges, Tiers and Date is set.
type CellDim struct {
	// Column is the backend column.
	Column string
	// Values are the categories: index i is the value Values[i] (all
	// numbers or all strings).
	Values []Value
	// Edges e_0 < … < e_k make k buckets: index i is [e_i, e_{i+1}) of the
	// column, compared in its own type (an exact Edge by its digits),
	// values below e_1 in bucket 0 and values from e_{k-1} on in bucket
	// k-1 (the ends clamp).
	Edges []Edge
	// Date puts a date or timestamp column's rows in cells (dates.go):
	// those that are not dates, or are outside its bounds, in none.
	Date *DateAxis
	// Tiers are first-match ranges (a CASE of tiers, tiers.go): index i is
	// the first Tiers[i] holding the readable value, len(Tiers) when none
	// does; an unreadable value (NULL; on SQLite text or a blob) is in
	// the cell Unreadable says: none, len(Tiers) (the ELSE's, as SQL's
	// CASE puts it) or len(Tiers)+1 (a NULL cell of its own).
	Tiers      []Range
	Unreadable Unreadable
	// ByValue asks a GroupedSummary to group by the column's own values
	// where GroupsByValue says so: the fetch then returns each distinct
	// (readable) value in place of an index, and the caller maps it to its
	// index in Values, dropping the values Values lacks. It is for the
	// values partition selection released, whose number the configuration
	// does not bound: a CASE of n values costs up to n comparisons per
	// row, a GROUP BY of the column one hash or sort. Values hold no NULL.
	ByValue bool
	// Exact matches text Values character for character (Condition.Exact),
	// not in the column's collation: the values partition selection
	// released, each its own key. With ByValue it groups by value on every
	// dialect (on MySQL by exactText).
	Exact bool
}

// GroupsByValue reports whether a GroupedSummary rendered for dialect
// returns d's values rather than their indices: d asks for it (ByValue)
// and equality of values is byte equality, so that every value the
// database returns for a group is the value the caller selected. That
// holds for numbers, for text on PostgreSQL and SQLite, whose default
// collations are binary, and for Exact text on MySQL (grouped by its
// bytes); MySQL's default collations equate 'a', 'A' and 'a ', so other
// text there is keyed by the CASE of its values (cellKey).
func GroupsByValue(d CellDim, dialect Dialect) bool {
	return d.ByValue && len(d.Values) > 0 && (!d.Values[0].IsText || dialect != MySQL || d.Exact)
}

// Size is the number of cells of the dimension.
func (d CellDim) Size() int64 {
	switch {
	case d.Date != nil:
		return int64(d.Date.Size())
	case len(d.Tiers) > 0 && d.Unreadable == UnreadableInNull:
		return int64(len(d.Tiers) + 2)
	case len(d.Tiers) > 0:
		return int64(len(d.Tiers) + 1)
	case len(d.Edges) > 0:
		return int64(len(d.Edges) - 1)
	}
	return int64(len(d.Values))
}

// ValueConditions returns, for each of values, the conditions that select
// the rows a CASE of the values (a Values dimension) puts in its cell: a
// NULL value's rows are the unreadable ones; value i's rows are those
// equal to it and, when firstMatch, to none of the values before it. Where
// the backend's equality is byte equality the extra conditions select
// nothing more; under collations that equate 'a', 'A' and 'a ' (MySQL's
// defaults, SQLite's NOCASE, PostgreSQL's citext), they keep a row of 'a' out of the cell of an 'A' declared
// after it, so that each row is in one group only, as in the CASE.
func ValueConditions(column string, values []Value, firstMatch bool) [][]Condition {
	out := make([][]Condition, len(values))
	var earlier []Value
	for i, v := range values {
		if v.Null {
			out[i] = []Condition{{Column: column, IsNull: true, Text: v.IsText}}
			continue
		}
		out[i] = []Condition{{Column: column, In: []Value{v}, Text: v.IsText}}
		if firstMatch && len(earlier) > 0 {
			out[i] = append(out[i], Condition{Column: column, In: slices.Clone(earlier), Complement: true, Text: v.IsText})
		}
		earlier = append(earlier, v)
	}
	return out
}
