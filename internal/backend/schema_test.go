package backend

import (
	"context"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestPostgresColumnType: the types of existing columns, in the current
// schema and schema-qualified; no type for a missing table or on SQLite.
func TestPostgresColumnType(t *testing.T) {
	db := testdb.Postgres(t)
	if _, err := db.Exec("CREATE TABLE events (d TEXT, e DATE, f TIMESTAMPTZ)"); err != nil {
		t.Fatal(err)
	}
	var schema string
	if err := db.QueryRow("SELECT current_schema()").Scan(&schema); err != nil {
		t.Fatal(err)
	}
	b := New(db, sqlrewrite.PostgreSQL, nil)
	ctx := context.Background()
	for _, c := range []struct {
		table, column, want string
		ok                  bool
	}{
		{"events", "d", "text", true},
		{"events", "e", "date", true},
		{schema + ".events", "f", "timestamp with time zone", true},
		{"later", "d", "", false},
	} {
		typ, ok, err := b.PostgresColumnType(ctx, c.table, c.column)
		if err != nil || ok != c.ok || typ != c.want {
			t.Errorf("%s.%s: %q, %v, %v; want %q, %v", c.table, c.column, typ, ok, err, c.want, c.ok)
		}
	}
	if _, ok, err := New(testdb.SQLite(t), sqlrewrite.SQLite, nil).PostgresColumnType(ctx, "events", "d"); ok || err != nil {
		t.Errorf("SQLite: %v, %v", ok, err)
	}
}

// TestMySQLTableEngine: the engines of base tables, in the current database
// and qualified; none for a view, a missing table or on SQLite.
func TestMySQLTableEngine(t *testing.T) {
	db := testdb.MySQL(t)
	for _, s := range []string{
		"CREATE TABLE inno (a INT) ENGINE=InnoDB",
		"CREATE TABLE my (a INT) ENGINE=MyISAM",
		"CREATE VIEW v AS SELECT a FROM inno",
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	var database string
	if err := db.QueryRow("SELECT DATABASE()").Scan(&database); err != nil {
		t.Fatal(err)
	}
	b := New(db, sqlrewrite.MySQL, nil)
	ctx := context.Background()
	for _, c := range []struct {
		table, want string
		ok          bool
	}{
		{"inno", "InnoDB", true},
		{database + ".my", "MyISAM", true},
		{"v", "", false},
		{"later", "", false},
	} {
		engine, ok, err := b.MySQLTableEngine(ctx, c.table)
		if err != nil || ok != c.ok || engine != c.want {
			t.Errorf("%s: %q, %v, %v; want %q, %v", c.table, engine, ok, err, c.want, c.ok)
		}
	}
	if _, ok, err := New(testdb.SQLite(t), sqlrewrite.SQLite, nil).MySQLTableEngine(ctx, "inno"); ok || err != nil {
		t.Errorf("SQLite: %v, %v", ok, err)
	}
}
