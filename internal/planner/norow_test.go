package planner

import (
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestNoRowWhere: conditions on one numeric column that no number
// satisfies together select no row; conditions some real number
// satisfies (an integer column may hold fractions in the backend), text
// values (collations equate distinct strings), complements and NULL tests
// do not decide it; a WHERE TRUE for no row does.
func TestNoRowWhere(t *testing.T) {
	lo, hi := 0.0, 100.0
	table := &catalog.Table{Name: "t", Source: "t", Columns: []catalog.Column{
		{Name: "n", Source: "n", Type: catalog.Integer, Lower: &lo, Upper: &hi},
		{Name: "x", Source: "x", Type: catalog.Real, Lower: &lo, Upper: &hi},
		{Name: "s", Source: "s", Type: catalog.Text},
	}}
	num := func(v float64) sqlrewrite.Value { return sqlrewrite.Value{Num: v} }
	in := func(col string, vs ...sqlrewrite.Value) sqlrewrite.Condition {
		return sqlrewrite.Condition{Column: col, In: vs, ExactNumbers: true}
	}
	rng := func(col string, r sqlrewrite.Range) sqlrewrite.Condition {
		return sqlrewrite.Condition{Column: col, Range: &r, ExactNumbers: true}
	}
	rounded := func(c sqlrewrite.Condition) sqlrewrite.Condition {
		c.ExactNumbers = false
		return c
	}
	below := func(v float64) sqlrewrite.Range { return sqlrewrite.Range{Upper: v, HasUpper: true, UpperOpen: true} }
	above := func(v float64) sqlrewrite.Range { return sqlrewrite.Range{Lower: v, HasLower: true, LowerOpen: true} }
	for _, tc := range []struct {
		name  string
		conds []sqlrewrite.Condition
		empty bool
	}{
		{"n = 0 AND n = 1", []sqlrewrite.Condition{in("n", num(0)), in("n", num(1))}, true},
		{"x < 30 AND x > 40", []sqlrewrite.Condition{rng("x", below(30)), rng("x", above(40))}, true},
		{"x < 30 AND x > 30", []sqlrewrite.Condition{rng("x", below(30)), rng("x", above(30))}, true},
		{"n IN (0, 1) AND n > 5", []sqlrewrite.Condition{in("n", num(0), num(1)), rng("n", above(5))}, true},
		{"n = 0 AND x = 1", []sqlrewrite.Condition{in("n", num(0)), in("x", num(1))}, false},
		{"n > 5 AND n < 6", []sqlrewrite.Condition{rng("n", above(5)), rng("n", below(6))}, false},
		{"n IN (0, 1) AND n = 1", []sqlrewrite.Condition{in("n", num(0), num(1)), in("n", num(1))}, false},
		{"s = 'a' AND s = 'A'", []sqlrewrite.Condition{in("s", sqlrewrite.Value{Str: "a", IsText: true}), in("s", sqlrewrite.Value{Str: "A", IsText: true})}, false},
		{"n <> 0 AND n = 0", []sqlrewrite.Condition{{Column: "n", In: []sqlrewrite.Value{num(0)}, Complement: true}, in("n", num(0))}, false},
		// A number that is only the nearest float64 of the statement's
		// constant decides nothing: x > 5 AND x < 5.0000000000000001
		// keeps x = 5.00000000000000005 of a DECIMAL x.
		{"x > 5 AND x < 5.0000000000000001", []sqlrewrite.Condition{rng("x", above(5)), rounded(rng("x", below(5)))}, false},
		{"n = 2/3 AND n = 0.6667", []sqlrewrite.Condition{rounded(in("n", num(2.0/3))), in("n", num(0.6667))}, false},
		{"n IS NULL AND n = 0", []sqlrewrite.Condition{{Column: "n", IsNull: true}, in("n", num(0))}, false},
	} {
		if got := noRowWhere(table, &sqlrewrite.Select{Where: tc.conds}) != ""; got != tc.empty {
			t.Errorf("%s: no row %v, want %v", tc.name, got, tc.empty)
		}
	}
	// A WHERE TRUE for no row (n = NULL, 1 = 0) is Never.
	if noRowWhere(table, &sqlrewrite.Select{Boolean: &sqlrewrite.Predicate{Op: sqlrewrite.Never}}) == "" {
		t.Error("WHERE never: not read as selecting no row")
	}
}
