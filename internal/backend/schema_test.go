package backend

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestColumnTypeOnPostgres: the types of existing columns, in the current
// schema and schema-qualified; no type for a missing table or on SQLite.
func TestColumnTypeOnPostgres(t *testing.T) {
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
		typ, ok, err := b.ColumnType(ctx, c.table, c.column)
		if err != nil || ok != c.ok || typ != c.want {
			t.Errorf("%s.%s: %q, %v, %v; want %q, %v", c.table, c.column, typ, ok, err, c.want, c.ok)
		}
	}
	if _, ok, err := New(testdb.SQLite(t), sqlrewrite.SQLite, nil).ColumnType(ctx, "events", "d"); ok || err != nil {
		t.Errorf("SQLite: %v, %v", ok, err)
	}
}

// TestColumnTypeFollowsTheSearchPath: on PostgreSQL an unqualified name is
// the relation the proxy's quoted fetches read: one found in a later
// schema of the search path (the current schema checked alone missed it:
// an independent review), and not a relation whose name differs in case;
// types are named as information_schema names them, a domain by its base
// type, and a materialized view's columns are found.
func TestColumnTypeFollowsTheSearchPath(t *testing.T) {
	ctx := context.Background()
	db := testdb.Postgres(t)
	db.SetMaxOpenConns(1) // the search path below is per connection
	var first string
	if err := db.QueryRow("SELECT current_schema()").Scan(&first); err != nil {
		t.Fatal(err)
	}
	second := first + "_later"
	for _, s := range []string{
		"CREATE SCHEMA " + second,
		"CREATE TABLE " + second + ".later_t (x TEXT)",
		"CREATE TABLE lower_t (x BIGINT)",
		"CREATE DOMAIN positive_int AS integer CHECK (VALUE >= 0)",
		"CREATE TABLE domain_t (p positive_int, v VARCHAR(10), n NUMERIC(10, 2), ts TIMESTAMP(3))",
		"CREATE MATERIALIZED VIEW matview_t AS SELECT v, p FROM domain_t",
		"SET search_path TO " + first + ", " + second,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _, _ = db.Exec("DROP SCHEMA " + second + " CASCADE") })
	b := New(db, sqlrewrite.PostgreSQL, nil)
	for _, c := range []struct {
		table, column, want string
		ok                  bool
	}{
		{"later_t", "x", "text", true},
		{second + ".later_t", "x", "text", true},
		{"lower_t", "x", "bigint", true},
		{"Lower_T", "x", "", false}, // "Lower_T" names no relation
		{"lower_t", "X", "", false},
		{"domain_t", "p", "integer", true}, // a domain: its base type
		{"domain_t", "v", "character varying", true},
		{"domain_t", "n", "numeric", true},
		{"domain_t", "ts", "timestamp without time zone", true},
		{"matview_t", "v", "character varying", true}, // information_schema omits materialized views
	} {
		typ, ok, err := b.ColumnType(ctx, c.table, c.column)
		if err != nil || ok != c.ok || typ != c.want {
			t.Errorf("%s.%s: %q, %v, %v; want %q, %v", c.table, c.column, typ, ok, err, c.want, c.ok)
		}
	}
}

// TestMySQLBaseEngines: the engines of base tables, in the current
// database and qualified, and of the base tables under views (nested, with
// a join and aliases); none for a missing table or on SQLite.
func TestMySQLBaseEngines(t *testing.T) {
	db := testdb.MySQL(t)
	for _, s := range []string{
		"CREATE TABLE inno (a INT) ENGINE=InnoDB",
		"CREATE TABLE my (a INT) ENGINE=MyISAM",
		"CREATE VIEW v AS SELECT a FROM inno",
		"CREATE VIEW `odd``name` AS SELECT x.a FROM inno AS x JOIN my AS y ON x.a = y.a",
		"CREATE VIEW w AS SELECT * FROM `odd``name`",
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
		table string
		want  map[string]string
	}{
		{"inno", map[string]string{database + ".inno": "InnoDB"}},
		{database + ".my", map[string]string{database + ".my": "MyISAM"}},
		{"v", map[string]string{database + ".inno": "InnoDB"}},
		{"w", map[string]string{database + ".inno": "InnoDB", database + ".my": "MyISAM"}},
		{"later", map[string]string{}},
	} {
		got, err := b.MySQLBaseEngines(ctx, c.table)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: %v, %v; want %v", c.table, got, err, c.want)
		}
	}
	if got, err := New(testdb.SQLite(t), sqlrewrite.SQLite, nil).MySQLBaseEngines(ctx, "inno"); got != nil || err != nil {
		t.Errorf("SQLite: %v, %v", got, err)
	}
}

