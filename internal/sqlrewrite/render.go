package sqlrewrite

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Render returns the SQL text and bind arguments of a fetch in dialect d.
//
// Identifiers are quoted for the dialect (schema-qualified tables part by
// part) and names that could break out of the quotes are refused. Numbers
// (bounds, filter constants, offsets) are written by the proxy as literals
// that read back as the exact float64 or int64; strings are always bind
// arguments. Values are clamped as CASE WHEN x < lo THEN lo WHEN x > hi THEN
// hi ELSE x END on the column cast to double precision, so the three
// dialects compute the same float64 arithmetic.
//
// The shapes, for filter F (the Filter conditions and the Boolean predicate
// joined by AND; the predicate is rendered with every node in parentheses,
// its strings as bind arguments too):
//
//	Summary:   SELECT COUNT(*), COUNT(c), COALESCE(SUM(clamp(c)), 0), COALESCE(SUM(clamp(c) * clamp(c)), 0)
//	           FROM t WHERE F                          (the terms in order; one row)
//	Window:    SELECT clamp(c) FROM t WHERE F AND c IS NOT NULL ORDER BY t.c LIMIT n OFFSET r
//	           (with GridUnit, the grid index of clamp(c) instead: render_grid.go)
//	Grouped window: SELECT v, COUNT(*) FROM (SELECT clamp(c) AS v FROM t WHERE F AND c IS NOT NULL) AS w
//	           GROUP BY v ORDER BY v     (the reader takes the ranks)
//	GridSums:  exact integer sums of grid indices (render_grid.go)
//	Histogram: SELECT CASE WHEN b > bins-1 THEN bins-1 ELSE b END, COUNT(*)
//	           FROM (SELECT FLOOR((clamp(c) - lo) * bins / (hi - lo)) AS b
//	                 FROM t WHERE F AND c IS NOT NULL) AS h GROUP BY 1
//	Cells:     SELECT k0, k1, COUNT(*) FROM (SELECT key0 AS k0, key1 AS k1 FROM t WHERE F) AS c
//	           WHERE k0 IS NOT NULL AND k1 IS NOT NULL GROUP BY k0, k1   (render_cells.go)
//
// The window sorts by the column itself, which an index can serve; clamping
// is non-decreasing, so the clamped values come out sorted too. The histogram
// folds bin index bins (the value hi, or a value that rounding puts there)
// into the last bin. Errors are for malformed fetches (a bug in the caller),
// never for client input.
func Render(f Fetch, d Dialect) (query string, args []any, err error) {
	spec, ok := dialects[d]
	if !ok {
		return "", nil, fmt.Errorf("sqlrewrite: unknown dialect %d", int(d))
	}
	r := &renderer{spec: spec}
	var set int
	for _, isSet := range []bool{len(f.Summary) > 0, f.Window != nil, f.Histogram != nil, f.Pairs != nil, f.Cells != nil, f.GridSums != nil} {
		if isSet {
			set++
		}
	}
	if set != 1 {
		return "", nil, errors.New("sqlrewrite: a fetch needs exactly one of Summary, Window, Histogram, Pairs, GridSums and Cells")
	}
	switch {
	case len(f.Summary) > 0:
		query, err = r.summary(f)
	case f.Window != nil:
		query, err = r.window(f)
	case f.Pairs != nil:
		query, err = r.pairs(f)
	case f.Cells != nil:
		query, err = r.cells(f)
	case f.GridSums != nil:
		query, err = r.gridSums(f)
	default:
		query, err = r.histogram(f)
	}
	if err != nil {
		return "", nil, err
	}
	return query, r.args, nil
}

// renderer accumulates the bind arguments of one fetch.
type renderer struct {
	spec dialectSpec
	args []any
}

// arg adds a bind argument and returns its placeholder.
func (r *renderer) arg(v any) string {
	r.args = append(r.args, v)
	return r.spec.placeholder(len(r.args))
}

func (r *renderer) summary(f Fetch) (string, error) {
	terms := make([]string, len(f.Summary))
	for i, t := range f.Summary {
		var err error
		if terms[i], err = r.term(t); err != nil {
			return "", err
		}
	}
	from, err := r.from(f, "")
	if err != nil {
		return "", err
	}
	return "SELECT " + strings.Join(terms, ", ") + from, nil
}

