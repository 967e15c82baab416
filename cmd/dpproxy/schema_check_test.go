package main

import (
	"context"
	"database/sql"
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
// repeatable_read, a MyISAM or Aria table, or a view over one, is refused
// by name (its reads keep no snapshot); InnoDB tables, views over them and
// missing tables pass, and
// with isolation none nothing is refused.
func TestCheckSnapshotEngines(t *testing.T) {
	db := testdb.MySQL(t)
	for _, s := range []string{
		"CREATE TABLE inno (a INT) ENGINE=InnoDB",
		"CREATE TABLE my (a INT) ENGINE=MyISAM",
		"CREATE TABLE ar (a INT) ENGINE=Aria",
		"CREATE VIEW v AS SELECT a FROM inno",
		"CREATE VIEW vm AS SELECT a FROM my",
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
	err := checkSnapshotEngines(ctx, be, config(catalog.IsolationRepeatableRead, "inno", "my", "ar", "vm"))
	if err == nil || !strings.Contains(err.Error(), "t_my") || !strings.Contains(err.Error(), "t_ar") || !strings.Contains(err.Error(), "t_vm") || strings.Contains(err.Error(), "t_inno") {
		t.Errorf("MyISAM and Aria tables and a view over MyISAM: %v, want all three refused by name", err)
	}
	if err := checkSnapshotEngines(ctx, be, config(catalog.IsolationNone, "my", "ar")); err != nil {
		t.Errorf("isolation none: %v", err)
	}
}

// TestCheckNumericKeys: at start, a column declared integer or real and
// open to partition selection must be numeric in PostgreSQL and MariaDB
// (a text column, even behind a view, is refused by name); text keys,
// numeric columns without partition selection and missing tables pass.
func TestCheckNumericKeys(t *testing.T) {
	key := func(name string, typ catalog.ColumnType, selected bool) catalog.Column {
		return catalog.Column{Name: name, Source: name, Type: typ, PartitionSelection: selected}
	}
	for _, c := range []struct {
		name    string
		db      func(t testing.TB) *sql.DB
		dialect sqlrewrite.Dialect
		text    string
	}{
		{"postgres", testdb.Postgres, sqlrewrite.PostgreSQL, "TEXT"},
		{"mariadb", testdb.MySQL, sqlrewrite.MySQL, "VARCHAR(20)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := c.db(t)
			for _, s := range []string{
				"CREATE TABLE keys_t (n BIGINT, d DECIMAL(10, 2), s " + c.text + ", x " + c.text + ")",
				"CREATE VIEW keys_v AS SELECT n, s FROM keys_t",
			} {
				if _, err := db.Exec(s); err != nil {
					t.Fatal(err)
				}
			}
			be := backend.New(db, c.dialect, nil)
			ctx := context.Background()
			good := []catalog.Table{
				{Name: "t", Source: "keys_t", Columns: []catalog.Column{key("n", catalog.Integer, true), key("d", catalog.Real, true), key("s", catalog.Text, true), key("x", catalog.Integer, false)}},
				{Name: "v", Source: "keys_v", Columns: []catalog.Column{key("n", catalog.Integer, true)}},
				{Name: "later", Source: "later", Columns: []catalog.Column{key("n", catalog.Integer, true)}},
			}
			if err := checkNumericKeys(ctx, be, good); err != nil {
				t.Errorf("numeric keys, a text key, a numeric column without selection: %v", err)
			}
			err := checkNumericKeys(ctx, be, []catalog.Table{
				{Name: "t", Source: "keys_t", Columns: []catalog.Column{key("n", catalog.Integer, true), key("x", catalog.Integer, true)}},
				{Name: "v", Source: "keys_v", Columns: []catalog.Column{key("s", catalog.Real, true)}},
			})
			if err == nil || !strings.Contains(err.Error(), "t.x") || !strings.Contains(err.Error(), "v.s") || strings.Contains(err.Error(), "t.n") {
				t.Errorf("text columns declared numeric keys: %v, want t.x and v.s refused by name", err)
			}
		})
	}
}
