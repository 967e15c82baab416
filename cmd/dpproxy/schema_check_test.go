package main

import (
	"context"
	"database/sql"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

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

// TestCheckColumnTypes: at start, on PostgreSQL and MariaDB, a column
// declared integer or real must be numeric and one declared a date or a
// timestamp temporal: text columns, even behind a view, are refused by
// name, with or without partition selection (over text the backend's
// order is not the values', so one row could make a statement fail:
// an independent review); numeric, date and timestamp columns, text
// columns declared text and missing tables pass, and the columns with a
// time zone are recorded.
func TestCheckColumnTypes(t *testing.T) {
	col := func(name string, typ catalog.ColumnType, selected bool) catalog.Column {
		return catalog.Column{Name: name, Source: name, Type: typ, PartitionSelection: selected}
	}
	for _, c := range []struct {
		name      string
		db        func(t testing.TB) *sql.DB
		dialect   sqlrewrite.Dialect
		text      string
		timestamp []string
	}{
		{"postgres", testdb.Postgres, sqlrewrite.PostgreSQL, "TEXT", []string{"TIMESTAMP", "TIMESTAMPTZ"}},
		{"mariadb", testdb.MySQL, sqlrewrite.MySQL, "VARCHAR(20)", []string{"DATETIME", "TIMESTAMP NULL"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := c.db(t)
			for _, s := range []string{
				"CREATE TABLE types_t (n BIGINT, d DECIMAL(10, 2), f DOUBLE PRECISION, s " + c.text + ", x " + c.text +
					", day DATE, ts " + c.timestamp[0] + ", tz " + c.timestamp[1] + ")",
				"CREATE VIEW types_v AS SELECT n, s FROM types_t",
			} {
				if _, err := db.Exec(s); err != nil {
					t.Fatal(err)
				}
			}
			be := backend.New(db, c.dialect, nil)
			ctx := context.Background()
			good := []catalog.Table{
				{Name: "t", Source: "types_t", Columns: []catalog.Column{
					col("n", catalog.Integer, true), col("d", catalog.Real, true), col("f", catalog.Real, false), col("s", catalog.Text, true),
					col("x", catalog.Text, false), col("day", catalog.Date, false), col("ts", catalog.Timestamp, false),
					col("tz", catalog.Timestamp, false), col("ts", catalog.Date, false)}},
				{Name: "v", Source: "types_v", Columns: []catalog.Column{col("n", catalog.Integer, true)}},
				{Name: "later", Source: "later", Columns: []catalog.Column{col("n", catalog.Integer, true), col("d", catalog.Date, false)}},
			}
			zones := &catalog.ColumnZones{}
			if err := checkColumnTypes(ctx, be, good, zones, slog.New(slog.DiscardHandler)); err != nil {
				t.Errorf("numeric, date and timestamp columns, text declared text, a missing table: %v", err)
			}
			// Which columns have a time zone (TIMESTAMP, timestamptz), read
			// in backend.time_zone whatever the session's zone; a missing
			// table's are unknown.
			for _, z := range []struct {
				table, column string
				zoned, known  bool
			}{{"t", "day", false, true}, {"t", "ts", false, true}, {"t", "tz", true, true}, {"later", "d", false, false}} {
				if zoned, known := zones.Zoned(z.table, z.column); zoned != z.zoned || known != z.known {
					t.Errorf("%s.%s: zoned %v (known %v), want %v (%v)", z.table, z.column, zoned, known, z.zoned, z.known)
				}
			}
			err := checkColumnTypes(ctx, be, []catalog.Table{
				{Name: "t", Source: "types_t", Columns: []catalog.Column{
					col("n", catalog.Integer, true), col("x", catalog.Real, false), col("s", catalog.Date, false), col("day", catalog.Integer, false)}},
				{Name: "v", Source: "types_v", Columns: []catalog.Column{col("s", catalog.Integer, true)}},
			}, nil, slog.New(slog.DiscardHandler))
			for _, name := range []string{"t.x", "t.s", "t.day", "v.s"} {
				if err == nil || !strings.Contains(err.Error(), name+" ") {
					t.Errorf("%s: got %v, want it refused by name", name, err)
				}
			}
			if err != nil && strings.Contains(err.Error(), "t.n ") {
				t.Errorf("t.n refused: %v", err)
			}
		})
	}
}

// TestCheckBooleanColumnTypes: at start, on PostgreSQL, a boolean column
// declared integer with bounds within [0, 1] passes (it reads as 1 and
// 0), declared real or with bounds beyond [0, 1] it is refused by name
// with the hint to declare it integer in [0, 1], and a text column
// declared integer is still refused.
func TestCheckBooleanColumnTypes(t *testing.T) {
	db := testdb.Postgres(t)
	if _, err := db.Exec("CREATE TABLE bools_t (paid BOOLEAN, s TEXT)"); err != nil {
		t.Fatal(err)
	}
	be := backend.New(db, sqlrewrite.PostgreSQL, nil)
	col := func(name string, typ catalog.ColumnType, lo, hi float64) catalog.Column {
		return catalog.Column{Name: name, Source: name, Type: typ, Lower: &lo, Upper: &hi}
	}
	check := func(c catalog.Column) error {
		return checkColumnTypes(context.Background(), be, []catalog.Table{{Name: "t", Source: "bools_t", Columns: []catalog.Column{c}}}, nil, slog.New(slog.DiscardHandler))
	}
	for _, c := range []catalog.Column{col("paid", catalog.Integer, 0, 1), col("paid", catalog.Integer, 0, 0.5)} {
		if err := check(c); err != nil {
			t.Errorf("boolean declared integer in [%g, %g]: %v", *c.Lower, *c.Upper, err)
		}
	}
	for _, c := range []catalog.Column{col("paid", catalog.Real, 0, 1), col("paid", catalog.Integer, 0, 2), col("paid", catalog.Integer, -1, 1)} {
		if err := check(c); err == nil || !strings.Contains(err.Error(), "t.paid ") || !strings.Contains(err.Error(), "declare it integer with lower: 0 and upper: 1") {
			t.Errorf("boolean declared %s in [%g, %g]: %v, want it refused by name with the hint", c.Type, *c.Lower, *c.Upper, err)
		}
	}
	if err := check(col("s", catalog.Integer, 0, 1)); err == nil || !strings.Contains(err.Error(), "t.s ") {
		t.Errorf("text declared integer: %v, want it refused by name", err)
	}
}

// TestTableTypesRefresh: the check before a statement's reservation
// passes a well-typed table and refuses a missing one (1146, before any
// reservation: its fetch would fail charged), keeps its verdict for
// typeCheckTTL, and then reads the types again: a column altered to
// VARCHAR while declared real is refused with an Unsupported error naming
// it, and passes again once altered back; the missing table, created,
// passes. So for a table of text columns only: an empty one passes, and
// once dropped is refused after the TTL.
func TestTableTypesRefresh(t *testing.T) {
	db := testdb.MySQL(t)
	for _, s := range []string{"CREATE TABLE tt (x DOUBLE)", "CREATE TABLE tx (k VARCHAR(10))"} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	clock := time.Unix(0, 0)
	c := newTableTypes(backend.New(db, sqlrewrite.MySQL, nil), false, slog.New(slog.DiscardHandler), nil)
	c.now = func() time.Time { return clock }
	table := &catalog.Table{Name: "t", Source: "tt", Columns: []catalog.Column{{Name: "x", Source: "x", Type: catalog.Real}}}
	missing := &catalog.Table{Name: "m", Source: "later", Columns: []catalog.Column{{Name: "x", Source: "x", Type: catalog.Real}}}
	texts := &catalog.Table{Name: "x", Source: "tx", Columns: []catalog.Column{{Name: "k", Source: "k", Type: catalog.Text}}}
	for _, tb := range []*catalog.Table{table, texts} {
		if err := c.check(ctx, "ana", tb, nil); err != nil {
			t.Errorf("%s: %v", tb.Name, err)
		}
	}
	if _, err := db.Exec("DROP TABLE tx"); err != nil {
		t.Fatal(err)
	}
	if err := c.check(ctx, "ana", missing, nil); dperr.KindOf(err) != dperr.UnknownTable || !strings.Contains(err.Error(), "no table later") {
		t.Errorf("missing table: %v, want UnknownTable naming later", err)
	}
	if _, err := db.Exec("CREATE TABLE later (x DOUBLE)"); err != nil {
		t.Fatal(err)
	}
	alter := func(typ string) {
		t.Helper()
		if _, err := db.Exec("ALTER TABLE tt MODIFY x " + typ); err != nil {
			t.Fatal(err)
		}
	}
	alter("VARCHAR(10)")
	if err := c.check(ctx, "ana", table, nil); err != nil {
		t.Errorf("within the TTL: %v, want the kept verdict", err)
	}
	if err := c.check(ctx, "ana", texts, nil); err != nil {
		t.Errorf("text table dropped, within the TTL: %v, want the kept verdict", err)
	}
	clock = clock.Add(typeCheckTTL)
	if err := c.check(ctx, "ana", texts, nil); dperr.KindOf(err) != dperr.UnknownTable || !strings.Contains(err.Error(), "no table tx") {
		t.Errorf("text table dropped, after the TTL: %v, want UnknownTable naming tx", err)
	}
	if err := c.check(ctx, "ana", table, nil); dperr.KindOf(err) != dperr.Unsupported || !strings.Contains(err.Error(), "t.x (declared real, a backend varchar)") {
		t.Errorf("after the TTL: %v, want Unsupported naming t.x", err)
	}
	alter("DOUBLE")
	clock = clock.Add(typeCheckTTL)
	if err := c.check(ctx, "ana", table, nil); err != nil {
		t.Errorf("altered back: %v", err)
	}
	if err := c.check(ctx, "ana", missing, nil); err != nil {
		t.Errorf("the missing table, created: %v", err)
	}
}

// TestTableColumnsRefresh: on SQLite, PostgreSQL and MariaDB, once the
// check before a statement's reservation reads the table again
// (typeCheckTTL), a configured column the backend's table lost (dropped,
// or renamed) refuses the statements that read it with 1054, naming it
// as configured and in the backend, and only those; a privacy unit
// column lost refuses the unit table's statements, saying so. An all-NULL
// column is not lost: the check reads the schema, not the rows. Within
// the TTL the kept verdict holds; the columns added back pass after it.
func TestTableColumnsRefresh(t *testing.T) {
	for _, b := range []struct {
		name    string
		db      func(testing.TB) *sql.DB
		dialect sqlrewrite.Dialect
	}{
		{"sqlite", testdb.SQLite, sqlrewrite.SQLite},
		{"postgres", testdb.Postgres, sqlrewrite.PostgreSQL},
		{"mariadb", testdb.MySQL, sqlrewrite.MySQL},
	} {
		t.Run(b.name, func(t *testing.T) {
			db := b.db(t)
			run := func(statements ...string) {
				t.Helper()
				for _, s := range statements {
					if _, err := db.Exec(s); err != nil {
						t.Fatalf("%s: %v", s, err)
					}
				}
			}
			run("CREATE TABLE cols_t (x DOUBLE PRECISION, y_src DOUBLE PRECISION, k VARCHAR(10), pid VARCHAR(10))",
				"INSERT INTO cols_t (x, k, pid) VALUES (1, 'a', 'p')") // y_src: NULL in every row
			ctx := context.Background()
			clock := time.Unix(0, 0)
			c := newTableTypes(backend.New(db, b.dialect, nil), false, slog.New(slog.DiscardHandler), nil)
			c.now = func() time.Time { return clock }
			real := func(name, source string) catalog.Column {
				return catalog.Column{Name: name, Source: source, Type: catalog.Real}
			}
			table := &catalog.Table{Name: "t", Source: "cols_t", Columns: []catalog.Column{real("x", "x"), real("y", "y_src"), {Name: "k", Source: "k", Type: catalog.Text}}}
			units := &catalog.Table{Name: "u", Source: "cols_t", PrivacyUnit: "pid", MaxRowsPerUnit: 1, MaxGroupsPerUnit: 1, Columns: []catalog.Column{real("x", "x")}}
			passes := func(when string, tb *catalog.Table, reads ...string) {
				t.Helper()
				if err := c.check(ctx, "ana", tb, reads); err != nil {
					t.Errorf("%s: %s reading %v: %v", when, tb.Name, reads, err)
				}
			}
			refused := func(when string, tb *catalog.Table, reads []string, want ...string) {
				t.Helper()
				err := c.check(ctx, "ana", tb, reads)
				if dperr.KindOf(err) != dperr.UnknownColumn {
					t.Errorf("%s: %s reading %v: %v, want UnknownColumn", when, tb.Name, reads, err)
					return
				}
				for _, w := range append(want, "no budget was spent") {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%s: %s reading %v: %q lacks %q", when, tb.Name, reads, err, w)
					}
				}
			}
			passes("all there, y all NULL", table, "k", "x", "y_src")
			passes("all there", units, "pid", "x")
			run("ALTER TABLE cols_t RENAME COLUMN y_src TO y_renamed", "ALTER TABLE cols_t DROP COLUMN pid")
			passes("within the TTL", table, "y_src")
			passes("within the TTL", units, "pid", "x")
			clock = clock.Add(typeCheckTTL)
			refused("y renamed", table, []string{"k", "y_src"}, "Unknown column 'y' in 'field list'", "the configuration declares y (table t)", "backend table cols_t lacks column y_src")
			passes("y renamed", table, "k", "x")
			passes("y renamed", table)
			refused("pid dropped", units, []string{"pid", "x"}, "Unknown column 'pid' in 'field list'", "privacy unit")
			run("ALTER TABLE cols_t RENAME COLUMN y_renamed TO y_src", "ALTER TABLE cols_t ADD COLUMN pid VARCHAR(10)")
			refused("added back, within the TTL", table, []string{"y_src"}, "Unknown column 'y'")
			clock = clock.Add(typeCheckTTL)
			passes("added back", table, "k", "x", "y_src")
			passes("added back", units, "pid", "x")
		})
	}
}