// term renders one summary aggregate.
func (r *renderer) term(t SummaryTerm) (string, error) {
	if t.Kind == CountAll {
		return "COUNT(*)", nil
	}
	col, err := r.spec.ident(t.Column)
	if err != nil {
		return "", err
	}
	switch t.Kind {
	case CountNonNull:
		return "COUNT(" + col + ")", nil
	case ClampedSum, ClampedSumSquares:
		v, err := r.clamp(col, t.Lower, t.Upper)
		if err != nil {
			return "", err
		}
		if t.Kind == ClampedSumSquares {
			v = v + " * " + v
		}
		return "COALESCE(SUM(" + v + "), 0)", nil
	}
	return "", fmt.Errorf("sqlrewrite: unknown summary term kind %d", int(t.Kind))
}

func (r *renderer) window(f Fetch) (string, error) {
	w := f.Window
	if w.Offset < 0 || w.Limit < 1 {
		return "", fmt.Errorf("sqlrewrite: window needs offset ≥ 0 and limit ≥ 1, got %d and %d", w.Offset, w.Limit)
	}
	col, err := r.spec.ident(w.Column)
	if err != nil {
		return "", err
	}
	var v string
	if w.GridUnit != 0 && !w.Sum {
		v, err = r.gridIndex(col, w.Lower, w.Upper, w.GridUnit)
	} else if w.GridUnit != 0 {
		err = errors.New("sqlrewrite: a window asks for grid indices or a sum, not both")
	} else {
		v, err = r.clamp(col, w.Lower, w.Upper)
	}
	if err != nil {
		return "", err
	}
	from, err := r.from(f, col)
	if err != nil {
		return "", err
	}
	if w.Grouped {
		if w.Sum {
			return "", errors.New("sqlrewrite: a grouped window cannot be a sum")
		}
		return "SELECT v, COUNT(*) FROM (SELECT " + v + " AS v" + from + ") AS w GROUP BY v ORDER BY v", nil
	}
	// Qualified, so that it names the table's column: PostgreSQL would take
	// a bare name for the output column that the clamp's CASE … ELSE col
	// is named after, and sort by the clamped expression, which no index
	// serves.
	table, err := r.spec.table(f.Table)
	if err != nil {
		return "", err
	}
	ranks := " ORDER BY " + table + "." + col + " LIMIT " + strconv.FormatInt(w.Limit, 10) + " OFFSET " + strconv.FormatInt(w.Offset, 10)
	if w.Sum {
		return "SELECT COALESCE(SUM(v), 0) FROM (SELECT " + v + " AS v" + from + ranks + ") AS w", nil
	}
	return "SELECT " + v + from + ranks, nil
}

// pairs renders SELECT clamp(y), clamp(x) over the rows where both are set.
func (r *renderer) pairs(f Fetch) (string, error) {
	p := f.Pairs
	y, err := r.spec.ident(p.Y)
	if err != nil {
		return "", err
	}
	x, err := r.spec.ident(p.X)
	if err != nil {
		return "", err
	}
	cy, err := r.clamp(y, p.YLower, p.YUpper)
	if err != nil {
		return "", err
	}
	cx, err := r.clamp(x, p.XLower, p.XUpper)
	if err != nil {
		return "", err
	}
	from, err := r.from(f, y)
	if err != nil {
		return "", err
	}
	return "SELECT " + cy + ", " + cx + from + " AND " + x + " IS NOT NULL", nil
}

func (r *renderer) histogram(f Fetch) (string, error) {
	h := f.Histogram
	width := h.Upper - h.Lower
	if h.Bins < 1 || !(width > 0) || math.IsInf(width, 0) {
		return "", fmt.Errorf("sqlrewrite: histogram needs bins ≥ 1 and finite lower < upper, got %d bins over [%g, %g]", h.Bins, h.Lower, h.Upper)
	}
	col, err := r.spec.ident(h.Column)
	if err != nil {
		return "", err
	}
	v, err := r.clamp(col, h.Lower, h.Upper)
	if err != nil {
		return "", err
	}
	from, err := r.from(f, col)
	if err != nil {
		return "", err
	}
	// width is computed here, in float64: a literal (hi - lo) would be
	// exact decimal arithmetic in PostgreSQL and MySQL.
	bin := fmt.Sprintf("CAST(FLOOR((%s - %s) * %d / %s) AS %s)", v, realLiteral(h.Lower), h.Bins, realLiteral(width), r.spec.integer)
	last := strconv.Itoa(h.Bins - 1)
	return "SELECT CASE WHEN b > " + last + " THEN " + last + " ELSE b END, COUNT(*) FROM (SELECT " +
		bin + " AS b" + from + ") AS h GROUP BY 1", nil
}

