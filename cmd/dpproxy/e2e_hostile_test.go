package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/testdb"
	"github.com/dpproxy/dpproxy/internal/wire"
)

// hostileBackend is a backend and the values its columns can hold that no
// well-behaved table would: each is an SQL literal of the backend's dialect
// for the REAL columns x, y, z and the INTEGER column a.
type hostileBackend struct {
	name, driver string
	dsn          func(testing.TB) string
	// double and integer are the column types; hostile are (class, real
	// literal, integer literal).
	double, integer string
	hostile         [][3]string
}

var hostileBackends = []hostileBackend{
	{"sqlite", "sqlite", func(t testing.TB) string { return filepath.Join(t.TempDir(), "h.db") }, "REAL", "INTEGER", [][3]string{
		{"null", "NULL", "NULL"},
		{"tiny", "1e-200", "1e-200"},
		{"negative-tiny", "-1e-200", "-1e-200"},
		{"subnormal", "5e-324", "5e-324"},
		{"huge", "1e300", "1e300"},
		{"negative-huge", "-1e300", "-1e300"},
		{"max", "1.7976931348623157e308", "9223372036854775807"},
		{"infinity", "9e999", "9e999"},
		{"negative-infinity", "-9e999", "-9e999"},
		{"text", "'abc'", "'abc'"},
		{"numeric-text", "'1e-200'", "'12.5'"},
		{"blob", "x'00ff'", "x'00ff'"},
	}},
	{"postgres", "postgres", testdb.PostgresDSN, "DOUBLE PRECISION", "BIGINT", [][3]string{
		{"null", "NULL", "NULL"},
		{"tiny", "1e-200", "1"},
		{"negative-tiny", "-1e-200", "-1"},
		{"subnormal", "5e-324", "0"},
		{"huge", "1e300", "9223372036854775807"},
		{"negative-huge", "-1e300", "-9223372036854775808"},
		{"max", "1.7976931348623157e308", "9223372036854775807"},
		{"nan", "'NaN'", "0"},
		{"infinity", "'Infinity'", "9223372036854775807"},
		{"negative-infinity", "'-Infinity'", "-9223372036854775808"},
	}},
	{"mariadb", "mysql", testdb.MySQLDSN, "DOUBLE", "BIGINT", [][3]string{
		{"null", "NULL", "NULL"},
		{"tiny", "1e-200", "1"},
		{"negative-tiny", "-1e-200", "-1"},
		{"subnormal", "2.2250738585072014e-308", "0"},
		{"huge", "1e300", "9223372036854775807"},
		{"negative-huge", "-1e300", "-9223372036854775808"},
		{"max", "1.7976931348623157e308", "9223372036854775807"},
	}},
}

// hostileStatements are the statements probed: every aggregate, with every
// mechanism that answers it, and the range counts and histograms of a
// column with a histogram domain. WHERE is appended (the neighbour filter).
var hostileStatements = []struct{ mechanism, sql string }{
	{"auto", "SELECT COUNT(*) FROM h WHERE %s"},
	{"auto", "SELECT COUNT(x) FROM h WHERE %s"},
	{"auto", "SELECT SUM(x) FROM h WHERE %s"},
	{"auto", "SELECT SUM(a) FROM h WHERE %s"},
	{"auto", "SELECT AVG(x) FROM h WHERE %s"},
	{"laplace", "SELECT AVG(x), VARIANCE(x), STDDEV(x), VAR_SAMP(x) FROM h WHERE %s"},
	{"preprocess", "SELECT AVG(x), VARIANCE(x), MEDIAN(x) FROM h WHERE %s"},
	{"trimmed", "SELECT AVG(x) FROM h WHERE %s"},
	{"auto", "SELECT VARIANCE(x), STDDEV(x) FROM h WHERE %s"},
	{"piecewise", "SELECT VARIANCE(x), MEDIAN(x), PERCENTILE_CONT(x, 0.9) FROM h WHERE %s"},
	{"auto", "SELECT MEDIAN(x), PERCENTILE_CONT(x, 0.25), MEDIAN(a) FROM h WHERE %s"},
	{"exponential", "SELECT MEDIAN(x), MEDIAN(a) FROM h WHERE %s"},
	{"permute-flip", "SELECT MEDIAN(x), PERCENTILE_CONT(a, 0.9) FROM h WHERE %s"},
	{"inverse", "SELECT MEDIAN(x), PERCENTILE_CONT(x, 0.9) FROM h WHERE %s"},
	{"smooth", "SELECT MEDIAN(x), MEDIAN(a) FROM h WHERE %s"},
	{"ptr", "SELECT MEDIAN(x) FROM h WHERE %s"},
	{"auto", "SELECT IQR(x) FROM h WHERE %s"},
	{"auto", "SELECT REGR_SLOPE(y, x), REGR_INTERCEPT(y, x) FROM h WHERE %s"},
	{"auto", "SELECT COUNT(*) FROM h WHERE z BETWEEN 10 AND 50 AND %s"},
	{"auto", "SELECT FLOOR(z / 25) * 25 AS bucket, COUNT(*) FROM h WHERE %s GROUP BY bucket"},
}

