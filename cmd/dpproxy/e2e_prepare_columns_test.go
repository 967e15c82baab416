package main

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/demo"
	"github.com/dpproxy/dpproxy/internal/testdb"
	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
)

// preparedColumnStatements are prepared statements whose result columns
// COM_STMT_PREPARE announces, with their arguments and the MySQL type
// names of their columns.
var preparedColumnStatements = []struct {
	sql   string
	args  []any
	types string
}{
	{"SELECT COUNT(*) FROM pums", nil, "BIGINT"},
	{"SELECT race, COUNT(*), AVG(income) FROM pums WHERE age > ? GROUP BY race", []any{30}, "BIGINT BIGINT DOUBLE"},
	{"SELECT sex, COUNT(*) AS n FROM pums WHERE age BETWEEN ? AND ? GROUP BY sex ORDER BY n DESC LIMIT ?", []any{20, 60, 5}, "BIGINT BIGINT"},
	{"SELECT FLOOR(age / 2.5) * 2.5 AS b, COUNT(*) FROM pums GROUP BY b", nil, "DECIMAL BIGINT"}, // MariaDB's DECIMAL(23,1) of an integer age
	{"SELECT MEDIAN(income), IF(AVG(income) > ?, 'high', 'low') AS level FROM pums", []any{1000}, ""},
	{"SELECT MEDIAN(income), IF(AVG(income) > 1000, 'high', 'low') AS level FROM pums WHERE ? IS NULL OR sex = ?", []any{nil, nil}, "DOUBLE VARCHAR"},
	{"SELECT COUNT(*), AVG(m) FROM (SELECT race, IQR(income) AS m FROM pums WHERE income < ? GROUP BY race) AS t", []any{100000.5}, "BIGINT DOUBLE"},
	// Zero-row probes and other catalog SELECTs (before, none announced
	// its columns: 0 after prepare, 6 after execute for the first).
	{"SELECT * FROM pums WHERE 1=0", nil, "BIGINT BIGINT BIGINT BIGINT DOUBLE BIGINT"},
	{"SELECT age, income FROM pums LIMIT 0", nil, "BIGINT DOUBLE"},
	{"SELECT race, COUNT(*) FROM pums GROUP BY race LIMIT 0", nil, "BIGINT BIGINT"},
	{"SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?", []any{"dpproxy", "pums"}, "VARCHAR VARCHAR"},
	// Zero-row probes whatever their markers hold (before, none).
	{"SELECT * FROM pums WHERE age > ? LIMIT 0", []any{30}, "BIGINT BIGINT BIGINT BIGINT DOUBLE BIGINT"},
	{"SELECT age, income FROM pums WHERE age = ? AND 1=0", []any{30}, "BIGINT DOUBLE"},
}

// TestPreparedColumnLabels: an executed prepared statement names a
// column whose select-list item holds a marker as the statement writes
// it, as MySQL and MariaDB do: "1 + ?" and "?", where they were "1 + 5"
// and "x".
func TestPreparedColumnLabels(t *testing.T) {
	p := startProxy(t, "", nil)
	conn, err := client.Connect(p.addr, "demo", "demo", "dpproxy")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	st, err := conn.Prepare("SELECT 1 + ?, @@version_comment, ?")
	if err != nil {
		t.Fatal(err)
	}
	r, err := st.Execute(5, "x")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var names []string
	for _, f := range r.Fields {
		names = append(names, string(f.Name))
	}
	if got := strings.Join(names, ", "); got != "1 + ?, @@version_comment, ?" {
		t.Errorf("columns %s, want 1 + ?, @@version_comment, ?", got)
	}
}

