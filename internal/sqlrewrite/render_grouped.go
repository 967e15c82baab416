package sqlrewrite

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// GroupedSummary asks for the summary terms of every cell of a product
// domain, in one GROUP BY computed by the database: the fetch returns
// (k_1, …, k_d, term_1, …, term_m) for the non-empty cells, k_i the cell
// index of dimension i as in Cells (rows with a NULL or undeclared key are
// in no cell and are dropped). Cells missing from the result are empty:
// their counts and sums are 0, which the caller fills in.
type GroupedSummary struct {
	Dims  []CellDim
	Terms []SummaryTerm
}

// grouped renders a GroupedSummary fetch:
//
//	SELECT key0, key1, term1, term2 FROM t WHERE F GROUP BY 1, 2
//
// with the keys of Cells (cellKey, or the value where GroupsByValue) and
// the terms of Summary.
func (r *renderer) grouped(f Fetch) (string, error) {
	g := f.Grouped
	if len(g.Dims) == 0 || len(g.Terms) == 0 {
		return "", errors.New("sqlrewrite: a grouped summary needs dimensions and terms")
	}
	cols := make([]string, 0, len(g.Dims)+len(g.Terms))
	group := make([]string, len(g.Dims))
	for i, d := range g.Dims {
		key, err := r.groupedKey(d)
		if err != nil {
			return "", err
		}
		cols = append(cols, key)
		group[i] = strconv.Itoa(i + 1)
	}
	for _, t := range g.Terms {
		term, err := r.term(t)
		if err != nil {
			return "", err
		}
		cols = append(cols, term)
	}
	from, err := r.from(f, "")
	if err != nil {
		return "", err
	}
	return "SELECT " + strings.Join(cols, ", ") + from + " GROUP BY " + strings.Join(group, ", "), nil
}

// GroupedHistogram asks for the histogram of one column in every cell of
// a product domain, in one GROUP BY computed by the database: the fetch
// returns (k_1, …, k_d, bin, count) for the non-empty (cell, bin) pairs,
// the keys as in GroupedSummary (a dimension grouped by value returns
// values), the bins as Histogram's. Each cell's histogram is the
// Histogram fetch of the same rows with the cell's conditions added to
// the filter: one scan for every group of a GROUP BY instead of one each.
type GroupedHistogram struct {
	Dims      []CellDim
	Histogram Histogram
}

// groupedHistogram renders a GroupedHistogram fetch:
//
//	SELECT g1, g2, CASE WHEN b > last THEN last ELSE b END, COUNT(*)
//	FROM (SELECT key1 AS g1, key2 AS g2, bin AS b FROM t WHERE F AND readable(c)) AS h
//	GROUP BY 1, 2, 3
func (r *renderer) groupedHistogram(f Fetch) (string, error) {
	g := f.GroupedHist
	if len(g.Dims) == 0 {
		return "", errors.New("sqlrewrite: a grouped histogram needs dimensions")
	}
	h := g.Histogram
	if h.Top {
		return "", errors.New("sqlrewrite: a grouped histogram has no cell of its own for the upper bound")
	}
	col, err := r.column(h.Column)
	if err != nil {
		return "", err
	}
	inner, outer, group, err := r.groupedKeys(g.Dims)
	if err != nil {
		return "", err
	}
	bin, err := r.bin(col, &h)
	if err != nil {
		return "", err
	}
	inner = append(inner, bin+" AS b")
	last := strconv.Itoa(h.Bins - 1)
	outer = append(outer, "CASE WHEN b > "+last+" THEN "+last+" ELSE b END", "COUNT(*)")
	group = append(group, strconv.Itoa(len(g.Dims)+1))
	from, err := r.from(f, r.readable(col))
	if err != nil {
		return "", err
	}
	return "SELECT " + strings.Join(outer, ", ") + " FROM (SELECT " + strings.Join(inner, ", ") + from + ") AS h GROUP BY " +
		strings.Join(group, ", "), nil
}

