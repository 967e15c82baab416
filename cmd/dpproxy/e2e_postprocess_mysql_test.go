package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/dpproxy/dpproxy/internal/exec"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestPostProcessingAsMariaDB runs expressions of released values
// through the proxy and the same statements on MariaDB itself, over the
// same five rows, and compares what each answers: the values (as
// numbers), their NULLs, the set of SHOW WARNINGS' levels and codes
// (the proxy's notes, 1003, left out) and the error code. Each released
// value appears only where its noise cannot matter (COUNT(*) * 0 is 0, a
// BIGINT; AVG(y) * 0 and SUM(y) * 0 are 0, DOUBLEs; a value divided by
// 0), so the proxy's answers are exact. Divisions by 0 (and MariaDB's
// logarithms of numbers out of their domain) are NULL with warning 1365
// where MySQL evaluates them, and not in a branch of IF, COALESCE, AND
// or OR that it skips; a DOUBLE beyond its range is error 1690, as a
// BIGINT is; ROUND takes a DOUBLE's ties to even (a released AVG or SUM,
// a float literal, POWER, SQRT, CAST AS DOUBLE) and an exact value's
// away from zero (COUNT(*), decimal literals, their arithmetic).
func TestPostProcessingAsMariaDB(t *testing.T) {
	conn, refConn := besideMariaDB(t)
	if _, err := conn.ExecContext(t.Context(), "SET @dp_epsilon = 1"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		// Divisions by zero: NULL with warning 1365.
		"SELECT AVG(y) / 0 FROM t",
		"SELECT SUM(y) / 0 FROM t",
		"SELECT COUNT(*) / 0 FROM t",
		"SELECT COUNT(*) / (COUNT(*) * 0) FROM t",
		"SELECT COUNT(*) DIV 0, AVG(y) DIV 0 FROM t",
		"SELECT COUNT(*) % 0, MOD(AVG(y), 0), COUNT(*) % 0.0 FROM t",
		"SELECT i, COUNT(*) / 0 FROM t GROUP BY i",
		"SELECT COUNT(*) * 0 FROM t HAVING COUNT(*) / 0 IS NULL",
		"SELECT 1 / 0, COUNT(*) * 0 FROM t",
		"SELECT LN(COUNT(*) * 0), LOG(AVG(y) * 0 - 1), LOG2(AVG(y) * 0), LOG10(COUNT(*) * 0) FROM t",
		"SELECT LOG(COUNT(*) * 0 + 1, 2), LOG(2, COUNT(*) * 0) FROM t",
		// NULL without a warning.
		"SELECT SQRT(COUNT(*) * 0 - 1), SQRT(AVG(y) * 0 - 1) FROM t",
		// Branches MySQL does not evaluate add no warning.
		"SELECT IF(COUNT(*) * 0 = 0, 1, COUNT(*) / 0) FROM t",
		"SELECT IF(COUNT(*) * 0 = 1, COUNT(*) / 0, 2) FROM t",
		"SELECT COALESCE(COUNT(*) * 0 + 1, COUNT(*) / 0), IFNULL(COUNT(*) * 0, AVG(y) / 0) FROM t",
		"SELECT COUNT(*) * 0 = 1 AND COUNT(*) / 0, COUNT(*) * 0 = 0 OR AVG(y) / 0 FROM t",
		"SELECT COUNT(*) * 0 = 0 AND COUNT(*) / 0 FROM t",
		"SELECT CASE WHEN COUNT(*) * 0 = 0 THEN 3 ELSE COUNT(*) / 0 END FROM t",
		// DOUBLE and BIGINT beyond their ranges: error 1690.
		"SELECT (COUNT(*) * 0 + 1e308) * 10 FROM t",
		"SELECT COUNT(*) * 0 + 1e308 + 1e308 FROM t",
		"SELECT (AVG(y) * 0 + 1e308) / 1e-308 FROM t",
		"SELECT EXP(COUNT(*) * 0 + 1000) FROM t",
		"SELECT POW(COUNT(*) * 0 - 8, 1 / 3) FROM t",
		"SELECT POW(AVG(y) * 0, -1) FROM t",
		"SELECT (COUNT(*) * 0 + 4503599627370496) * 4503599627370496 FROM t",
		"SELECT 1e308 * 10, COUNT(*) * 0 FROM t",
		// Ties: to even for a DOUBLE, away from zero for an exact value.
		"SELECT ROUND(2.5e0), ROUND(-2.5e0), ROUND(3.5e0), ROUND(0.5e0), ROUND(CAST(2.5 AS DOUBLE)), COUNT(*) * 0 FROM t",
		"SELECT ROUND(2.5), ROUND(-2.5), ROUND(5 / 2), ROUND(0.125e0, 2), ROUND(0.375e0, 2), ROUND(25e0, -1), COUNT(*) * 0 FROM t",
		"SELECT ROUND(AVG(y) * 0 + 2.5), ROUND(SUM(y) * 0 + 2.5), ROUND(AVG(y) * 0 - 2.5), ROUND(AVG(y) * 0 + 3.5) FROM t",
		"SELECT ROUND(COUNT(*) * 0 + 2.5), ROUND(COUNT(*) * 0 - 2.5), ROUND(COUNT(*) * 0 + 2.5e0), ROUND((COUNT(*) * 0 + 5) / 2) FROM t",
		"SELECT ROUND((COUNT(*) * 0 + 5) / 2e0), ROUND((COUNT(*) * 0 + 5) * 0.5), ROUND((COUNT(*) * 0 + 5) * 0.5e0) FROM t",
		"SELECT ROUND(COUNT(*) * 0 + 25, -1), ROUND(AVG(y) * 0 + 25, -1), ROUND(AVG(y) * 0 + 0.125, 2), ROUND(COUNT(*) * 0 + 0.125, 2) FROM t",
		"SELECT ROUND(FLOOR(AVG(y) * 0 + 2.5) + 0.5), ROUND(ABS(AVG(y) * 0 - 2.5)), ROUND(CEIL(COUNT(*) * 0 + 1.5) - 0.5) FROM t",
		"SELECT ROUND(SQRT(COUNT(*) * 0 + 6.25)), ROUND(POW(COUNT(*) * 0 + 2.5, 1)), ROUND(CAST(COUNT(*) * 0 + 2.5 AS DOUBLE)) FROM t",
		"SELECT TRUNCATE(AVG(y) * 0 + 2.5, 0), FLOOR(AVG(y) * 0 - 2.5), CEIL(AVG(y) * 0 + 2.5), TRUNCATE(COUNT(*) * 0 - 2.5, 0) FROM t",
		"SELECT ROUND(-(AVG(y) * 0 + 2.5)), ROUND(-(COUNT(*) * 0 + 2.5)), ROUND((AVG(y) * 0 + 7) % 4.5) FROM t",
		// The ties of what post-processing aggregates: WITH ROLLUP's totals,
		// window functions and an outer query over released rows.
		"SELECT i, ROUND(AVG(y) * 0 + 2.5), ROUND(SUM(y) * 0 + 2.5), ROUND(COUNT(*) * 0 + 2.5) FROM t GROUP BY i WITH ROLLUP",
		"SELECT i, ROUND(SUM(AVG(y) * 0 + 0.5) OVER (ORDER BY i)), ROUND(SUM(COUNT(*) * 0 + 0.5) OVER (ORDER BY i)) FROM t GROUP BY i",
		"SELECT ROUND(AVG(a) + 0.5), ROUND(AVG(c) + 0.5), ROUND(SUM(a) + 0.5) FROM (SELECT i, AVG(y) * 0 + 2 AS a, COUNT(*) * 0 + 2 AS c FROM t GROUP BY i) AS s",
	} {
		got, want := runCompared(t.Context(), conn, q), runCompared(t.Context(), refConn, q)
		if got != want {
			t.Errorf("%s:\n proxy   %s\n MariaDB %s", q, got, want)
		}
	}
}