// TestReadCharsets: on MariaDB, each text column's character set and
// collation are recorded (binary for VARBINARY, nothing for a missing
// table), and a configured value the column's character set cannot
// represent is refused at start, naming the column.
func TestReadCharsets(t *testing.T) {
	db := testdb.MySQL(t)
	if _, err := db.Exec("CREATE TABLE cs_t (l VARCHAR(20) CHARACTER SET latin1, b VARBINARY(20), u VARCHAR(20) CHARACTER SET utf8mb4)"); err != nil {
		t.Fatal(err)
	}
	be := backend.New(db, sqlrewrite.MySQL, nil)
	ctx := context.Background()
	text := func(name string, values ...string) catalog.Column {
		return catalog.Column{Name: name, Source: name, Type: catalog.Text, Values: values}
	}
	cs := &catalog.Charsets{}
	tables := []catalog.Table{
		{Name: "t", Source: "cs_t", Columns: []catalog.Column{text("l", "a", "é"), text("b", "😀"), text("u", "😀")}},
		{Name: "later", Source: "later", Columns: []catalog.Column{text("l")}},
	}
	if bad, err := readCharsets(ctx, be, tables, cs); err != nil || len(bad) > 0 {
		t.Fatal(bad, err)
	}
	for col, want := range map[string]catalog.Charset{
		"l": {Name: "latin1", Collation: "latin1_swedish_ci"}, "b": {Name: "binary"}, "u": {Name: "utf8mb4", Collation: "utf8mb4_general_ci"},
	} {
		if got, ok := cs.Of("t", col); !ok || got != want {
			t.Errorf("t.%s: got %+v (%v), want %+v", col, got, ok, want)
		}
	}
	if _, ok := cs.Of("later", "l"); ok {
		t.Error("a missing table has a character set")
	}
	tables[0].Columns[0] = text("l", "a", "😀")
	if bad, err := readCharsets(ctx, be, tables, &catalog.Charsets{}); err != nil || len(bad) != 1 || !strings.HasPrefix(bad[0], "t.l:") {
		t.Errorf("a latin1 column declaring 😀: got %v, %v; want t.l named", bad, err)
	}
	// A key chosen by partition selection on a VARBINARY column would be
	// read as utf8mb4 text, where 0xFF and '?' are one key (an
	// independent review released '?' counting 300 rows of three values).
	tables[0].Columns[0] = text("l", "a")
	tables[0].Columns[1].PartitionSelection = true
	if bad, err := readCharsets(ctx, be, tables, &catalog.Charsets{}); err != nil || len(bad) != 1 || !strings.HasPrefix(bad[0], "t.b: partition_selection") {
		t.Errorf("partition_selection on a VARBINARY column: got %v, %v; want t.b named", bad, err)
	}
}