// groupedKeys renders the keys of a grouped fetch's dimensions for its
// inner select ("key_i AS g_i"), their names ("g_i") and their GROUP BY
// positions ("i"), in order.
func (r *renderer) groupedKeys(dims []CellDim) (inner, names, group []string, err error) {
	for i, d := range dims {
		key, err := r.groupedKey(d)
		if err != nil {
			return nil, nil, nil, err
		}
		name := "g" + strconv.Itoa(i+1)
		inner, names, group = append(inner, key+" AS "+name), append(names, name), append(group, strconv.Itoa(i+1))
	}
	return inner, names, group, nil
}

// groupedKey renders a GroupedSummary's key of one dimension: the cell
// index (cellKey), or the readable value where GroupsByValue (a number
// as exactNumber reads it).
func (r *renderer) groupedKey(d CellDim) (string, error) {
	if !GroupsByValue(d, r.dialect) {
		return r.cellKey(d)
	}
	for _, v := range d.Values {
		if v.Null || v.IsText != d.Values[0].IsText {
			return "", fmt.Errorf("sqlrewrite: values of %s grouped by value must be of one type and not NULL", d.Column)
		}
	}
	col, err := r.column(d.Column)
	if err != nil {
		return "", err
	}
	if d.Values[0].IsText && d.Exact {
		return r.exactText(col), nil
	}
	if d.Values[0].IsText {
		return col, nil
	}
	if r.spec.typed {
		return r.exactNumber(col), nil
	}
	return "CASE WHEN " + r.readable(col) + " THEN " + col + " END", nil
}

// KeyCounts asks for every non-NULL value of Column among the filtered
// rows with its number of rows: (value, count) per distinct value. It
// reads private values; only partition selection may use it, and only the
// values it selects leave the proxy. On a unit table the fetch's
// UnitBound must be keyed by the same column (UnitBound.Key): the counts
// are then of the bounded rows, and with MaxRows = 1 they are the numbers
// of distinct units per value, each unit counted toward at most MaxGroups
// values.
type KeyCounts struct {
	Column string
	// Numeric is set for an integer column: its values are read as numbers.
	Numeric bool
}

// keyCounts renders a KeyCounts fetch:
//
//	SELECT c, COUNT(*) FROM t WHERE F AND c IS NOT NULL GROUP BY c
//
// (for a numeric column, readable(c) instead of c IS NOT NULL, and the
// key exactNumber(c), which groups the rows as c does; with a unit bound,
// FROM the bounded rows, the condition inside it). A text
// column is grouped character for character (exactText: on MySQL its
// utf8mb4 bytes), so each spelling is counted, selected and released on
// its own; for Vitess (RenderVitess) by the hash of those bytes and then
// the bytes, GROUP BY sortKeyHash(k), k, which groups the rows alike.
func (r *renderer) keyCounts(f Fetch) (string, error) {
	col, err := r.column(f.Keys.Column)
	if err != nil {
		return "", err
	}
	present := col + " IS NOT NULL"
	if f.Keys.Numeric {
		present = r.readable(col) // a number, by the rule of clamp
	}
	if u := f.Unit; u != nil {
		if u.Key != f.Keys.Column || u.KeyNumeric != f.Keys.Numeric {
			return "", errors.New("sqlrewrite: key counts on a unit table need a unit bound keyed by the same column")
		}
		present = "" // inside the bounding (UnitBound.Key)
	}
	from, err := r.from(f, present)
	if err != nil {
		return "", err
	}
	if f.Keys.Numeric {
		key := r.exactNumber(col) // read exactly: a FLOAT or real widened
		return "SELECT " + key + ", COUNT(*)" + from + " GROUP BY " + key, nil
	}
	// Each spelling its own key (exactText): in the column's collation,
	// MySQL would return one spelling of each class of equal values, the
	// one its scan met first, and which one depends on the data.
	key := r.exactText(col)
	if r.vitess {
		// Grouped by the key's hash first (RenderVitess): the shards sort
		// by it, never by a long key's first max_sort_length bytes, and
		// vtgate adds the counts of runs of one key.
		return "SELECT " + key + ", COUNT(*)" + from + " GROUP BY " + sortKeyHash(key) + ", " + key, nil
	}
	return "SELECT " + key + ", COUNT(*)" + from + " GROUP BY " + key, nil
}
