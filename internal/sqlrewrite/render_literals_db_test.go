package sqlrewrite_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestRenderVitessMatchesBindArguments: on MariaDB, in the sql_mode the
// backend pins, a fetch rendered with its strings as literals
// (RenderVitess, for Vitess) has no bind argument and reads what the
// same fetch with bind arguments reads, for strings with quotes,
// backslashes, NUL, newlines, Ctrl-Z, LIKE wildcards and non-Latin text,
// as IN values, LIKE patterns and a text dimension's CASE; a window's
// ranks, bound as integers, are written as integers too (and as ? in
// the text to log).
func TestRenderVitessMatchesBindArguments(t *testing.T) {
	db := testdb.MySQL(t)
	if _, err := db.Exec("SET SESSION sql_mode = 'STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'"); err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1) // the session's sql_mode holds for every query
	texts := []string{"beta", "O'Brien", `a\b`, "nul\x00byte", "line\nbreak\r\x1a", "%_", `\%`, "日本", `q"uote\'`, "'", `\`, ""}
	var values []string
	for i, s := range texts {
		lit := "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\x00", `\0`).Replace(s) + "'"
		for range i + 1 {
			values = append(values, fmt.Sprintf("(%s, %d)", lit, i))
		}
	}
	for _, q := range []string{
		"CREATE TABLE lit (s VARCHAR(32) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, x DOUBLE)",
		"INSERT INTO lit (s, x) VALUES " + strings.Join(values, ", "),
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%.60s: %v", q, err)
		}
	}
	var all []sqlrewrite.Value
	for _, s := range texts {
		all = append(all, sqlrewrite.Value{Str: s, IsText: true})
	}
	count := []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}}
	var fetches []sqlrewrite.Fetch
	for i, s := range texts {
		e := string(sqlrewrite.LikeEscape)
		like := strings.NewReplacer(e, e+e, "%", e+"%", "_", e+"_").Replace(s) // s itself, as a pattern
		fetches = append(fetches,
			sqlrewrite.Fetch{Table: "lit", Summary: count, Filter: []sqlrewrite.Condition{{Column: "s", In: all[i : i+1], Text: true, Exact: true}}},
			sqlrewrite.Fetch{Table: "lit", Summary: count, Filter: []sqlrewrite.Condition{{Column: "s", Like: &like, Text: true}}})
	}
	fetches = append(fetches, sqlrewrite.Fetch{Table: "lit", Cells: &sqlrewrite.Cells{Dims: []sqlrewrite.CellDim{{Column: "s", Values: all, Exact: true}}}},
		sqlrewrite.Fetch{Table: "lit", Filter: []sqlrewrite.Condition{{Column: "s", In: all[1:], Text: true, Exact: true}},
			Window: &sqlrewrite.Window{Column: "x", Lower: 0, Upper: 100, Offset: 7, Limit: 23}})
	for _, f := range fetches {
		query, args, err := sqlrewrite.Render(f, sqlrewrite.MySQL)
		if err != nil {
			t.Fatal(err)
		}
		text, logged, err := sqlrewrite.RenderVitess(f, sqlrewrite.MySQL)
		if err != nil {
			t.Fatal(err)
		}
		if len(args) == 0 || strings.Contains(text, "?") {
			t.Fatalf("bound %q with %q; literals %q", query, args, text)
		}
		// The ranks are in the text sent, and ? in the text logged.
		if ranked := f.Window != nil; ranked && (!strings.HasSuffix(text, " LIMIT 23 OFFSET 7") || logged != strings.TrimSuffix(text, "23 OFFSET 7")+"? OFFSET ?") ||
			!ranked && logged != text {
			t.Errorf("sent %q, logged %q", text, logged)
		}
		bound, err := runFetch(db, f, query, args)
		if err != nil {
			t.Fatalf("%q: %v", query, err)
		}
		literal, err := runFetch(db, f, text, nil)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if fmt.Sprint(bound) != fmt.Sprint(literal) {
			t.Errorf("%q: bound %v, literal %v", text, bound, literal)
		}
	}
	// Each string matches its own rows only: the filter fetches above
	// read i+1 rows for texts[i].
	for i := range texts {
		text, _, _ := sqlrewrite.RenderVitess(fetches[2*i], sqlrewrite.MySQL)
		got, err := runFetch(db, fetches[2*i], text, nil)
		if err != nil || len(got) != 1 || got[0] != float64(i+1) {
			t.Errorf("%q: %v, %v; want %d rows", texts[i], got, err, i+1)
		}
	}
	if _, _, err := sqlrewrite.RenderVitess(fetches[0], sqlrewrite.PostgreSQL); err == nil {
		t.Error("RenderVitess accepted PostgreSQL")
	}
}