// runCompared runs q on conn and describes what it answered: the error
// code, or the rows (numbers as %g, NULLs) and the distinct levels and
// codes of SHOW WARNINGS other than the proxy's notes (exec.NoteCode).
func runCompared(ctx context.Context, conn *sql.Conn, q string) string {
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return errorText(err)
	}
	var out []string
	cols, _ := rows.Columns()
	for rows.Next() {
		cells, err := scanCells(rows, len(cols))
		if err != nil {
			return "scan: " + err.Error()
		}
		for _, c := range cells {
			if !c.Valid {
				out = append(out, "NULL")
				continue
			}
			x, err := strconv.ParseFloat(c.String, 64)
			if err != nil {
				out = append(out, strconv.Quote(c.String))
				continue
			}
			out = append(out, fmt.Sprintf("%g", x+0)) // -0 as 0
		}
		out = append(out, ";")
	}
	if err := rows.Err(); err != nil { // MariaDB's 1690 comes after the columns
		return errorText(err)
	}
	rows.Close()
	warnings, err := warningKinds(ctx, conn)
	if err != nil {
		return "SHOW WARNINGS: " + err.Error()
	}
	return fmt.Sprintf("%v warnings %v", out, warnings)
}

// errorText is a failed statement's MySQL error code ("error 1690"), or
// its text for an error that is not the server's.
func errorText(err error) string {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return fmt.Sprintf("error %d", me.Number)
	}
	return "error " + err.Error()
}

