package main

import (
	"context"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestCheckTemporalColumns: at start, on PostgreSQL, a column declared a
// date or a timestamp must be one: a text column is refused by name (CAST
// of a row holding no date would fail the statement, depending on the
// data); date, timestamp and timestamptz columns and missing tables pass.
func TestCheckTemporalColumns(t *testing.T) {
	col := func(name string, typ catalog.ColumnType) catalog.Column {
		return catalog.Column{Name: name, Source: name, Type: typ}
	}
	db := testdb.Postgres(t)
	if _, err := db.Exec("CREATE TABLE events (d TEXT, e DATE, f TIMESTAMPTZ, g TIMESTAMP)"); err != nil {
		t.Fatal(err)
	}
	be := backend.New(db, sqlrewrite.PostgreSQL, nil)
	ctx := context.Background()
	good := []catalog.Table{
		{Name: "events", Source: "events", Columns: []catalog.Column{col("e", catalog.Date), col("f", catalog.Timestamp), col("g", catalog.Date), col("d", catalog.Text)}},
		{Name: "later", Source: "later", Columns: []catalog.Column{col("d", catalog.Date)}},
	}
	if err := checkTemporalColumns(ctx, be, good); err != nil {
		t.Errorf("date, timestamptz and timestamp columns: %v", err)
	}
	err := checkTemporalColumns(ctx, be, []catalog.Table{{Name: "events", Source: "events", Columns: []catalog.Column{col("d", catalog.Date), col("e", catalog.Date)}}})
	if err == nil || !strings.Contains(err.Error(), "events.d") || strings.Contains(err.Error(), "events.e") {
		t.Errorf("a text column declared a date: %v, want it refused by name", err)
	}
}
