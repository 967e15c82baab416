package backend

import (
	"context"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestCheckTemporalColumns: on PostgreSQL a column declared a date or a
// timestamp must be one (a text column is refused at start: CAST of a row
// holding no date would fail the statement, depending on the data); date,
// timestamp and timestamptz columns, undeclared types and missing tables
// pass, and nothing is checked on SQLite.
func TestCheckTemporalColumns(t *testing.T) {
	table := func(name string, cols ...catalog.Column) catalog.Table {
		return catalog.Table{Name: name, Source: name, Columns: cols}
	}
	col := func(name string, typ catalog.ColumnType) catalog.Column {
		return catalog.Column{Name: name, Source: name, Type: typ}
	}
	db := testdb.Postgres(t)
	if _, err := db.Exec("CREATE TABLE events (d TEXT, e DATE, f TIMESTAMPTZ, g TIMESTAMP, x TEXT)"); err != nil {
		t.Fatal(err)
	}
	b := New(db, sqlrewrite.PostgreSQL, nil)
	ctx := context.Background()
	good := []catalog.Table{table("events", col("e", catalog.Date), col("f", catalog.Timestamp), col("g", catalog.Date), col("x", catalog.Text)),
		table("later", col("d", catalog.Date))}
	if err := b.CheckTemporalColumns(ctx, good); err != nil {
		t.Errorf("date, timestamptz and timestamp columns: %v", err)
	}
	err := b.CheckTemporalColumns(ctx, []catalog.Table{table("events", col("d", catalog.Date), col("e", catalog.Date))})
	if err == nil || !strings.Contains(err.Error(), "events.d") || strings.Contains(err.Error(), "events.e") {
		t.Errorf("a text column declared a date: %v, want it refused by name", err)
	}
	if err := New(testdb.SQLite(t), sqlrewrite.SQLite, nil).CheckTemporalColumns(ctx, []catalog.Table{table("events", col("d", catalog.Date))}); err != nil {
		t.Errorf("SQLite: %v", err)
	}
}