// clamp renders the quoted column cast to double and clamped to [lo, hi].
func (r *renderer) clamp(col string, lo, hi float64) (string, error) {
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) || lo > hi {
		return "", fmt.Errorf("sqlrewrite: clamp bounds must be finite with lower ≤ upper, got [%g, %g]", lo, hi)
	}
	x := "CAST(" + col + " AS " + r.spec.double + ")"
	l, h := realLiteral(lo), realLiteral(hi)
	return "CASE WHEN " + x + " < " + l + " THEN " + l + " WHEN " + x + " > " + h + " THEN " + h + " ELSE " + x + " END", nil
}

// from renders " FROM t" and the WHERE clause: the filter, the Boolean
// predicate, then notNull IS NOT NULL if notNull (a quoted column) is not
// empty.
func (r *renderer) from(f Fetch, notNull string) (string, error) {
	table, err := r.spec.table(f.Table)
	if err != nil {
		return "", err
	}
	var conds []string
	for _, c := range f.Filter {
		s, err := r.condition(c)
		if err != nil {
			return "", err
		}
		conds = append(conds, s)
	}
	if f.Boolean != nil {
		s, err := r.predicate(f.Boolean)
		if err != nil {
			return "", err
		}
		conds = append(conds, s)
	}
	if notNull != "" {
		conds = append(conds, notNull+" IS NOT NULL")
	}
	if len(conds) == 0 {
		return " FROM " + table, nil
	}
	return " FROM " + table + " WHERE " + strings.Join(conds, " AND "), nil
}

// condition renders one filter condition.
func (r *renderer) condition(c Condition) (string, error) {
	col, err := r.spec.ident(c.Column)
	if err != nil {
		return "", err
	}
	if (c.Range == nil) == (len(c.In) == 0) {
		return "", fmt.Errorf("sqlrewrite: condition on %s needs exactly one of Range and In", c.Column)
	}
	if c.Range != nil {
		return r.rangeCondition(col, c.Range)
	}
	vals := make([]string, len(c.In))
	for i, v := range c.In {
		if v.Null || v.IsText != c.In[0].IsText {
			return "", fmt.Errorf("sqlrewrite: IN on %s needs non-NULL values of one type", c.Column)
		}
		if vals[i], err = r.value(v); err != nil {
			return "", err
		}
	}
	if len(vals) == 1 {
		return col + " = " + vals[0], nil
	}
	return col + " IN (" + strings.Join(vals, ", ") + ")", nil
}

func (r *renderer) rangeCondition(col string, rg *Range) (string, error) {
	var parts []string
	if rg.HasLower {
		op := " >= "
		if rg.LowerOpen {
			op = " > "
		}
		v, err := r.value(Value{Num: rg.Lower})
		if err != nil {
			return "", err
		}
		parts = append(parts, col+op+v)
	}
	if rg.HasUpper {
		op := " <= "
		if rg.UpperOpen {
			op = " < "
		}
		v, err := r.value(Value{Num: rg.Upper})
		if err != nil {
			return "", err
		}
		parts = append(parts, col+op+v)
	}
	if len(parts) == 0 {
		return "", fmt.Errorf("sqlrewrite: range on %s has no bound", col)
	}
	return strings.Join(parts, " AND "), nil
}

// value renders a filter constant: a string as a bind argument, a number as
// a literal. Numbers are not bind arguments because PostgreSQL types an
// untyped parameter after the column, and then rejects 2.5 for an integer.
func (r *renderer) value(v Value) (string, error) {
	if v.IsText {
		return r.arg(v.Str), nil
	}
	if math.IsNaN(v.Num) || math.IsInf(v.Num, 0) {
		return "", fmt.Errorf("sqlrewrite: non-finite filter constant %g", v.Num)
	}
	return numberLiteral(v.Num), nil
}