// mayAnswerNull reports whether a mechanism's answer may be NULL by its
// noise alone (PTR's No Reply), so NULL and a number are one class.
func mayAnswerNull(mechanism, sql string) bool {
	return mechanism == "ptr" || mechanism == "trimmed" ||
		strings.Contains(sql, "IQR") || strings.Contains(sql, "REGR_")
}

// TestHostileValuesOnEveryBackend loads a table with 200 ordinary rows
// (k = 0) and one row per hostile value class (k = 1, 2, …: NULL, tiny,
// subnormal, huge and non-finite numbers, text and blobs where the backend
// can store them) into SQLite, PostgreSQL and MariaDB, and asks every
// statement through the proxy on the ordinary rows alone and on the
// ordinary rows plus one hostile row (neighbours), and on the whole table.
// Every statement must answer on every one of them: an error (or a NULL)
// that appears with one row and not without it tells the analyst what the
// row holds without any noise.
func TestHostileValuesOnEveryBackend(t *testing.T) {
	for _, b := range hostileBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			dsn := b.dsn(t)
			db, err := sql.Open(b.driver, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			loadHostile(t, db, b)
			// The interactive domain answers OR/NOT counts from one instance
			// per table, built over the whole table: each neighbour is a
			// view of its own (v0: the ordinary rows, vall: every row, v1…:
			// the ordinary rows and one hostile row).
			views := []string{"k = 0", "k >= 0"}
			for i := range b.hostile {
				views = append(views, fmt.Sprintf("k IN (0, %d)", i+1))
			}
			var interactive strings.Builder
			for i, where := range views {
				name := fmt.Sprintf("v%d", i)
				if i == 1 {
					name = "vall"
				}
				if _, err := db.Exec("CREATE VIEW " + name + " AS SELECT * FROM h WHERE " + where); err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&interactive, `
  - name: %s
    epsilon: 100
    columns:
      - {name: x, type: real, lower: 0, upper: 100}
      - {name: a, type: integer, lower: 0, upper: 100}
    interactive:
      columns:
        - {name: x, edges: [0, 25, 50, 75, 100]}
        - {name: a, edges: [0, 50, 101]}
      epsilon: 1
      alpha: 0.1
      beta: 1.0e-3
      planned_queries: 100
`, name)
			}
			dir := t.TempDir()
			config := filepath.Join(dir, "dpproxy.yaml")
			yaml := fmt.Sprintf(`
backend: {driver: %s, dsn: %q}
ledger: {driver: sqlite, dsn: %q}
privacy: {default_epsilon: 1, max_epsilon: 10, default_delta: 1.0e-6, max_delta: 1.0e-4}
users:
  - {name: eve, password_hash: %q, epsilon: 100000, delta: 0.5}
tables:
  - name: h
    epsilon: 1000000
    delta: 0.5
    columns:
      - {name: k, type: integer, lower: 0, upper: 100}
      - {name: x, type: real, lower: 0, upper: 100}
      - {name: y, type: real, lower: 0, upper: 100}
      - {name: z, type: real, lower: 0, upper: 100, histogram: {epsilon: 0.5, bins: 64}}
      - {name: a, type: integer, lower: 0, upper: 100}
%s`, b.driver, dsn, filepath.Join(dir, "ledger.db"), wire.FormatNativePasswordHash(wire.NativePasswordHash("pw")), interactive.String())
			if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			p := startProxy(t, dir, nil, "--config", config)
			conn := p.connect(t, "eve", "pw")
			conn.SetMaxOpenConns(1)
			if _, err := conn.Exec("SET @dp_delta = 1e-5"); err != nil {
				t.Fatal(err)
			}
			filters := []struct{ name, where string }{{"ordinary rows", "k = 0"}, {"whole table", "k >= 0"}}
			for i, h := range b.hostile {
				filters = append(filters, struct{ name, where string }{"ordinary rows and " + h[0], fmt.Sprintf("k IN (0, %d)", i+1)})
			}
			for _, s := range hostileStatements {
				if _, err := conn.Exec("SET @dp_mechanism = '" + s.mechanism + "'"); err != nil {
					t.Fatal(err)
				}
				base := ""
				for fi, f := range filters {
					class := outcomeClass(conn, fmt.Sprintf(s.sql, f.where), mayAnswerNull(s.mechanism, s.sql))
					if fi == 0 {
						base = class
						if class != "answer" {
							t.Errorf("@dp_mechanism = %s, %s on the ordinary rows: %s", s.mechanism, s.sql, class)
						}
						continue
					}
					if class != base {
						t.Errorf("@dp_mechanism = %s, %s: %s on the %s, %s on the ordinary rows", s.mechanism, fmt.Sprintf(s.sql, f.where), class, f.name, base)
					}
				}
			}
			if _, err := conn.Exec("SET @dp_mechanism = 'auto'"); err != nil {
				t.Fatal(err)
			}
			for i, class := range interactiveOutcomes(conn, len(views)) {
				if class != "answer" {
					t.Errorf("interactive count on the view %s: %s", views[i], class)
				}
			}
		})
	}
}

