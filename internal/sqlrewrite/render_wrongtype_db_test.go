package sqlrewrite_test

import (
	"fmt"
	"maps"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestTextDateColumnOnPostgres: on PostgreSQL a column declared a date or
// a timestamp but of type text in the backend (a table created or altered
// after the proxy started) makes every fetch that reads it as a date fail
// whatever its rows: empty, with dates only, or with a row that holds no
// date ('garbage', read as text beyond the upper bound, and '1000-99-99',
// within the bounds as text, whose cast to a date failed the statement
// only on the neighbour holding it: an independent review). The outcome
// is then the same on every neighbour; the proxy refuses such a column
// before it reserves budget (cmd/dpproxy's type check).
func TestTextDateColumnOnPostgres(t *testing.T) {
	db := testdb.Postgres(t)
	if _, err := db.Exec("CREATE TABLE dp_text_dates (d TEXT)"); err != nil {
		t.Fatal(err)
	}
	for _, typ := range []catalog.ColumnType{catalog.Date, catalog.Timestamp} {
		col := catalog.Column{Type: typ}
		bound := func(s string) float64 {
			if typ == catalog.Timestamp {
				s += " 00:00:00"
			}
			x, err := col.ParseTemporal(s)
			if err != nil {
				t.Fatal(err)
			}
			return x
		}
		lo, hi := bound("2015-01-01"), bound("2024-12-31")
		temporal := &sqlrewrite.RowExpr{Kind: sqlrewrite.RowTemporal, Column: "d", Temporal: typ, Lower: lo, Upper: hi}
		fetches := map[string]sqlrewrite.Fetch{
			"range": {Table: "dp_text_dates", Summary: []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}},
				Filter: []sqlrewrite.Condition{{Column: "d", Temporal: typ, Range: &sqlrewrite.Range{Lower: bound("2019-01-01"), HasLower: true}}}},
			"cells": {Table: "dp_text_dates", Cells: &sqlrewrite.Cells{Dims: []sqlrewrite.CellDim{
				{Column: "d", Date: &sqlrewrite.DateAxis{Type: typ, Part: sqlrewrite.PartDay, Lower: lo, Upper: hi}}}}},
			"window": {Table: "dp_text_dates", Derived: []sqlrewrite.DerivedColumn{{Name: "n", Expr: temporal}},
				Window: &sqlrewrite.Window{Column: "n", Lower: lo, Upper: hi, Offset: 0, Limit: 100}},
		}
		for _, rows := range [][]string{nil, {"2020-06-15"}, {"garbage"}, {"1000-99-99"}} {
			if _, err := db.Exec("DELETE FROM dp_text_dates"); err != nil {
				t.Fatal(err)
			}
			for _, v := range rows {
				if _, err := db.Exec("INSERT INTO dp_text_dates VALUES ($1)", v); err != nil {
					t.Fatal(err)
				}
			}
			for name, f := range fetches {
				q, args, err := sqlrewrite.Render(f, sqlrewrite.PostgreSQL)
				if err != nil {
					t.Fatal(err)
				}
				r, err := db.Query(q, args...)
				if err == nil {
					for r.Next() {
					}
					err = r.Err()
					r.Close()
				}
				if err == nil {
					t.Errorf("%v %s over text holding %q: answered, want the same failure as on every other content", typ, name, rows)
				}
			}
		}
	}
}

// TestTextNumericKeyUnitBoundingOnMariaDB: on MariaDB a private key
// declared integer but of type VARCHAR in the backend is read as numbers
// ('5', '05' and '5.0' all as 5): a unit adds at most 1 to each key of a
// KeyCounts fetch at k = 1. The bounding grouped the unit's rows by the
// stored text, and one unit holding the three spellings counted 3 toward
// the key 5.
func TestTextNumericKeyUnitBoundingOnMariaDB(t *testing.T) {
	db := testdb.MySQL(t)
	for _, s := range []string{
		"CREATE TABLE dp_tkeys (u INT, f VARCHAR(10), x DOUBLE)",
		"INSERT INTO dp_tkeys VALUES (1, '5', 1), (1, '05', 2), (1, '5.0', 3), (2, '5', 4), (2, '7', 5), (3, 'abc', 6)",
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	u := &sqlrewrite.UnitBound{Column: "u", MaxRows: 1, Order: []string{"x", "f"}, Salt: fmt.Sprintf("%032x", 5),
		Key: "f", KeyNumeric: true, MaxGroups: 3}
	q, args, err := sqlrewrite.Render(sqlrewrite.Fetch{Table: "dp_tkeys", Unit: u, Keys: &sqlrewrite.KeyCounts{Column: "f", Numeric: true}}, sqlrewrite.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	got := map[float64]int64{}
	for rows.Next() {
		var v float64
		var n int64
		if err := rows.Scan(&v, &n); err != nil {
			t.Fatal(err)
		}
		got[v] += n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if want := map[float64]int64{5: 2, 7: 1, 0: 1}; !maps.Equal(got, want) {
		t.Errorf("units per key %v, want %v (one per unit and key)", got, want)
	}
}
