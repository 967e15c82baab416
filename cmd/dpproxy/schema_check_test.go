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

// TestCheckSnapshotEngines: at start, on MariaDB with isolation
// repeatable_read, a MyISAM or Aria table is refused by name (its reads
// keep no snapshot); InnoDB tables, views and missing tables pass, and
// with isolation none nothing is refused.
func TestCheckSnapshotEngines(t *testing.T) {
	db := testdb.MySQL(t)
	for _, s := range []string{
		"CREATE TABLE inno (a INT) ENGINE=InnoDB",
		"CREATE TABLE my (a INT) ENGINE=MyISAM",
		"CREATE TABLE ar (a INT) ENGINE=Aria",
		"CREATE VIEW v AS SELECT a FROM inno",
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	be := backend.New(db, sqlrewrite.MySQL, nil)
	ctx := context.Background()
	config := func(isolation string, sources ...string) *catalog.Config {
		c := &catalog.Config{Backend: catalog.Database{Isolation: isolation}}
		for _, s := range sources {
			c.Tables = append(c.Tables, catalog.Table{Name: "t_" + s, Source: s})
		}
		return c
	}
	if err := checkSnapshotEngines(ctx, be, config(catalog.IsolationRepeatableRead, "inno", "v", "later")); err != nil {
		t.Errorf("InnoDB, a view and a missing table: %v", err)
	}
	err := checkSnapshotEngines(ctx, be, config(catalog.IsolationRepeatableRead, "inno", "my", "ar"))
	if err == nil || !strings.Contains(err.Error(), "t_my") || !strings.Contains(err.Error(), "t_ar") || strings.Contains(err.Error(), "t_inno") {
		t.Errorf("MyISAM and Aria tables: %v, want both refused by name", err)
	}
	if err := checkSnapshotEngines(ctx, be, config(catalog.IsolationNone, "my", "ar")); err != nil {
		t.Errorf("isolation none: %v", err)
	}
}
