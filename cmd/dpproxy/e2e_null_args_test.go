package main

import (
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestNullArguments binds NULL to parameters as clients do (Connector/J's
// setNull, mysql2's and PyMySQL's null, go-sql-driver's nil), through
// go-sql-driver's server-side prepared statements and its
// interpolateParams=true text, on SQLite, PostgreSQL and MariaDB. A
// comparison with NULL is UNKNOWN for every row, so it keeps none, nor
// does its NOT: such a WHERE is a zero-row probe, answered exactly and
// free (it was charged, with noise). The optional filter (? IS NULL OR
// col = ?) keeps every row with NULL bound and the rows of the value
// otherwise. Each other count is at ε = 40, charged as usual (discrete
// Laplace noise with P[|Z| ≥ 1] < 2e-17: a rounded count is exact). On
// the old code every statement with a NULL argument was refused with 1235.
func TestNullArguments(t *testing.T) {
	for _, b := range visitsBackends {
		t.Run(b.name, func(t *testing.T) {
			for name, conn := range startItemsProxy(t, b) {
				for _, c := range []struct {
					q    string
					args []any
					want int
					free bool
				}{
					{"SELECT COUNT(*) FROM items WHERE category = ?", []any{nil}, 0, true},
					{"SELECT COUNT(*) FROM items WHERE qty = ?", []any{nil}, 0, true},
					{"SELECT COUNT(*) FROM items WHERE created_at >= ?", []any{nil}, 0, true},
					{"SELECT COUNT(*) FROM items WHERE NOT (category = ?)", []any{nil}, 0, true},
					{"SELECT COUNT(*) FROM items WHERE category <> ?", []any{nil}, 0, true},
					{"SELECT COUNT(*) FROM items WHERE (? IS NULL OR category = ?)", []any{nil, nil}, 6, false},
					{"SELECT COUNT(*) FROM items WHERE (? IS NULL OR category = ?)", []any{"x", "x"}, 3, false},
					{"SELECT COUNT(*) FROM items WHERE (? IS NULL OR qty >= ?) AND (? IS NULL OR category = ?)", []any{nil, nil, "y", "y"}, 2, false},
					{"SELECT COUNT(*) FROM items WHERE category IN (?, ?)", []any{"y", nil}, 2, false},
					{"SELECT COUNT(*) FROM items WHERE category NOT IN (?, ?)", []any{"y", nil}, 0, true},
					{"SELECT COUNT(*) FROM items WHERE qty NOT BETWEEN ? AND ?", []any{nil, 3}, 2, false},
					{"SELECT SUM(CASE WHEN category = ? THEN 1 ELSE 0 END) FROM items", []any{nil}, 0, false},
				} {
					before := remainingEpsilon(t, conn)
					var n float64
					if err := conn.QueryRow(c.q, c.args...).Scan(&n); err != nil {
						t.Errorf("%s: %s %v: %v", name, c.q, c.args, err)
						continue
					}
					want, got := float64(c.want), n
					if !c.free {
						got = math.Round(n)
					}
					if got != want {
						t.Errorf("%s: %s %v: %g rows, want %d", name, c.q, c.args, n, c.want)
					}
					cost := 40.0
					if c.free {
						cost = 0
					}
					if spent := before - remainingEpsilon(t, conn); math.Abs(spent-cost) > 1e-9 {
						t.Errorf("%s: %s %v spent ε = %g, want %g", name, c.q, c.args, spent, cost)
					}
				}
			}
		})
	}
}

// startItemsProxy loads the table items (category text, qty 0..10,
// created_at; five rows and one of NULLs) into the backend and starts a
// proxy on it with carol's budget of ε = 1000, returning carol's
// sessions, each with @dp_epsilon = 40, by name: "prepared" through
// go-sql-driver's server-side prepared statements (and its text protocol
// for statements without arguments), "interpolated" through its
// interpolateParams=true text.
func startItemsProxy(t *testing.T, b visitsBackend) map[string]*sql.DB {
	t.Helper()
	dsn := b.dsn(t)
	db := testdb.Open(t, b.driver, dsn)
	typ := map[string]string{"sqlite": "TEXT", "postgres": "TIMESTAMP", "mysql": "DATETIME"}[b.driver]
	for _, q := range []string{
		fmt.Sprintf("CREATE TABLE items (category VARCHAR(10), qty INTEGER, created_at %s)", typ),
		`INSERT INTO items (category, qty, created_at) VALUES ('x', 1, '2024-01-01 10:00:00'), ('x', 2, '2024-01-02 10:00:00'),
			('x', 3, '2024-01-03 10:00:00'), ('y', 4, '2024-01-04 10:00:00'), ('y', 5, '2024-01-05 10:00:00'), (NULL, NULL, NULL)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	p, prepared := startCarolProxy(t, b.driver, dsn, "{default_epsilon: 1, max_epsilon: 50}", "epsilon: 1000, delta: 1.0e-5", `
  - name: items
    columns:
      - {name: category, type: text}
      - {name: qty, type: integer, lower: 0, upper: 10}
      - {name: created_at, type: timestamp, lower: "2023-01-01 00:00:00", upper: "2025-01-01 00:00:00"}
`)
	interpolated, err := sql.Open("mysql", fmt.Sprintf("carol:carol-pw@tcp(%s)/dpproxy?timeout=10s&interpolateParams=true", p.addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { interpolated.Close() })
	interpolated.SetMaxOpenConns(1)
	conns := map[string]*sql.DB{"prepared": prepared, "interpolated": interpolated}
	for _, conn := range conns {
		if _, err := conn.Exec("SET @dp_epsilon = 40"); err != nil {
			t.Fatal(err)
		}
	}
	return conns
}

// remainingEpsilon reads the session's remaining ε (with its own LIMIT
// 1, so that sql_select_limit = 0 cannot cut it).
func remainingEpsilon(t *testing.T, conn *sql.DB) float64 {
	t.Helper()
	var r float64
	if err := conn.QueryRow("SELECT dp_remaining_epsilon() LIMIT 1").Scan(&r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestNullComparisonsAreConstant: a statement whose answer a comparison
// with NULL makes the same for every table is answered as MySQL answers
// it, exactly and free, on SQLite, PostgreSQL and MariaDB, whether NULL is
// written in the text or bound to a parameter (server-side prepared, and
// interpolated text): a WHERE UNKNOWN or FALSE for every row (col = NULL,
// col <> NULL, col > NULL, col IN (NULL), col BETWEEN NULL AND 5, NOT (col
// = NULL), col NOT IN (1, NULL)) keeps no row, so COUNT is 0, SUM NULL and
// GROUP BY gives no group; aggregates only of values NULL on every row
// (SUM(col = NULL), COUNT(CASE WHEN col = NULL THEN 1 END)) are NULL, or 0
// for COUNT, whatever the rows. On the old code each was charged and
// answered with noise (SUM(qty = NULL) a noisy count; COUNT(qty = NULL),
// AVG(qty = NULL) refused). Conditions that are not constant stay private
// and charged: col IS NULL, COALESCE(col, 0) = 0, col = NULL OR col > 3,
// and SUM(CASE ... ELSE 0 END), whose value depends on whether a row
// exists. EXPLAIN says that the catalog engine answers, at no cost.
// MEDIAN, PERCENTILE_CONT, APPROX_PERCENTILE, IQR and REGR_*, which the
// catalog engine does not know, are answered over no row by the planner
// (they were refused with 1235), with a note and EXPLAIN saying so; an
// aggregate only of NULLs beside a private one is NULL (0 for COUNT)
// exactly, with a note, and only the other is charged (it was a noisy
// count, or refused).
func TestNullComparisonsAreConstant(t *testing.T) {
	const null = "NULL"
	for _, b := range visitsBackends {
		t.Run(b.name, func(t *testing.T) {
			for name, conn := range startItemsProxy(t, b) {
				for _, c := range []struct {
					q    string
					args []any
					want []string // the rows' cells, in order; a charged count is rounded
					free bool
				}{
					{"SELECT COUNT(*) FROM items WHERE category = NULL", nil, []string{"0"}, true},
					{"SELECT COUNT(*) FROM items WHERE qty <> NULL", nil, []string{"0"}, true},
					{"SELECT COUNT(*) FROM items WHERE qty > NULL", nil, []string{"0"}, true},
					{"SELECT COUNT(*) FROM items WHERE qty IN (NULL)", nil, []string{"0"}, true},
					{"SELECT COUNT(*) FROM items WHERE qty BETWEEN NULL AND 5", nil, []string{"0"}, true},
					{"SELECT COUNT(*) FROM items WHERE NOT (qty = NULL)", nil, []string{"0"}, true},
					{"SELECT COUNT(*) FROM items WHERE qty NOT IN (1, NULL)", nil, []string{"0"}, true},
					{"SELECT COUNT(*), SUM(qty) FROM items WHERE qty BETWEEN ? AND 5", []any{nil}, []string{"0", null}, true},
					{"SELECT COUNT(*) FROM items WHERE qty > ?", []any{nil}, []string{"0"}, true},
					{"SELECT COUNT(*) FROM items WHERE category IN (?)", []any{nil}, []string{"0"}, true},
					{"SELECT category, COUNT(*) FROM items WHERE qty = ? GROUP BY category", []any{nil}, nil, true},
					{"SELECT SUM(qty = NULL) FROM items", nil, []string{null}, true},
					{"SELECT SUM(qty = ?), AVG(category <> ?), COUNT(qty > ?) FROM items", []any{nil, nil, nil}, []string{null, null, "0"}, true},
					{"SELECT MAX(qty = NULL), STDDEV(qty = NULL), VARIANCE(qty IN (NULL)) FROM items", nil, []string{null, null, null}, true},
					{"SELECT SUM(CASE WHEN category = ? THEN 1 END), COUNT(CASE WHEN category = ? THEN 1 END) FROM items", []any{nil, nil}, []string{null, "0"}, true},
					// dpproxy's own aggregates, which the catalog engine
					// does not know: the planner answers them over no row.
					{"SELECT MEDIAN(qty), COUNT(*) FROM items WHERE 1 = 0", nil, []string{null, "0"}, true},
					{"SELECT MEDIAN(qty), PERCENTILE_CONT(qty, 0.3), APPROX_PERCENTILE(qty, 50), IQR(qty), REGR_SLOPE(qty, qty), REGR_INTERCEPT(qty, qty) FROM items WHERE qty = NULL",
						nil, []string{null, null, null, null, null, null}, true},
					{"SELECT MEDIAN(qty) FROM items WHERE category IN (?)", []any{nil}, []string{null}, true},
					{"SELECT FLOOR(qty / 5) * 5 AS b, MEDIAN(qty) FROM items WHERE qty = ? GROUP BY b", []any{nil}, nil, true},
					{"SELECT MEDIAN(qty) FROM items LIMIT 0", nil, nil, true},
					// Beside private aggregates, an aggregate only of NULLs
					// is NULL (0 for COUNT) exactly; the others are charged.
					{"SELECT SUM(qty = NULL), COUNT(*) FROM items", nil, []string{null, "6"}, false},
					{"SELECT COUNT(qty = ?), AVG(CASE WHEN category = ? THEN qty END), COUNT(*) FROM items", []any{nil, nil}, []string{"0", null, "6"}, false},
					{"SELECT COUNT(*) FROM items WHERE qty IS NULL", nil, []string{"1"}, false},
					{"SELECT COUNT(*) FROM items WHERE COALESCE(qty, 0) = 0", nil, []string{"1"}, false},
					{"SELECT COUNT(*) FROM items WHERE qty = NULL OR qty > 3", nil, []string{"2"}, false},
					{"SELECT COUNT(*) FROM items WHERE qty = ? OR qty > 3", []any{nil}, []string{"2"}, false},
					{"SELECT SUM(CASE WHEN category = NULL THEN 1 ELSE 0 END) FROM items", nil, []string{"0"}, false},
				} {
					before := remainingEpsilon(t, conn)
					got, err := cells(conn, c.q, c.args...)
					if err != nil {
						t.Errorf("%s: %s %v: %v", name, c.q, c.args, err)
						continue
					}
					if !c.free {
						for i, v := range got {
							if n, err := strconv.ParseFloat(v, 64); err == nil {
								got[i] = strconv.Itoa(int(math.Round(n)))
							}
						}
					}
					if !slices.Equal(got, c.want) {
						t.Errorf("%s: %s %v: %q, want %q", name, c.q, c.args, got, c.want)
					}
					cost := 40.0
					if c.free {
						cost = 0
					}
					if spent := before - remainingEpsilon(t, conn); math.Abs(spent-cost) > 1e-9 {
						t.Errorf("%s: %s %v spent ε = %g, want %g", name, c.q, c.args, spent, cost)
					}
				}
				explained, err := cells(conn, "EXPLAIN SELECT COUNT(*) FROM items WHERE category = NULL")
				if err != nil || len(explained) != 7 || explained[3] != "catalog engine" || explained[4] != "0" {
					t.Errorf("%s: EXPLAIN of a zero-row probe: %q, %v", name, explained, err)
				}
				explained, err = cells(conn, "EXPLAIN SELECT MEDIAN(qty) FROM items WHERE qty = NULL")
				if all := strings.Join(explained, " | "); err != nil || !strings.Contains(all, "selects no row whatever the data") || strings.Contains(all, "release") {
					t.Errorf("%s: EXPLAIN of MEDIAN over no row: %q, %v", name, explained, err)
				}
				explained, err = cells(conn, "EXPLAIN SELECT SUM(qty = NULL), COUNT(*) FROM items")
				if all := strings.Join(explained, " | "); err != nil || !strings.Contains(all, "the value over no row of SUM(qty=NULL), whose argument is NULL on every row") {
					t.Errorf("%s: EXPLAIN of an aggregate of NULLs beside a count: %q, %v", name, explained, err)
				}
				if _, err := cells(conn, "SELECT SUM(qty = NULL), COUNT(*) FROM items"); err != nil {
					t.Fatal(err)
				}
				if w := strings.Join(sessionWarnings(t, conn), " | "); !strings.Contains(w, "SUM(qty=NULL): its argument is NULL on every row") {
					t.Errorf("%s: warnings %q, want a note on SUM(qty = NULL)", name, w)
				}
			}
		})
	}
}

// cells runs q and returns the cells of all its rows in order, NULL as
// "NULL".
func cells(db *sql.DB, q string, args ...any) ([]string, error) {
	rows, err := db.Query(q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		for _, v := range vals {
			if !v.Valid {
				v.String = "NULL"
			}
			out = append(out, v.String)
		}
	}
	return out, rows.Err()
}
