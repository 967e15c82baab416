package sqlrewrite_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestBooleanColumnOnPostgres: a PostgreSQL boolean column named in
// Fetch.Booleans reads, in every fetch shape (summaries, conditions with =,
// IN, ranges, IS NULL and their complements, a Boolean predicate, windows
// by the column and by value, grid sums of ranks, histograms, pairs, cells,
// grouped summaries, key counts, a unit bound by the column as a private
// key, a row expression's CASE, a profile), exactly what the same fetch
// reads from an integer twin holding 1, 0 and NULL. Named in Booleans, an
// integer column fails every fetch whatever its rows (a column altered
// since its type was read), as a boolean compared with a number does.
func TestBooleanColumnOnPostgres(t *testing.T) {
	db := testdb.Postgres(t)
	for _, q := range []string{
		"CREATE TABLE dp_bools (id INTEGER, person INTEGER, b BOOLEAN, n INTEGER, amount INTEGER)",
		`INSERT INTO dp_bools SELECT i, i % 7, CASE WHEN i % 5 < 3 THEN TRUE WHEN i % 5 = 3 THEN FALSE END,
			CASE WHEN i % 5 < 3 THEN 1 WHEN i % 5 = 3 THEN 0 END, i % 13 FROM generate_series(0, 199) AS i`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	const salt = "0123456789abcdef0123456789abcdef"
	fetches := func(c string) map[string]sqlrewrite.Fetch {
		one := []sqlrewrite.Value{{Num: 1}}
		values := []sqlrewrite.Value{{Num: 0}, {Num: 1}}
		count := []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}}
		terms := []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}, {Kind: sqlrewrite.CountNonNull, Column: c}, {Kind: sqlrewrite.CountNumbers, Column: c},
			{Kind: sqlrewrite.ClampedSum, Column: c, Upper: 1}, {Kind: sqlrewrite.ClampedSumSquares, Column: c, Upper: 1}, {Kind: sqlrewrite.CountDistinctValues, Column: c}}
		cond := func(cd sqlrewrite.Condition) []sqlrewrite.Condition { cd.Column = c; return []sqlrewrite.Condition{cd} }
		unit := &sqlrewrite.UnitBound{Column: "person", MaxRows: 3, Order: []string{"id"}, Salt: salt, Key: c, KeyNumeric: true, MaxGroups: 1}
		paid := &sqlrewrite.RowExpr{Kind: sqlrewrite.RowCase, When: [][]sqlrewrite.Condition{cond(sqlrewrite.Condition{In: one})},
			Args: []*sqlrewrite.RowExpr{{Kind: sqlrewrite.RowColumn, Column: "amount", Upper: 20}, nil}}
		return map[string]sqlrewrite.Fetch{
			"summary":        {Summary: terms},
			"= 1":            {Filter: cond(sqlrewrite.Condition{In: one}), Summary: count},
			"exact in":       {Filter: cond(sqlrewrite.Condition{In: values, Exact: true}), Summary: count},
			"<> 1":           {Filter: cond(sqlrewrite.Condition{In: one, Complement: true}), Summary: count},
			"range":          {Filter: cond(sqlrewrite.Condition{Range: &sqlrewrite.Range{Lower: 0.5, HasLower: true}}), Summary: count},
			"is null":        {Filter: cond(sqlrewrite.Condition{IsNull: true}), Summary: count},
			"is not null":    {Filter: cond(sqlrewrite.Condition{IsNull: true, Complement: true}), Summary: count},
			"predicate":      {Boolean: &sqlrewrite.Predicate{Op: sqlrewrite.Not, Args: []*sqlrewrite.Predicate{{Op: sqlrewrite.Leaf, Leaf: &cond(sqlrewrite.Condition{In: one})[0]}}}, Summary: count},
			"window":         {Window: &sqlrewrite.Window{Column: c, Upper: 1, Offset: 40, Limit: 80}},
			"window others":  {Filter: []sqlrewrite.Condition{{Column: "amount", Range: &sqlrewrite.Range{Lower: 3, HasLower: true}}}, Window: &sqlrewrite.Window{Column: c, Upper: 1, Offset: 10, Limit: 90}},
			"grouped window": {Window: &sqlrewrite.Window{Column: c, Upper: 1, Limit: 1, Grouped: true}},
			"grid ranks":     {GridSums: &sqlrewrite.GridSums{Column: c, Upper: 1, Unit: 0.25, Ranks: &sqlrewrite.RankSlice{Offset: 30, Limit: 50}}},
			"histogram":      {Histogram: &sqlrewrite.Histogram{Column: c, Upper: 1, Bins: 4}},
			"pairs":          {Pairs: &sqlrewrite.Pairs{Y: "amount", YUpper: 20, X: c, XUpper: 1}},
			"cells":          {Cells: &sqlrewrite.Cells{Dims: []sqlrewrite.CellDim{{Column: c, Values: values}}}},
			"grouped":        {Grouped: &sqlrewrite.GroupedSummary{Dims: []sqlrewrite.CellDim{{Column: c, Values: values}}, Terms: terms}},
			"keys":           {Keys: &sqlrewrite.KeyCounts{Column: c, Numeric: true}},
			"unit keys":      {Unit: unit, Keys: &sqlrewrite.KeyCounts{Column: c, Numeric: true}},
			"row case":       {Derived: []sqlrewrite.DerivedColumn{{Name: "x", Expr: paid}}, Summary: []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.ClampedSum, Column: "x", Upper: 20}}},
			"profile":        {Profile: &sqlrewrite.Profile{Column: c, Upper: 1, Terms: terms[1:5]}},
		}
	}
	read := func(f sqlrewrite.Fetch) ([][]string, error) {
		f.Table = "dp_bools"
		q, args, err := sqlrewrite.Render(f, sqlrewrite.PostgreSQL)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := db.Query(q, args...)
		if err != nil {
			return nil, err
		}
		out := testdb.Strings(t, rows, q)
		slices.SortFunc(out, func(a, b []string) int { return strings.Compare(strings.Join(a, ","), strings.Join(b, ",")) })
		return out, nil
	}
	twins := fetches("n")
	for name, f := range fetches("b") {
		f.Booleans = []string{"b"}
		got, err := read(f)
		if err != nil {
			t.Errorf("%s over the boolean: %v", name, err)
			continue
		}
		want, err := read(twins[name])
		if err != nil {
			t.Fatalf("%s over the integer: %v", name, err)
		}
		if !slices.EqualFunc(got, want, slices.Equal) || len(got) == 0 {
			t.Errorf("%s: the boolean read %v, the integer %v", name, got, want)
		}
	}
	if _, err := db.Exec("DELETE FROM dp_bools"); err != nil {
		t.Fatal(err)
	}
	for name, f := range twins {
		f.Booleans = []string{"n"}
		if _, err := read(f); err == nil {
			t.Errorf("%s over an empty integer column named a boolean: answered, want the failure of every content", name)
		}
	}
}
