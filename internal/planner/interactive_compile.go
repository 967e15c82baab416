package planner

import (
	"math"
	"math/big"
	"slices"
	"strings"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/mech/mm"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// compileInteractive returns the cells of the table's interactive domain
// where pred is true. Inside X every domain column holds a declared value,
// so no leaf is unknown and NOT is plain complement within X (rows with a
// NULL are outside X: SQL's NOT does not count them either). It fails with
// UnknownColumn for an undeclared column and Unsupported for a column
// outside the domain or a condition that splits a bucket.
func compileInteractive(t *catalog.Table, pred *sqlrewrite.Predicate) (mm.Predicate, error) {
	in := t.Interactive
	sizes := make([]int, len(in.Columns))
	for i := range in.Columns {
		sizes[i] = in.Columns[i].Size()
	}
	tree, err := compileNode(t, pred)
	if err != nil {
		return mm.Predicate{}, err
	}
	cells := in.Cells()
	index := make([]int, len(sizes))
	var members []int
	for x := range cells {
		rest := x
		for i := len(sizes) - 1; i >= 0; i-- {
			index[i] = rest % sizes[i]
			rest /= sizes[i]
		}
		if tree.eval(index) {
			members = append(members, x)
		}
	}
	return mm.NewPredicate(cells, members)
}

// cellNode is a compiled predicate: a leaf is a mask over one dimension.
type cellNode struct {
	op   sqlrewrite.PredicateOp
	dim  int
	mask []bool
	args []*cellNode
}

// eval reports whether the cell with per-dimension indexes index satisfies n.
func (n *cellNode) eval(index []int) bool {
	switch n.op {
	case sqlrewrite.Leaf:
		return n.mask[index[n.dim]]
	case sqlrewrite.Not:
		return !n.args[0].eval(index)
	case sqlrewrite.And:
		for _, a := range n.args {
			if !a.eval(index) {
				return false
			}
		}
		return true
	}
	for _, a := range n.args {
		if a.eval(index) {
			return true
		}
	}
	return false
}

func compileNode(t *catalog.Table, p *sqlrewrite.Predicate) (*cellNode, error) {
	if p.Op == sqlrewrite.Leaf {
		return compileLeaf(t, *p.Leaf)
	}
	n := &cellNode{op: p.Op}
	for _, a := range p.Args {
		c, err := compileNode(t, a)
		if err != nil {
			return nil, err
		}
		n.args = append(n.args, c)
	}
	return n, nil
}

// compileLeaf returns the mask of one condition over its dimension.
func compileLeaf(t *catalog.Table, c sqlrewrite.Condition) (*cellNode, error) {
	col, ok := t.Column(c.Column)
	if !ok {
		return nil, dperr.New(dperr.UnknownColumn, "Unknown column '%s' in 'where clause'", c.Column)
	}
	dim := -1
	for i, ic := range t.Interactive.Columns {
		if strings.EqualFold(ic.Name, col.Name) {
			dim = i
		}
	}
	if dim < 0 {
		return nil, refuseInteractive(t, "column %s is not in the interactive domain", col.Name)
	}
	if c.IsNull || c.Complement {
		return nil, refuseInteractive(t, "IS NULL selects rows outside the domain (a NULL in column %s is in no cell)", col.Name)
	}
	if c.Like != nil {
		return nil, refuseInteractive(t, "LIKE on %s is matched by the database's collation, not over the domain's values", col.Name)
	}
	if c.Range != nil && !sqlrewrite.ExactRange(*c.Range) || slices.ContainsFunc(c.In, func(v sqlrewrite.Value) bool { return !sqlrewrite.ExactValue(v) }) {
		return nil, refuseInteractive(t, "a constant compared with %s must be a number a double holds exactly (at most 15 significant digits)", col.Name)
	}
	ic := &t.Interactive.Columns[dim]
	mask := make([]bool, ic.Size())
	switch {
	case ic.Bucketed():
		ranges := []sqlrewrite.Range{}
		if c.Range != nil {
			ranges = append(ranges, *c.Range)
		}
		for _, v := range c.In {
			ranges = append(ranges, sqlrewrite.Range{Lower: v.Num, Upper: v.Num, HasLower: true, HasUpper: true})
		}
		for _, r := range ranges {
			for b := range mask {
				in, out := bucketVersus(ic, col, b, r)
				if !in && !out {
					return nil, refuseInteractive(t, "a condition on %s must select whole buckets", col.Name)
				}
				mask[b] = mask[b] || in
			}
		}
	case col.Numeric():
		for i, v := range ic.NumericValues() {
			mask[i] = c.Range != nil && inRange(*c.Range, v)
			for _, w := range c.In {
				mask[i] = mask[i] || !w.IsText && w.Num == v
			}
		}
	default:
		if c.Range != nil {
			return nil, refuseInteractive(t, "text column %s takes = and IN only", col.Name)
		}
		for i, v := range ic.Values {
			for _, w := range c.In {
				mask[i] = mask[i] || w.IsText && w.Str == v
			}
		}
	}
	return &cellNode{op: sqlrewrite.Leaf, dim: dim, mask: mask}, nil
}

// integerOf is the integral float64 f as an exact integer.
func integerOf(f float64) *big.Int {
	n, _ := new(big.Float).SetFloat64(f).Int(nil)
	return n
}

// bucketVersus reports whether bucket b of ic lies wholly inside r (in) or
// wholly outside it (out). Values are clamped to the column's bounds and
// then into the end buckets, so the first bucket starts at min(e_0,
// lower) and the last ends at max(e_k, upper), closed at upper when
// e_k ≤ upper. On an integer column both the bucket and r are taken as
// sets of integers, written half-open [lo, hi).
func bucketVersus(ic *catalog.InteractiveColumn, col *catalog.Column, b int, r sqlrewrite.Range) (in, out bool) {
	lower, upper, _ := col.Bounds()
	lo, hi := ic.Edges[b], ic.Edges[b+1]
	hiClosed := false
	if b == 0 {
		lo = math.Min(lo, lower)
	}
	if b == ic.Size()-1 && hi <= upper {
		hi, hiClosed = upper, true
	}
	if col.Type == catalog.Integer {
		// In exact integers: past 2^53 a float64's +1 is lost, which put
		// a bucket [2^53, 2^53+8) wholly inside big > 2^53. Ceil and Floor
		// of a float64 are exact, as is their conversion.
		one := big.NewInt(1)
		loI := integerOf(math.Ceil(lo))
		hiI := integerOf(math.Ceil(hi))
		if hiClosed {
			hiI = new(big.Int).Add(integerOf(math.Floor(hi)), one)
		}
		if loI.Cmp(hiI) >= 0 {
			return true, true // no integer in the bucket
		}
		// r as integers [L, U); nil is unbounded.
		var L, U *big.Int
		if r.HasLower && !math.IsInf(r.Lower, 0) {
			L = integerOf(math.Ceil(r.Lower))
			if r.LowerOpen && math.Ceil(r.Lower) == r.Lower {
				L.Add(L, one)
			}
		}
		if r.HasUpper && !math.IsInf(r.Upper, 0) {
			U = new(big.Int).Add(integerOf(math.Floor(r.Upper)), one)
			if r.UpperOpen && math.Floor(r.Upper) == r.Upper {
				U.Sub(U, one)
			}
		}
		in = (L == nil || loI.Cmp(L) >= 0) && (U == nil || hiI.Cmp(U) <= 0)
		out = L != nil && hiI.Cmp(L) <= 0 || U != nil && loI.Cmp(U) >= 0 || L != nil && U != nil && L.Cmp(U) >= 0
		return in, out
	}
	inside := (!r.HasLower || lo > r.Lower || !r.LowerOpen && lo >= r.Lower) &&
		(!r.HasUpper || hi < r.Upper || hi == r.Upper && !(hiClosed && r.UpperOpen))
	outside := r.HasLower && (hi < r.Lower || hi == r.Lower && !(hiClosed && !r.LowerOpen)) ||
		r.HasUpper && (lo > r.Upper || r.UpperOpen && lo >= r.Upper)
	return inside, outside
}
