package sqlrewrite_test

import (
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestRenderLongConjunctionsOnSQLite: a fetch with 2000 filter conditions,
// and one whose OR has 2000 arguments, run on SQLite, whose expressions may
// be at most 1000 deep. Rendered as flat chains they failed there ("Expression
// tree is too large"), so the hostile statement WHERE age >= 0 AND … (2000
// times) was a backend error, charged, on SQLite only.
func TestRenderLongConjunctionsOnSQLite(t *testing.T) {
	db := testdb.SQLite(t)
	data := testRows()
	loadRows(t, db, sqlrewrite.SQLite, "REAL", data)
	var filter []sqlrewrite.Condition
	var anyOf []*sqlrewrite.Predicate
	for i := range 2000 {
		filter = append(filter, sqlrewrite.Condition{Column: "k", Range: &sqlrewrite.Range{Lower: float64(-i), HasLower: true}})
		anyOf = append(anyOf, &sqlrewrite.Predicate{Op: sqlrewrite.Leaf,
			Leaf: &sqlrewrite.Condition{Column: "k", In: []sqlrewrite.Value{{Num: float64(i%3 + 1000)}}}})
	}
	anyOf = append(anyOf, &sqlrewrite.Predicate{Op: sqlrewrite.Leaf,
		Leaf: &sqlrewrite.Condition{Column: "k", In: []sqlrewrite.Value{{Num: 1}}}})
	ones := 0
	for _, r := range data {
		if r.k == 1 {
			ones++
		}
	}
	for _, c := range []struct {
		name  string
		fetch sqlrewrite.Fetch
		want  float64
	}{
		{"2000 ANDed conditions", sqlrewrite.Fetch{Table: "dp_render", Filter: filter,
			Summary: []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}}}, float64(len(data))},
		{"an OR of 2001 leaves", sqlrewrite.Fetch{Table: "dp_render", Boolean: &sqlrewrite.Predicate{Op: sqlrewrite.Or, Args: anyOf},
			Summary: []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}}}, float64(ones)},
	} {
		query, args, err := sqlrewrite.Render(c.fetch, sqlrewrite.SQLite)
		if err != nil {
			t.Fatalf("%s: Render: %v", c.name, err)
		}
		got, err := runFetch(db, c.fetch, query, args)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(got) != 1 || got[0] != c.want {
			t.Errorf("%s: got %v, want [%v]", c.name, got, c.want)
		}
	}
}