// TestTableCheckRefreshesCharsets: the check before a statement's
// reservation also reads a checked table's character sets, so a table
// created after start, which the start read could not find (its
// statements refused with 1146 until then), has its text columns'
// literals checked from its next statement on: the statement
// whose check finds them, parsed without them, is refused uncharged, to
// be run again.
func TestTableCheckRefreshesCharsets(t *testing.T) {
	db := testdb.MySQL(t)
	cs := &catalog.Charsets{}
	c := newTableTypes(backend.New(db, sqlrewrite.MySQL, nil), false, slog.New(slog.DiscardHandler), cs)
	table := &catalog.Table{Name: "late", Source: "cs_late", Columns: []catalog.Column{{Name: "l", Source: "l", Type: catalog.Text}}}
	if err := c.check(context.Background(), "ana", table, nil); dperr.KindOf(err) != dperr.UnknownTable {
		t.Fatalf("the missing table: %v, want UnknownTable", err)
	}
	if _, ok := cs.Of("late", "l"); ok {
		t.Fatal("a missing table has a character set")
	}
	if _, err := db.Exec("CREATE TABLE cs_late (l VARCHAR(20) CHARACTER SET latin1)"); err != nil {
		t.Fatal(err)
	}
	c.ttl = 0
	if err := c.check(context.Background(), "ana", table, nil); dperr.KindOf(err) != dperr.Unsupported || !strings.Contains(err.Error(), "run it again") {
		t.Fatalf("the statement parsed before the character set was known: %v, want it refused to be run again", err)
	}
	if err := c.check(context.Background(), "ana", table, nil); err != nil {
		t.Fatal(err)
	}
	if got, ok := cs.Of("late", "l"); !ok || got.Name != "latin1" {
		t.Errorf("after the table was created: %+v, %v; want latin1", got, ok)
	}
}