// TestPartitionsCover: on PostgreSQL a table's listed partitions must be
// its partitioned source's leaves, each once, a sub-partitioned partition
// by itself or by its leaves; a partition missing from the list (detached
// and re-attached elsewhere, or attached later) or listed twice is found.
// A source that is not a partitioned table is not judged.
func TestPartitionsCover(t *testing.T) {
	ctx := context.Background()
	db := testdb.Postgres(t)
	for _, s := range []string{
		"CREATE TABLE part_t (k INTEGER) PARTITION BY RANGE (k)",
		"CREATE TABLE part_a PARTITION OF part_t FOR VALUES FROM (0) TO (10)",
		"CREATE TABLE part_b PARTITION OF part_t FOR VALUES FROM (10) TO (20) PARTITION BY RANGE (k)",
		"CREATE TABLE part_b1 PARTITION OF part_b FOR VALUES FROM (10) TO (15)",
		"CREATE TABLE part_b2 PARTITION OF part_b FOR VALUES FROM (15) TO (20)",
		"CREATE TABLE plain_t (k INTEGER)",
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	var schema string
	if err := db.QueryRow("SELECT current_schema()").Scan(&schema); err != nil {
		t.Fatal(err)
	}
	b := New(db, sqlrewrite.PostgreSQL, nil)
	for _, c := range []struct {
		source          string
		partitions      []string
		covers, checked bool
	}{
		{"part_t", []string{"part_a", "part_b"}, true, true},
		{"part_t", []string{"part_a", schema + ".part_b1", "part_b2"}, true, true},
		{"part_t", []string{"part_a", "part_b1"}, false, true},           // part_b2 missing
		{"part_t", []string{"part_a", "part_b", "part_b1"}, false, true}, // part_b1 twice
		{"part_t", []string{"part_a", "part_b", "plain_t"}, false, true}, // a relation outside
		{"part_t", []string{"part_a", "part_b", "missing"}, false, true}, // names no relation
		{"plain_t", []string{"part_a"}, false, false},
		{"later", []string{"part_a"}, false, false},
	} {
		covers, checked, err := b.PartitionsCover(ctx, c.source, c.partitions)
		if err != nil || covers != c.covers || checked != c.checked {
			t.Errorf("%s over %v: covers %v checked %v (%v); want %v, %v", c.source, c.partitions, covers, checked, err, c.covers, c.checked)
		}
	}
}

// TestHasColumn: on SQLite, PostgreSQL and MariaDB a column of a table or
// a view is found by its name, unqualified or schema-qualified, in an
// empty table too (the schema is read, not the rows), text columns
// included; a missing table or column is not found. SQLite compares
// names without case, as it resolves them.
func TestHasColumn(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		dialect sqlrewrite.Dialect
		open    func(testing.TB) *sql.DB
		schema  string // the current schema's name query
	}{
		{"sqlite", sqlrewrite.SQLite, testdb.SQLite, "SELECT 'main'"},
		{"postgres", sqlrewrite.PostgreSQL, testdb.Postgres, "SELECT current_schema()"},
		{"mariadb", sqlrewrite.MySQL, testdb.MySQL, "SELECT DATABASE()"},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := c.open(t)
			for _, s := range []string{
				"CREATE TABLE tags (tag VARCHAR(20), note TEXT)",
				"CREATE TABLE empty_tags (tag VARCHAR(20))",
				"INSERT INTO tags VALUES ('a', 'x')",
				"CREATE VIEW tag_view AS SELECT tag FROM tags",
			} {
				if _, err := db.Exec(s); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
			}
			var schema string
			if err := db.QueryRow(c.schema).Scan(&schema); err != nil {
				t.Fatal(err)
			}
			b := New(db, c.dialect, nil)
			for _, q := range []struct {
				table, column string
				want          bool
			}{
				{"tags", "tag", true},
				{"tags", "note", true},
				{schema + ".tags", "tag", true},
				{"empty_tags", "tag", true},
				{"tag_view", "tag", true},
				{"tags", "other", false},
				{"later", "tag", false},
				{schema + ".later", "tag", false},
			} {
				if ok, err := b.HasColumn(ctx, q.table, q.column); err != nil || ok != q.want {
					t.Errorf("%s.%s: %v, %v; want %v", q.table, q.column, ok, err, q.want)
				}
			}
			if c.dialect == sqlrewrite.SQLite {
				if ok, err := b.HasColumn(ctx, "TAGS", "Tag"); err != nil || !ok {
					t.Errorf("TAGS.Tag: %v, %v; want found", ok, err)
				}
				// A view over a dropped table, and a schema not attached.
				for _, s := range []string{"CREATE TABLE gone (tag TEXT)", "CREATE VIEW gone_view AS SELECT tag FROM gone", "DROP TABLE gone"} {
					if _, err := db.Exec(s); err != nil {
						t.Fatalf("%s: %v", s, err)
					}
				}
				for _, table := range []string{"gone_view", "aux.tags"} {
					if ok, err := b.HasColumn(ctx, table, "tag"); err != nil || ok {
						t.Errorf("%s.tag: %v, %v; want not found", table, ok, err)
					}
				}
			}
		})
	}
}