// TestPreparedStatementColumns: COM_STMT_PREPARE of a private SELECT
// announces its result columns, each definition (name, type, length,
// flags, collation) byte for byte the one its execution's result set
// sends, so that clients asking a prepared statement for its metadata
// before executing it (Connector/J's getMetaData(), BI tools, IDEs) get
// the answer's, zero-row probes and catalog SELECTs included; a statement
// whose columns depend on an argument announces none, as before. Preparing spends nothing. Through go-mysql's client
// (which exposes the announced definitions) and go-sql-driver.
func TestPreparedStatementColumns(t *testing.T) {
	p := startProxy(t, "", nil)
	conn, err := client.Connect(p.addr, "demo", "demo", "dpproxy")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	remaining := func() string {
		r, err := conn.Execute("SELECT dp_remaining_epsilon()")
		if err != nil {
			t.Fatal(err)
		}
		v, _ := r.GetString(0, 0)
		return v
	}
	before := remaining()
	var stmts []*client.Stmt
	for _, s := range preparedColumnStatements {
		st, err := conn.Prepare(s.sql)
		if err != nil {
			t.Fatalf("%s: %v", s.sql, err)
		}
		stmts = append(stmts, st)
		if want := len(strings.Fields(s.types)); st.ColumnNum() != want {
			t.Errorf("%s: prepare announced %d columns, want %d", s.sql, st.ColumnNum(), want)
		}
	}
	if after := remaining(); after != before {
		t.Fatalf("preparing spent budget: remaining epsilon %s, then %s", before, after)
	}
	for i, s := range preparedColumnStatements {
		st := stmts[i]
		r, err := st.Execute(s.args...)
		if err != nil {
			t.Fatalf("%s: %v", s.sql, err)
		}
		if st.ColumnNum() == 0 {
			r.Close()
			continue
		}
		if len(r.Fields) != st.ColumnNum() {
			t.Errorf("%s: executed %d columns, announced %d", s.sql, len(r.Fields), st.ColumnNum())
		}
		for j := range min(len(r.Fields), st.ColumnNum()) {
			if got, want := st.RawColumnFields[j], r.Fields[j].Dump(); !bytes.Equal(got, want) {
				t.Errorf("%s: column %d announced %q, executed %q", s.sql, j, got, want)
			}
		}
		r.Close()
	}

	// go-sql-driver prepares on the server, and its column types are the
	// announced ones.
	db := p.connect(t, "demo", "demo")
	for _, s := range preparedColumnStatements {
		if s.types == "" {
			continue
		}
		st, err := db.PrepareContext(t.Context(), s.sql)
		if err != nil {
			t.Fatalf("%s: %v", s.sql, err)
		}
		rows, err := st.QueryContext(t.Context(), s.args...)
		if err != nil {
			t.Fatalf("%s: %v", s.sql, err)
		}
		cts, err := rows.ColumnTypes()
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, ct := range cts {
			names = append(names, ct.DatabaseTypeName())
		}
		if got := strings.Join(names, " "); got != s.types {
			t.Errorf("%s: column types %s, want %s", s.sql, got, s.types)
		}
		for rows.Next() {
		}
		if err := rows.Err(); err != nil {
			t.Errorf("%s: %v", s.sql, err)
		}
		rows.Close()
		st.Close()
	}
}