// TestTableCheckRefusesAfterCharsetChange: on MariaDB, after ALTER TABLE
// converts a text column to latin1, the refresh that finds it refuses the
// statement it runs for (parsed against the old set, which accepted 'ē')
// uncharged, and the statement parsed again is refused by the parser
// before anything is reserved; the next statement passes the check. It
// used to pass, and 'ē' failed in the backend, charged, until a statement
// parsed after the refresh.
func TestTableCheckRefusesAfterCharsetChange(t *testing.T) {
	db := testdb.MySQL(t)
	if _, err := db.Exec("CREATE TABLE cs_alt (age INTEGER, name VARCHAR(20) CHARACTER SET utf8mb4)"); err != nil {
		t.Fatal(err)
	}
	be := backend.New(db, sqlrewrite.MySQL, nil)
	ctx := context.Background()
	lo, hi := 0.0, 100.0
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "tn", Source: "cs_alt", Columns: []catalog.Column{
		{Name: "age", Source: "age", Type: catalog.Integer, Lower: &lo, Upper: &hi},
		{Name: "name", Source: "name", Type: catalog.Text},
	}}}}
	cs := &catalog.Charsets{}
	if bad, err := readCharsets(ctx, be, cat.Tables, cs); err != nil || len(bad) > 0 {
		t.Fatal(bad, err)
	}
	parser := sqlrewrite.NewParser(cat)
	parser.SetCharsets(cs)
	const q = "SELECT COUNT(*) FROM tn WHERE name = 'ē'"
	if _, err := parser.Parse(q); err != nil {
		t.Fatalf("utf8mb4: %v", err)
	}
	clock := time.Unix(0, 0)
	c := newTableTypes(be, false, slog.New(slog.DiscardHandler), cs)
	c.now = func() time.Time { return clock }
	table := &cat.Tables[0]
	if err := c.check(ctx, "ana", table, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("ALTER TABLE cs_alt MODIFY name VARCHAR(20) CHARACTER SET latin1"); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(typeCheckTTL)
	if err := c.check(ctx, "ana", table, nil); dperr.KindOf(err) != dperr.Unsupported || !strings.Contains(err.Error(), "run it again") {
		t.Errorf("the check that finds latin1: %v, want the statement refused to be run again", err)
	}
	if _, err := parser.Parse(q); dperr.KindOf(err) != dperr.CollationMix {
		t.Errorf("parsed again after the refresh: got %v, want 1267 for latin1", err)
	}
	if err := c.check(ctx, "ana", table, nil); err != nil {
		t.Errorf("the next statement: %v, want it to pass", err)
	}
}

