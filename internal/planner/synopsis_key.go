package planner

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// synopsisKeyVersion starts every synopsis key. v3 keys a synopsis on the
// backend relation and columns its build reads (v2 named the configured
// table and columns only, so a synopsis answered for another relation, or
// for operands clamped to other bounds, after a configuration change or
// on another proxy sharing the ledger): each synopsis stored under an
// older key is built, and paid, once more.
const synopsisKeyVersion = "v3"

// synopsisKey identifies the synopsis of col over d for the canonical
// predicate pred, whose conditions read the declared columns reads
// (predicateColumns): everything its build reads and everything that
// changes what is released. That is the backend relation (relationIdentity)
// and, of col and of every column in reads, its source, type and bounds
// (columnIdentity); the domain and the predicate; and the column's
// histogram configuration (ε, mechanism, workload; on a unit table the
// unit column and max_rows_per_unit). A changed configuration therefore
// names a new synopsis, built and paid once, instead of being ignored in
// favour of one built under the old configuration, and two proxies sharing
// the ledger share a synopsis only when they would build the same one. The
// configured table's name is not in the key: the build does not read it.
func synopsisKey(t *catalog.Table, col *catalog.Column, d Domain, pred string, reads []*catalog.Column) string {
	h := col.Histogram
	var workload strings.Builder
	workload.WriteString(h.Workload.Kind)
	for _, r := range h.Workload.Ranges {
		fmt.Fprintf(&workload, " [%s, %s]", formatNumber(r[0]), formatNumber(r[1]))
	}
	domain := fmt.Sprintf("[%s, %s) in %d bins", formatNumber(d.Lower), formatNumber(d.Upper), d.Bins)
	if !d.Integer {
		// The cell of the upper bound: synopses stored before it are not
		// read as having it.
		domain += " and a cell for " + formatNumber(d.Upper)
	}
	key := fmt.Sprintf("%s|%s|%s|%s|%s|eps=%s|mechanism=%s|workload=%s",
		synopsisKeyVersion, relationIdentity(t), columnIdentity(col), domain, pred,
		formatNumber(h.Epsilon), strings.ToLower(h.Mechanism), workload.String())
	if len(reads) > 0 {
		ids := make([]string, len(reads))
		for i, c := range reads {
			ids[i] = columnIdentity(c)
		}
		key += "|reads=" + strings.Join(ids, "; ")
	}
	if t.HasPrivacyUnit() {
		// The unit and its bound change what is released (and whom it
		// protects); row-level keys have no such part. The unit is a
		// backend column, named as written, as relationIdentity names the
		// relation.
		key += fmt.Sprintf("|unit=%s|rows_per_unit=%d", t.PrivacyUnit, t.MaxRowsPerUnit)
	}
	return key
}

// relationIdentity names the backend rows every fetch of t reads: its
// source relation as the configuration writes it, and its partitions,
// sorted (their union is what is read). Names are kept as written, schema
// and case included: fetches quote them, so hr.salaries and
// public.salaries, or T and t, may be different relations, and a key must
// not make two relations share a release (spelling one relation two ways
// only builds, and pays for, its release twice). Unlike the table's budget
// account (catalog.TableAccount), which errs towards sharing a cap, a key
// errs towards keeping releases apart.
func relationIdentity(t *catalog.Table) string {
	id := "source=" + t.Source
	if len(t.Partitions) > 0 {
		parts := slices.Clone(t.Partitions)
		slices.Sort(parts)
		id += " partitions=" + strings.Join(parts, ",")
	}
	return id
}

// columnIdentity is what a fetch reading the declared column col depends
// on besides the relation: its name as a predicate's text writes it (lower
// case: catalog names are case-insensitive), its backend source as
// written, its type (how its conditions and values are read) and its public
// bounds (to which an expression's operands are clamped, and from which a
// histogram's domain is made).
func columnIdentity(col *catalog.Column) string {
	id := strings.ToLower(col.Name) + "=" + col.Source + " " + string(col.Type)
	if col.Lower != nil && col.Upper != nil {
		id += fmt.Sprintf(" [%s, %s]", formatNumber(*col.Lower), formatNumber(*col.Upper))
	}
	return id
}