// scanCells scans the current row of rows, of n columns, as text cells.
func scanCells(rows *sql.Rows, n int) ([]sql.NullString, error) {
	cells := make([]sql.NullString, n)
	ptrs := make([]any, n)
	for i := range cells {
		ptrs[i] = &cells[i]
	}
	return cells, rows.Scan(ptrs...)
}

// warningKinds are the distinct "level code" pairs of conn's SHOW
// WARNINGS in the order listed, the proxy's notes (1003) left out.
func warningKinds(ctx context.Context, conn *sql.Conn) ([]string, error) {
	ws, err := conn.QueryContext(ctx, "SHOW WARNINGS")
	if err != nil {
		return nil, err
	}
	defer ws.Close()
	var warnings []string
	for ws.Next() {
		var level, message string
		var code int
		if err := ws.Scan(&level, &code, &message); err != nil {
			return nil, err
		}
		if w := fmt.Sprintf("%s %d", level, code); code != exec.NoteCode && !slices.Contains(warnings, w) {
			warnings = append(warnings, w)
		}
	}
	return warnings, ws.Err()
}

// TestCatalogEngineAsMariaDB runs statements the catalog engine answers
// (no FROM; zero-row probes, whose answer does not depend on the rows)
// through the proxy and on MariaDB, comparing as
// TestPostProcessingAsMariaDB does: a division by 0 (/, DIV, %, MOD) is
// NULL with warning 1365 in SHOW WARNINGS, as MariaDB gives, where the
// catalog engine's warnings were dropped before.
func TestCatalogEngineAsMariaDB(t *testing.T) {
	conn, refConn := besideMariaDB(t)
	for _, c := range []*sql.Conn{conn, refConn} {
		if _, err := c.ExecContext(t.Context(), "SET @dp_epsilon = 1"); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{
		"SELECT 1 / 0",
		"SELECT 1 DIV 0, 1 DIV 0.0",
		"SELECT 1 % 0, 5.0 % 0, MOD(1, 0), 1 MOD 0",
		"SELECT 1.5 / 0, 0.0 / 0, 1e0 / 0",
		"SELECT 1 / 0, 2 / 0",
		"SELECT 1 / 0 > 0, 1 / 0 IS NULL",
		"SELECT 1 / 2, 7 DIV 2, 7 % 2",
		"SELECT SUM(y = NULL), 1 / 0 FROM t",
		"SELECT COUNT(*), 1 / 0 FROM t WHERE 1 = 0",
		"SELECT SUM(i = NULL), 1 DIV 0, 1 % 0 FROM t",
		"SELECT 1 / 0, @dp_epsilon",
	} {
		// MariaDB keeps the last statement's warnings through a statement
		// without tables that raises none; one with a table clears them.
		if _, err := refConn.ExecContext(t.Context(), "SELECT i FROM t LIMIT 0"); err != nil {
			t.Fatal(err)
		}
		got, want := runCompared(t.Context(), conn, q), runCompared(t.Context(), refConn, q)
		if got != want {
			t.Errorf("%s:\n proxy   %s\n MariaDB %s", q, got, want)
		}
	}
}

// fiveRows creates the table t of besideMariaDB, with its five rows, and
// fiveRowsTables declares it to a proxy.
var fiveRows = []string{
	"CREATE TABLE t (y DOUBLE, i INTEGER)",
	"INSERT INTO t VALUES (1, 1), (2, 2), (3, 3), (4, 4), (5, 5)",
}

const fiveRowsTables = `
  - name: t
    columns:
      - {name: y, type: real, lower: 0, upper: 10}
      - {name: i, type: integer, lower: 1, upper: 5, values: [1, 2, 3, 4, 5]}
`

// besideMariaDB loads the same five rows of t (y DOUBLE, i INTEGER: 1..5)
// into MariaDB and behind a proxy, and returns a session of the proxy and
// a connection to MariaDB itself.
func besideMariaDB(t *testing.T) (proxy, reference *sql.Conn) {
	t.Helper()
	proxy, reference, _ = besideMariaDBTable(t, fiveRows, fiveRowsTables)
	return proxy, reference
}

// besideMariaDBTable runs setup on MariaDB's test database and puts a
// proxy over it with the tables of config (a YAML list), and returns a
// session of the proxy, a connection to MariaDB itself and the proxy
// session's remaining epsilon.
func besideMariaDBTable(t *testing.T, setup []string, config string) (proxy, reference *sql.Conn, remaining func() float64) {
	t.Helper()
	dsn := testdb.MySQLDSN(t)
	ref := testdb.Open(t, "mysql", dsn)
	for _, s := range setup {
		if _, err := ref.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	reference, err := ref.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reference.Close() })
	proxy, remaining = doraSession(t, visitsBackend{"mariadb", "mysql", testdb.MySQLDSN}, dsn, config)
	return proxy, reference, remaining
}