// TestTableCheckKeepsUnrepresentableValues: on MariaDB, a refresh that
// finds a configured value (values:) the column's new character set
// cannot represent keeps that as the table's verdict: every statement is
// refused uncharged, naming the value, until the column is converted back
// (it was only logged, and each GROUP BY on the column was charged and
// failed in the backend).
func TestTableCheckKeepsUnrepresentableValues(t *testing.T) {
	db := testdb.MySQL(t)
	if _, err := db.Exec("CREATE TABLE cs_vals (name VARCHAR(20) CHARACTER SET utf8mb4)"); err != nil {
		t.Fatal(err)
	}
	be := backend.New(db, sqlrewrite.MySQL, nil)
	ctx := context.Background()
	table := &catalog.Table{Name: "tv", Source: "cs_vals", Columns: []catalog.Column{
		{Name: "name", Source: "name", Type: catalog.Text, Values: []string{"a", "ē"}}}}
	cs := &catalog.Charsets{}
	if bad, err := readCharsets(ctx, be, []catalog.Table{*table}, cs); err != nil || len(bad) > 0 {
		t.Fatal(bad, err)
	}
	clock := time.Unix(0, 0)
	c := newTableTypes(be, false, slog.New(slog.DiscardHandler), cs)
	c.now = func() time.Time { return clock }
	alter := func(charset string) {
		t.Helper()
		if _, err := db.Exec("ALTER TABLE cs_vals MODIFY name VARCHAR(20) CHARACTER SET " + charset); err != nil {
			t.Fatal(err)
		}
		clock = clock.Add(typeCheckTTL)
	}
	alter("latin1")
	for i := range 2 {
		if err := c.check(ctx, "ana", table, nil); dperr.KindOf(err) != dperr.Unsupported || !strings.Contains(err.Error(), "tv.name: value \"ē\"") {
			t.Errorf("statement %d after latin1: %v, want Unsupported naming tv.name's value", i, err)
		}
	}
	alter("utf8mb4")
	if err := c.check(ctx, "ana", table, nil); dperr.KindOf(err) != dperr.Unsupported || !strings.Contains(err.Error(), "run it again") {
		t.Errorf("converted back: %v, want the statement parsed against latin1 refused to be run again", err)
	}
	if err := c.check(ctx, "ana", table, nil); err != nil {
		t.Errorf("converted back, the next statement: %v", err)
	}
}