// canonicalPredicate renders a conjunction of conditions on declared
// columns (catalog names) so that equivalent conjunctions give the same
// text: the conditions on each column are merged (ranges intersected, IN
// lists intersected and filtered by the range, an integer column's range
// narrowed to whole integers, a one-integer range written as IN), and the
// columns are sorted by name. "" is every row. It identifies the rows a
// synopsis counts, so two statements share a synopsis exactly when their
// predicates on the other columns select the same rows.
func canonicalPredicate(t *catalog.Table, conds []sqlrewrite.Condition) string {
	byColumn := map[string][]sqlrewrite.Condition{}
	var names []string
	for _, c := range conds {
		col, _ := t.Column(c.Column)
		if _, seen := byColumn[col.Name]; !seen {
			names = append(names, col.Name)
		}
		byColumn[col.Name] = append(byColumn[col.Name], c)
	}
	slices.SortFunc(names, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
	parts := make([]string, len(names))
	for i, name := range names {
		col, _ := t.Column(name)
		parts[i] = canonicalColumn(col, byColumn[name])
	}
	return strings.Join(parts, " and ")
}

// canonicalColumn renders the merged conditions on one column.
func canonicalColumn(col *catalog.Column, conds []sqlrewrite.Condition) string {
	r := sqlrewrite.Range{}
	var in []sqlrewrite.Value
	hasIn := false
	var nullTests []string
	for _, c := range conds {
		if c.IsNull || c.Complement || c.Like != nil {
			nullTests = append(nullTests, describeCondition(c))
			continue
		}
		if c.Range != nil {
			r = intersectRange(r, *c.Range)
			continue
		}
		if !hasIn {
			in, hasIn = slices.Clone(c.In), true
			continue
		}
		in = slices.DeleteFunc(in, func(v sqlrewrite.Value) bool { return !slices.Contains(c.In, v) })
	}
	if col.Type == catalog.Integer && (r.HasLower || r.HasUpper) {
		r = integerRange(r)
		if !hasIn && r.HasLower && r.HasUpper && r.Lower == r.Upper {
			in, hasIn = []sqlrewrite.Value{{Num: r.Lower}}, true
		}
	}
	if len(nullTests) > 0 {
		// IS NULL, complements and LIKE are kept as written (their order
		// too; a LIKE pattern's case matters on PostgreSQL): a key that is
		// the same for the same conditions is all a synopsis key needs.
		rest := ""
		if hasIn || r.HasLower || r.HasUpper {
			rest = " and " + canonicalColumn(col, slices.DeleteFunc(slices.Clone(conds), func(c sqlrewrite.Condition) bool { return c.IsNull || c.Complement || c.Like != nil }))
		}
		return strings.Join(nullTests, " and ") + rest
	}
	if hasIn {
		in = slices.DeleteFunc(in, func(v sqlrewrite.Value) bool { return !v.IsText && !inRange(r, v.Num) })
		return col.Name + " in (" + renderValues(in) + ")"
	}
	return col.Name + " " + renderRange(r)
}

// intersectRange returns the values in both a and b.
func intersectRange(a, b sqlrewrite.Range) sqlrewrite.Range {
	return sqlrewrite.IntersectRanges(a, b)
}

// integerRange narrows a range on an integer column to closed integer ends.
func integerRange(r sqlrewrite.Range) sqlrewrite.Range {
	if r.HasLower {
		r.Lower, r.LowerOpen = integerAtLeast(r.Lower, r.LowerOpen), false
	}
	if r.HasUpper {
		r.Upper, r.UpperOpen = integerAtMost(r.Upper, r.UpperOpen), false
	}
	return r
}

// inRange reports whether x satisfies r.
func inRange(r sqlrewrite.Range, x float64) bool {
	switch {
	case r.HasLower && (x < r.Lower || x == r.Lower && r.LowerOpen):
		return false
	case r.HasUpper && (x > r.Upper || x == r.Upper && r.UpperOpen):
		return false
	}
	return true
}

// renderRange writes a range as [lo, hi], with ( ) for open ends and inf.
func renderRange(r sqlrewrite.Range) string {
	lo, hi := "(-inf", "inf)"
	if r.HasLower {
		lo = "[" + formatNumber(r.Lower)
		if r.LowerOpen {
			lo = "(" + formatNumber(r.Lower)
		}
	}
	if r.HasUpper {
		hi = formatNumber(r.Upper) + "]"
		if r.UpperOpen {
			hi = formatNumber(r.Upper) + ")"
		}
	}
	if r.HasLower && r.HasUpper && (r.Lower > r.Upper || r.Lower == r.Upper && (r.LowerOpen || r.UpperOpen)) {
		return "empty"
	}
	return lo + ", " + hi
}

// renderValues writes IN values sorted, numbers before strings, without repeats.
func renderValues(in []sqlrewrite.Value) string {
	var nums []float64
	var strs []string
	for _, v := range in {
		if v.IsText {
			strs = append(strs, strconv.Quote(v.Str))
		} else {
			nums = append(nums, v.Num)
		}
	}
	slices.Sort(nums)
	slices.Sort(strs)
	out := make([]string, 0, len(nums)+len(strs))
	for _, n := range slices.Compact(nums) {
		out = append(out, formatNumber(n))
	}
	return strings.Join(append(out, slices.Compact(strs)...), ", ")
}

// formatNumber writes the shortest text that reads back as x.
func formatNumber(x float64) string {
	if x == 0 {
		x = math.Abs(x) // -0 and 0 select the same rows
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}