// TestSelectedKeyProbeColumns: over demo.Visits in SQLite, a GROUP BY key
// chosen by partition selection, text (site) or integer (age), on a
// table protecting each person_id or each row, is announced alike by the
// statement's answer, its zero-row probes (WHERE 1=0, col = NULL) and
// COM_STMT_PREPARE of it with a WHERE's marker, which describes it over
// NULL: VARCHAR of 255 characters (length 1020) for a text key, BIGINT
// for an integer one, each definition byte for byte the one the
// execution sends, bound to a value or to NULL. Before, the probes and
// the prepare announced the key as MySQL's type NULL of length 0 (an
// independent review with mariadb --column-type-info). Preparing and the
// probes spend nothing.
func TestSelectedKeyProbeColumns(t *testing.T) {
	dsn := visitsBackends[0].load(t, "visits", demo.Visits(unitsSeed), "visits_rows")
	p, _ := startCarolProxy(t, "sqlite", dsn, "{default_epsilon: 1, max_epsilon: 10, default_delta: 1.0e-6, max_delta: 1.0e-4}", "epsilon: 100, delta: 1.0e-3", fmt.Sprintf(`
  - name: visits
    privacy_unit: person_id
    max_rows_per_unit: 5
    max_groups_per_unit: 2
    columns:
      - {name: spend, type: real, lower: 0, upper: %d}
      - {name: site, type: text, partition_selection: true}
  - name: visits_rows
    columns:
      - {name: age, type: integer, lower: 0, upper: 100, partition_selection: true}
      - {name: spend, type: real, lower: 0, upper: %d}
      - {name: site, type: text, partition_selection: true}
`, demo.VisitsSpendUpper, demo.VisitsSpendUpper))
	conn, err := client.Connect(p.addr, "carol", "carol-pw", "dpproxy")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fields := func(r *mysql.Result) []string {
		var out []string
		for _, f := range r.Fields {
			out = append(out, string(f.Dump()))
		}
		return out
	}
	execute := func(q string) []string {
		t.Helper()
		r, err := conn.Execute(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer r.Close()
		return fields(r)
	}
	remaining := func() string { return fmt.Sprint(execute("SELECT dp_remaining_epsilon(), dp_remaining_delta()")) }
	varchar, bigint := mysql.MYSQL_TYPE_VAR_STRING, mysql.MYSQL_TYPE_LONGLONG
	for _, c := range []struct {
		answered string
		probes   []string
		key      byte
	}{
		{"SELECT site, COUNT(*) FROM visits_rows GROUP BY site",
			[]string{"SELECT site, COUNT(*) FROM visits_rows WHERE 1=0 GROUP BY site", "SELECT site, COUNT(*) FROM visits_rows WHERE spend = NULL GROUP BY site"}, varchar},
		{"SELECT age, COUNT(*), AVG(spend) FROM visits_rows GROUP BY age",
			[]string{"SELECT age, COUNT(*), AVG(spend) FROM visits_rows WHERE 1=0 GROUP BY age", "SELECT age, COUNT(*), AVG(spend) FROM visits_rows WHERE age = NULL GROUP BY age"}, bigint},
		{"SELECT site, COUNT(*), MEDIAN(spend) FROM visits GROUP BY site",
			[]string{"SELECT site, COUNT(*), MEDIAN(spend) FROM visits WHERE 1=0 GROUP BY site", "SELECT site, COUNT(*), MEDIAN(spend) FROM visits WHERE site = NULL GROUP BY site"}, varchar},
	} {
		want := execute(c.answered)
		before := remaining()
		for _, probe := range c.probes {
			if got := execute(probe); !slices.Equal(got, want) {
				t.Errorf("%s: announced %q, answered %q", probe, got, want)
			}
		}
		if after := remaining(); after != before {
			t.Errorf("%s: the probes spent budget: remaining %s, then %s", c.answered, before, after)
		}
		r, err := conn.Execute(c.answered)
		if err != nil {
			t.Fatal(err)
		}
		if key := r.Fields[0]; key.Type != c.key {
			t.Errorf("%s: key of type %d, want %d", c.answered, key.Type, c.key)
		}
		r.Close()
	}
	for _, c := range []struct {
		sql string
		arg any
	}{
		{"SELECT site, COUNT(*) FROM visits_rows WHERE site <> ? GROUP BY site", "Oslo"},
		{"SELECT age, COUNT(*), AVG(spend) FROM visits_rows WHERE age <> ? GROUP BY age", 40},
		{"SELECT site, COUNT(*), MEDIAN(spend) FROM visits WHERE spend > ? GROUP BY site", 10},
	} {
		before := remaining()
		st, err := conn.Prepare(c.sql)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		if after := remaining(); after != before {
			t.Errorf("%s: preparing spent budget: remaining %s, then %s", c.sql, before, after)
		}
		var announced []string
		for _, f := range st.RawColumnFields {
			announced = append(announced, string(f))
		}
		for _, arg := range []any{c.arg, nil} {
			r, err := st.Execute(arg)
			if err != nil {
				t.Fatalf("%s with %v: %v", c.sql, arg, err)
			}
			if got := fields(r); !slices.Equal(announced, got) {
				t.Errorf("%s: announced %q, executed with %v %q", c.sql, announced, arg, got)
			}
			r.Close()
		}
		st.Close()
	}
}

// TestLimitNoRowColumns: over the demo's PUMS in SQLite, a statement
// whose LIMIT, or an outer query's, leaves no row whatever the data
// (LIMIT 0, an OFFSET past the declared groups or past a derived table's
// one row), which the planner answers itself rather than the catalog
// engine as a zero-row probe, announces in its answer and in
// COM_STMT_PREPARE each column definition byte for byte as the statement
// without that LIMIT does: MEDIAN and IQR as DOUBLE, COUNT as BIGINT, an
// outer AVG of counts as DECIMAL. It spends nothing, and settings that
// refuse the statement without LIMIT (a δ beyond the analyst's budget,
// which IQR's mechanism needs; an @dp_mechanism that answers no MEDIAN)
// leave it answered, with the same columns. Before, the aggregates came
// as MySQL's type NULL of length 0 (an independent review with mariadb
// --column-type-info). A zero-row probe that the catalog engine answers
// (SELECT sex, MIN(income) ... LIMIT 0) announces its statement's columns
// under those settings too: before, where they refused the statement
// without LIMIT, it announced the engine's, MIN NOT NULL.
func TestLimitNoRowColumns(t *testing.T) {
	dsn := testdb.SQLiteDSN(t)
	if err := demo.LoadPUMS(t.Context(), testdb.Open(t, "sqlite", dsn), "sqlite", "pums"); err != nil {
		t.Fatal(err)
	}
	p, _ := startCarolProxy(t, "sqlite", dsn, "{default_epsilon: 0.1, max_epsilon: 10, default_delta: 1.0e-7, max_delta: 1.0e-4}", "epsilon: 100, delta: 1.0e-9", `
  - name: pums
    columns:
      - {name: age, type: integer, lower: 0, upper: 100}
      - {name: sex, type: integer, lower: 0, upper: 1, values: [0, 1]}
      - {name: race, type: integer, lower: 1, upper: 6, values: [1, 2, 3, 4, 5, 6]}
      - {name: income, type: real, lower: 0, upper: 500000}
`)
	conn, err := client.Connect(p.addr, "carol", "carol-pw", "dpproxy")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// execute returns the column definitions and types of q's answer,
	// and its rows.
	execute := func(q string) (definitions []string, types []byte, rows [][]mysql.FieldValue) {
		t.Helper()
		r, err := conn.Execute(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer r.Close()
		if r.Resultset == nil {
			return nil, nil, nil
		}
		for _, f := range r.Fields {
			definitions, types = append(definitions, string(f.Dump())), append(types, f.Type)
		}
		return definitions, types, r.Values
	}
	prepared := func(q string) []string {
		t.Helper()
		st, err := conn.Prepare(q)
		if err != nil {
			t.Fatalf("prepare %s: %v", q, err)
		}
		defer st.Close()
		var announced []string
		for _, f := range st.RawColumnFields {
			announced = append(announced, string(f))
		}
		return announced
	}
	remaining := func() string {
		_, _, rows := execute("SELECT dp_remaining_epsilon(), dp_remaining_delta()")
		return fmt.Sprint(rows[0][0].AsFloat64(), rows[0][1].AsFloat64())
	}
	const double, bigint, decimal = mysql.MYSQL_TYPE_DOUBLE, mysql.MYSQL_TYPE_LONGLONG, mysql.MYSQL_TYPE_NEWDECIMAL
	cases := []struct {
		answered string
		limited  []string
		types    []byte
	}{
		{"SELECT sex, MEDIAN(income) FROM pums GROUP BY sex",
			[]string{"SELECT sex, MEDIAN(income) FROM pums GROUP BY sex LIMIT 0", "SELECT sex, MEDIAN(income) FROM pums GROUP BY sex LIMIT 2, 1"}, []byte{bigint, double}},
		{"SELECT race, COUNT(*), IQR(income) FROM pums GROUP BY race",
			[]string{"SELECT race, COUNT(*), IQR(income) FROM pums GROUP BY race LIMIT 0"}, []byte{bigint, bigint, double}},
		{"SELECT * FROM (SELECT sex, COUNT(*) AS c FROM pums GROUP BY sex) x",
			[]string{"SELECT * FROM (SELECT sex, COUNT(*) AS c FROM pums GROUP BY sex) x LIMIT 0"}, []byte{bigint, bigint}},
		{"SELECT * FROM (SELECT COUNT(*) AS c FROM pums) x",
			[]string{"SELECT * FROM (SELECT COUNT(*) AS c FROM pums) x LIMIT 1, 1", "SELECT * FROM (SELECT COUNT(*) AS c FROM pums) x LIMIT 0"}, []byte{bigint}},
		{"SELECT SUM(c), AVG(c), MAX(m) FROM (SELECT race, COUNT(*) AS c, MEDIAN(age) AS m FROM pums GROUP BY race) x",
			[]string{"SELECT SUM(c), AVG(c), MAX(m) FROM (SELECT race, COUNT(*) AS c, MEDIAN(age) AS m FROM pums GROUP BY race) x LIMIT 0"}, []byte{bigint, decimal, double}},
		// A zero-row probe, which the catalog engine answers.
		{"SELECT sex, MIN(income) FROM pums GROUP BY sex",
			[]string{"SELECT sex, MIN(income) FROM pums GROUP BY sex LIMIT 0"}, []byte{bigint, double}},
	}
	// Answered at a δ within the budget of 10⁻⁹ (IQR spends it).
	execute("SET @dp_delta = 1e-10")
	want := map[string][]string{}
	for _, c := range cases {
		answered, types, _ := execute(c.answered)
		if !bytes.Equal(types, c.types) {
			t.Errorf("%s: answered types %v, want %v", c.answered, types, c.types)
		}
		for _, q := range c.limited {
			want[q] = answered
		}
	}
	check := func(settings string) {
		t.Helper()
		before := remaining()
		for _, c := range cases {
			for _, q := range c.limited {
				got, _, rows := execute(q)
				if len(rows) != 0 {
					t.Errorf("%s (%s): %d rows, want none", q, settings, len(rows))
				}
				if !slices.Equal(got, want[q]) {
					t.Errorf("%s (%s): announced %q, answered without the LIMIT %q", q, settings, got, want[q])
				}
				if got := prepared(q); !slices.Equal(got, want[q]) {
					t.Errorf("prepare %s (%s): announced %q, answered without the LIMIT %q", q, settings, got, want[q])
				}
			}
		}
		if after := remaining(); after != before {
			t.Errorf("%s: the statements with LIMIT spent budget: remaining %s, then %s", settings, before, after)
		}
	}
	check("SET @dp_delta = 1e-10")
	for _, c := range []struct{ set, refused string }{
		{"SET @dp_delta = 1e-7", cases[1].answered},
		{"SET @dp_delta = 1e-10, @dp_mechanism = 'laplace'", cases[5].answered},
	} {
		execute(c.set)
		if r, err := conn.Execute(c.refused); err == nil {
			r.Close()
			t.Errorf("%s: %s answered, want it refused", c.set, c.refused)
		}
		check(c.set)
	}
}