// TestTableTypesWithinUserShare: on MariaDB, with SetLimits(2, 1), the
// check of alice's statement waits for her turn while her other
// statement's snapshot holds her one connection, and fails as a Timeout
// when her statement's time runs out, nothing read; bob's check reads at
// once. Before, the check read the schema on a connection outside her
// share, so the statements of one analyst on many tables took
// connections beyond backend.max_user_connections, up to every one of
// max_open_connections.
func TestTableTypesWithinUserShare(t *testing.T) {
	db := testdb.MySQL(t)
	for _, s := range []string{"CREATE TABLE ua (x DOUBLE)", "CREATE TABLE ub (x DOUBLE)"} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	be := backend.New(db, sqlrewrite.MySQL, nil)
	be.SetLimits(2, 1)
	c := newTableTypes(be, false, slog.New(slog.DiscardHandler), nil)
	table := func(source string) *catalog.Table {
		return &catalog.Table{Name: source, Source: source, Columns: []catalog.Column{{Name: "x", Source: "x", Type: catalog.Real}}}
	}
	ctx := context.Background()
	snap, err := be.Snapshot(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := c.check(short, "alice", table("ua"), nil); dperr.KindOf(err) != dperr.Timeout {
		t.Errorf("alice's check with her one connection taken: %v, want a Timeout waiting for her turn", err)
	}
	if err := c.check(ctx, "bob", table("ua"), nil); err != nil {
		t.Errorf("bob's check: %v", err)
	}
	snap.Close()
	if err := c.check(ctx, "alice", table("ub"), nil); err != nil {
		t.Errorf("alice's check once her snapshot closed: %v", err)
	}
}
