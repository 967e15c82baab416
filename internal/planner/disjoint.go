package planner

import (
	"math"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// Disjoint parts (parallel composition).
//
// A statement whose aggregates all carry their own conditions, no two of
// which any row can satisfy together (a pivot of measures:
// SUM(CASE WHEN sex = 1 THEN income END), SUM(CASE WHEN sex = 0 THEN
// income END)), reads each row in at most one part. Under add/remove of
// one row only that part's releases change law, so each part may spend
// the statement's whole ε and δ (parallel composition), where parts that
// may share rows split them (basic composition). On a table with a
// privacy unit a unit's rows may fall in several parts, so there the
// parts always split.
//
// Two parts are disjoint when each restricts one column (or derived
// expression) to sets no value is in both: two IN lists without a common
// value, two ranges without a common point, a list wholly outside a range.
// The test is conservative where the backend's comparison may differ from
// the proxy's. Text values never count as disjoint: collations equate more
// than case and trailing spaces (accent-insensitive ones 'e' and 'é', ICU's
// numeric ordering '1' and '01', Hungarian contractions 'ccs' and 'cscs',
// PostgreSQL's citext), and the proxy does not know the column's. Numbers
// and ranges are decided exactly, on backends whose comparisons of a
// column with a number are numeric: PostgreSQL (typed columns) and MySQL
// (a text column compared with a number is read as a number); not on
// SQLite, where a column of TEXT affinity compares with a number as text
// ('5' is both below 9 and at least 10). A list holding a number of
// magnitude 2⁵³ or more, or a constant that its double only approximates
// (Value.Decimal: 0.10000000000000000001), is not decided: MySQL compares a BIGINT with a list
// that mixes integer and double literals as doubles, so 2⁵³+1 equals 2⁵³
// there while a range compares it exactly; below 2⁵³ every integer is a
// double and the two comparisons agree. Complements, IS NULL, LIKE, date
// cells and OR/NOT conditions never count as disjoint.

// disjointParts reports whether no row passes the conditions of two of
// parts (a part without conditions passes every row) on the backend of
// driver.
func disjointParts(parts []*QueryPart, driver string) bool {
	if len(parts) < 2 || driver != "postgres" && driver != "mysql" {
		return false
	}
	for i, a := range parts {
		for _, b := range parts[i+1:] {
			if a.Boolean != nil || b.Boolean != nil || !conditionsDisjoint(a.Where, b.Where) {
				return false
			}
		}
	}
	return true
}

// conditionsDisjoint reports whether no row satisfies both conjunctions.
func conditionsDisjoint(a, b []sqlrewrite.Condition) bool {
	for _, x := range a {
		for _, y := range b {
			if leavesDisjoint(x, y) {
				return true
			}
		}
	}
	return false
}

// leavesDisjoint reports whether no value of their common column satisfies
// both conditions.
func leavesDisjoint(x, y sqlrewrite.Condition) bool {
	plain := func(c sqlrewrite.Condition) bool {
		return !c.Complement && !c.IsNull && c.Like == nil && c.Cell == nil
	}
	if x.Column != y.Column || x.Temporal != y.Temporal || x.Text != y.Text || !plain(x) || !plain(y) {
		return false
	}
	switch {
	case x.Range != nil && y.Range != nil:
		return rangesDisjoint(*x.Range, *y.Range)
	case x.Range != nil:
		return valuesOutside(y.In, *x.Range)
	case y.Range != nil:
		return valuesOutside(x.In, *y.Range)
	}
	for _, u := range x.In {
		for _, v := range y.In {
			if mayEqual(u, v) {
				return false
			}
		}
	}
	return len(x.In) > 0 && len(y.In) > 0
}

// rangesDisjoint reports whether no number is in both ranges.
func rangesDisjoint(a, b sqlrewrite.Range) bool {
	return a.Below(b) || b.Below(a)
}

// valuesOutside reports whether every value of in is a number outside r.
func valuesOutside(in []sqlrewrite.Value, r sqlrewrite.Range) bool {
	if len(in) == 0 {
		return false
	}
	for _, v := range in {
		if v.Null || v.IsText || !exactDouble(v.Num) || !sqlrewrite.ExactValue(v) {
			return false
		}
		point := sqlrewrite.Range{Lower: v.Num, Upper: v.Num, HasLower: true, HasUpper: true}
		if !rangesDisjoint(point, r) {
			return false
		}
	}
	return true
}

// mayEqual reports whether the backend may read u and v as equal: numbers
// when they are the same number, text always (see above).
func mayEqual(u, v sqlrewrite.Value) bool {
	switch {
	case u.Null || v.Null:
		return false // IN never matches NULL
	case u.IsText || v.IsText || !exactDouble(u.Num) || !exactDouble(v.Num) || !sqlrewrite.ExactValue(u) || !sqlrewrite.ExactValue(v):
		return true
	}
	return u.Num == v.Num
}

// exactDouble reports whether every integer near x is a double, so that a
// backend comparing a list's integers as doubles compares them exactly.
func exactDouble(x float64) bool { return math.Abs(x) < 1<<53 }
