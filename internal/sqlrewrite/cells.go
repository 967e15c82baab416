package sqlrewrite

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
	// column cast to double, values below e_1 in bucket 0 and values from
	// e_{k-1} on in bucket k-1 (the ends clamp).
	Edges []float64
	// Date puts a date or timestamp column's rows in cells (dates.go):
	// those that are not dates, or are outside its bounds, in none.
	Date *DateAxis
	// Tiers are first-match ranges (a CASE of tiers, tiers.go): index i is
	// the first Tiers[i] holding the readable value, len(Tiers) when none
	// does.
	Tiers []Range
}

// Size is the number of cells of the dimension.
func (d CellDim) Size() int64 {
	switch {
	case d.Date != nil:
		return int64(d.Date.Size())
	case len(d.Tiers) > 0:
		return int64(len(d.Tiers) + 1)
	case len(d.Edges) > 0:
		return int64(len(d.Edges) - 1)
	}
	return int64(len(d.Values))
}
