package exec

import (
	"context"
	"database/sql"
	"testing"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestDeclaredTextCollationIsTheBackends: the collation dpproxy declares
// for text columns (catalog.Config.TextCollation) equates what the
// backend's =, IN and COUNT(DISTINCT) of a text column in its default
// collation equate. Of 'abc', 'ABC', 'abc ' and 'Ábc', MariaDB
// (utf8mb4_general_ci: case, accents and trailing spaces folded) finds
// all four equal to 'abc', one distinct value; PostgreSQL and SQLite
// (utf8mb4_0900_bin: byte for byte) one equal, four distinct.
func TestDeclaredTextCollationIsTheBackends(t *testing.T) {
	equal := map[string]float64{catalog.CollationGeneralCI: 4, catalog.CollationBinary: 1}
	distinct := map[string]float64{catalog.CollationGeneralCI: 1, catalog.CollationBinary: 4}
	for _, c := range []struct {
		driver string
		open   func(testing.TB) *sql.DB
		d      sqlrewrite.Dialect
		create string
	}{
		{catalog.DriverSQLite, testdb.SQLite, sqlrewrite.SQLite, "CREATE TABLE tc (s TEXT)"},
		{catalog.DriverPostgres, testdb.Postgres, sqlrewrite.PostgreSQL, "CREATE TABLE tc (s TEXT)"},
		{catalog.DriverMySQL, testdb.MySQL, sqlrewrite.MySQL, "CREATE TABLE tc (s VARCHAR(10) CHARACTER SET utf8mb4)"},
	} {
		t.Run(c.driver, func(t *testing.T) {
			back := backend.New(c.open(t), c.d, nil)
			for _, s := range []string{c.create, "INSERT INTO tc VALUES ('abc'), ('ABC'), ('abc '), ('Ábc')"} {
				if _, err := back.DB().Exec(s); err != nil {
					t.Fatal(err)
				}
			}
			cat := &catalog.Config{Backend: catalog.Database{Driver: c.driver}, Tables: []catalog.Table{{Name: "tc", Source: "tc", Columns: []catalog.Column{
				{Name: "s", Source: "s", Type: catalog.Text, PartitionSelection: true},
			}}}}
			coll := cat.TextCollation()
			ctx := context.Background()
			snap, err := back.Snapshot(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			defer snap.Close()
			for _, where := range []string{"s = 'abc'", "s IN ('abc', 'x')"} {
				st, err := sqlrewrite.NewParser(cat).Parse("SELECT COUNT(*) FROM tc WHERE " + where)
				if err != nil {
					t.Fatal(err)
				}
				sel := st.(*sqlrewrite.Select)
				got, err := snap.Summary(ctx, sqlrewrite.Fetch{Table: "tc", Filter: sel.Where, Boolean: sel.Boolean, Summary: []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}}})
				if err != nil {
					t.Fatal(err)
				}
				if got[0] != equal[coll] {
					t.Errorf("WHERE %s: %g rows; the declared %s equates %g of them with 'abc'", where, got[0], coll, equal[coll])
				}
			}
			got, err := snap.Summary(ctx, sqlrewrite.Fetch{Table: "tc", Summary: []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountDistinctValues, Column: "s"}}})
			if err != nil {
				t.Fatal(err)
			}
			if got[0] != distinct[coll] {
				t.Errorf("COUNT(DISTINCT s): %g; the declared %s has %g classes", got[0], coll, distinct[coll])
			}
		})
	}
}