// interactiveOutcomes returns the outcome class of an OR count on each
// view's interactive instance, in the order of the views.
func interactiveOutcomes(conn *sql.DB, views int) []string {
	var out []string
	for i := range views {
		name := fmt.Sprintf("v%d", i)
		if i == 1 {
			name = "vall"
		}
		out = append(out, outcomeClass(conn, "SELECT COUNT(*) FROM "+name+" WHERE x < 25 OR NOT (a < 50)", false))
	}
	return out
}

// outcomeClass runs q and returns what an analyst sees of it without the
// numbers: "answer", "null" (some value NULL) or "error N".
func outcomeClass(db *sql.DB, q string, nullIsAnswer bool) string {
	rows, err := db.Query(q)
	if err != nil {
		return fmt.Sprintf("error %d (%v)", mysqlCode(err), err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	class := "answer"
	for rows.Next() {
		raw := make([]sql.NullString, len(cols))
		dest := make([]any, len(cols))
		for i := range raw {
			dest[i] = &raw[i]
		}
		if err := rows.Scan(dest...); err != nil {
			return fmt.Sprintf("error %d (%v)", mysqlCode(err), err)
		}
		for _, r := range raw {
			if !r.Valid && !nullIsAnswer {
				class = "null"
			}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Sprintf("error %d (%v)", mysqlCode(err), err)
	}
	return class
}

// loadHostile creates h(k, x, y, z, a): 200 ordinary rows with k = 0 and
// x, y, z, a spread over [0, 100), then the hostile row i+1 with its value
// in every column.
func loadHostile(t *testing.T, db *sql.DB, b hostileBackend) {
	t.Helper()
	stmts := []string{
		"DROP TABLE IF EXISTS h",
		fmt.Sprintf("CREATE TABLE h (k %[2]s, x %[1]s, y %[1]s, z %[1]s, a %[2]s)", b.double, b.integer),
	}
	var sb strings.Builder
	sb.WriteString("INSERT INTO h (k, x, y, z, a) VALUES ")
	for i := range 200 {
		if i > 0 {
			sb.WriteString(", ")
		}
		v := float64(i*37%200) / 2
		fmt.Fprintf(&sb, "(0, %g, %g, %g, %d)", v, 2*v/3+1, v, i*37%100)
	}
	stmts = append(stmts, sb.String())
	for i, h := range b.hostile {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO h (k, x, y, z, a) VALUES (%d, %s, %s, %s, %s)", i+1, h[1], h[1], h[1], h[2]))
	}
	execAll(t, db, stmts)
}
