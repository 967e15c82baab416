package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestMissingColumnOnDatabases: on SQLite, PostgreSQL and MariaDB, a
// configured table whose backend table lost a column (y, renamed in the
// backend) refuses every statement that reads it — aggregated, in the
// WHERE (with OR too), a GROUP BY key, inside a row expression or an
// aggregate's own condition — with 1054 before any reservation:
// dp_remaining_epsilon() is unchanged. Their fetches failed after the
// reservation, charged, with 1105. The statements on the table that do
// not read y answer, charged, an all-NULL column's too (the check reads
// the schema, not the rows). A table whose privacy unit column was
// dropped refuses every statement, COUNT(*) included.
func TestMissingColumnOnDatabases(t *testing.T) {
	for _, b := range visitsBackends {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			db := testdb.Open(t, b.driver, dsn)
			for _, s := range []string{
				"CREATE TABLE shop (x DOUBLE PRECISION, y_src DOUBLE PRECISION, k VARCHAR(10), nulls DOUBLE PRECISION)",
				"INSERT INTO shop (x, y_src, k) VALUES (1, 2, 'a'), (3, 4, 'b'), (5, 6, 'a'), (7, 8, 'b')",
				"ALTER TABLE shop RENAME COLUMN y_src TO y_renamed",
				"CREATE TABLE shop_people (x DOUBLE PRECISION, pid VARCHAR(10))",
				"INSERT INTO shop_people VALUES (1, 'p'), (2, 'q')",
				"ALTER TABLE shop_people DROP COLUMN pid",
			} {
				if _, err := db.Exec(s); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
			}
			p, conn := startCarolProxy(t, b.driver, dsn, "{default_epsilon: 1, max_epsilon: 10}", "epsilon: 100, delta: 1.0e-5", `
  - name: shop
    columns:
      - {name: x, type: real, lower: 0, upper: 10}
      - {name: y, source: y_src, type: real, lower: 0, upper: 10}
      - {name: k, type: text, values: [a, b]}
      - {name: nulls, type: real, lower: 0, upper: 10}
  - name: people
    source: shop_people
    privacy_unit: pid
    max_rows_per_unit: 2
    columns:
      - {name: x, type: real, lower: 0, upper: 10}
`)
			remaining := func() float64 {
				_, eps := queryRow(t, conn, "SELECT dp_remaining_epsilon()")
				return eps[0]
			}
			refused := func(q, column string) {
				t.Helper()
				eps := remaining()
				r, err := conn.Query(q)
				if err == nil {
					r.Close()
				}
				if mysqlCode(err) != 1054 || !strings.Contains(err.Error(), "Unknown column '"+column+"' in 'field list'") || !strings.Contains(err.Error(), "no budget was spent") {
					t.Errorf("%s: %v, want 1054 naming %s", q, err, column)
				}
				if e := remaining(); e != eps {
					t.Errorf("%s charged ε %v", q, eps-e)
				}
			}
			for _, q := range []string{
				"SELECT SUM(x + y) FROM shop", // first: its plan's table adds a derived column
				"SELECT AVG(y) FROM shop",
				"SELECT MEDIAN(y) FROM shop",
				"SELECT COUNT(*) FROM shop WHERE y > 5",
				"SELECT COUNT(*) FROM shop WHERE x > 5 OR y > 5",
				"SELECT COUNT(*) FROM shop WHERE y IS NULL",
				"SELECT k, SUM(y) FROM shop GROUP BY k",
				"SELECT FLOOR(y / 5) * 5 AS b, COUNT(*) FROM shop GROUP BY b",
				"SELECT k, SUM(CASE WHEN y > 5 THEN 1 ELSE 0 END) FROM shop GROUP BY k",
			} {
				refused(q, "y")
			}
			for _, q := range []string{"SELECT COUNT(*) FROM people", "SELECT AVG(x) FROM people"} {
				refused(q, "pid")
			}
			// The log names the configured columns lost, never a derived one.
			if logs := p.Logs(); !strings.Contains(logs, "table=shop source=shop columns=y_src") || !strings.Contains(logs, "columns=pid") || strings.Contains(logs, "dpproxy_e") {
				t.Errorf("the log does not name y_src and pid alone as lost:\n%s", logs)
			}
			for _, q := range []string{
				"SELECT COUNT(*) FROM shop",
				"SELECT AVG(x) FROM shop WHERE k = 'a'",
				"SELECT k, COUNT(*) FROM shop GROUP BY k",
				"SELECT MEDIAN(x) FROM shop",
				"SELECT AVG(nulls) FROM shop",
				"SELECT COUNT(*) FROM shop WHERE nulls > 1",
			} {
				eps := remaining()
				r, err := conn.Query(q)
				if err != nil {
					t.Errorf("%s: %v", q, err)
					continue
				}
				r.Close()
				if e := remaining(); e >= eps {
					t.Errorf("%s charged nothing (%v then %v)", q, eps, e)
				}
			}
		})
	}
}

// TestMissingColumnRefusesExactlyItsReaders: on SQLite, PostgreSQL and
// MariaDB, for each configured column in turn, a configured table over a
// backend table that lacks that column: every statement of a corpus
// (aggregates, WHERE with OR, GROUP BY keys, buckets and date keys, a key
// chosen by partition selection, synopsis histograms and range counts,
// row expressions, aggregates with their own conditions) that names the
// column is refused with 1054, uncharged, and every one that does not
// answers: the columns the proxy checks (planner.Plan.Reads) are those
// its fetches read. The one statement naming the column that answers is
// one whose WHERE no row can satisfy, which reads no row.
func TestMissingColumnRefusesExactlyItsReaders(t *testing.T) {
	columns := []struct{ name, sql, yaml string }{
		{"x", "x DOUBLE PRECISION", "{name: x, type: real, lower: 0, upper: 10}"},
		{"y", "y DOUBLE PRECISION", "{name: y, type: real, lower: 0, upper: 10}"},
		{"k", "k VARCHAR(10)", "{name: k, type: text, values: [a, b]}"},
		{"d", "d DATE", "{name: d, type: date, lower: '2020-01-01', upper: '2020-12-31'}"},
		{"city", "city VARCHAR(10)", "{name: city, type: text, partition_selection: true}"},
		{"h", "h INTEGER", "{name: h, type: integer, lower: 0, upper: 100, histogram: {epsilon: 1}}"},
	}
	statements := []string{
		"SELECT COUNT(*) FROM %s",
		"SELECT AVG(x) FROM %s",
		"SELECT MEDIAN(y) FROM %s WHERE k = 'a'",
		"SELECT COUNT(*) FROM %s WHERE x > 5 OR k = 'b'",
		"SELECT k, SUM(x) FROM %s GROUP BY k",
		"SELECT FLOOR(x / 5) * 5 AS b, AVG(y) FROM %s GROUP BY b",
		"SELECT YEAR(d) AS yr, COUNT(*) FROM %s GROUP BY yr",
		"SELECT city, COUNT(*) FROM %s GROUP BY city",
		"SELECT FLOOR(h / 10) * 10 AS b, COUNT(*) FROM %s GROUP BY b",
		"SELECT COUNT(*) FROM %s WHERE h BETWEEN 10 AND 20",
		"SELECT SUM(x + y) FROM %s",
		"SELECT AVG(DATEDIFF(d, '2020-01-01')) FROM %s",
		"SELECT k, AVG(CASE WHEN y > 5 THEN x END) FROM %s GROUP BY k",
		"SELECT COUNT(*) FROM %s WHERE d >= '2020-06-01'",
		"SELECT VARIANCE(x), COUNT(*) FROM %s WHERE city = 'z'",
		"SELECT k, COUNT(*) FROM %s WHERE x > 1 GROUP BY k HAVING COUNT(*) > 0",
	}
	noRow := "SELECT COUNT(*) FROM %s WHERE x = 1 AND x = 2"
	for _, b := range visitsBackends {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			db := testdb.Open(t, b.driver, dsn)
			var tables strings.Builder
			for _, lost := range append([]string{"none"}, "x", "y", "k", "d", "city", "h") {
				var defs, names, yaml []string
				for _, c := range columns {
					if c.name != lost {
						defs, names = append(defs, c.sql), append(names, c.name)
					}
					yaml = append(yaml, "      - "+c.yaml)
				}
				values := map[string]string{"x": "3", "y": "7", "k": "'a'", "d": "'2020-03-01'", "city": "'z'", "h": "15"}
				var row []string
				for _, n := range names {
					row = append(row, values[n])
				}
				for _, s := range []string{
					fmt.Sprintf("CREATE TABLE m_%s (%s)", lost, strings.Join(defs, ", ")),
					fmt.Sprintf("INSERT INTO m_%s (%s) VALUES (%s), (%s)", lost, strings.Join(names, ", "), strings.Join(row, ", "), strings.Join(row, ", ")),
				} {
					if _, err := db.Exec(s); err != nil {
						t.Fatalf("%s: %v", s, err)
					}
				}
				fmt.Fprintf(&tables, "  - name: m_%s\n    epsilon: 10000\n    delta: 0.5\n    columns:\n%s\n", lost, strings.Join(yaml, "\n"))
			}
			_, conn := startCarolProxy(t, b.driver, dsn, "{default_epsilon: 1, max_epsilon: 10}", "epsilon: 10000, delta: 0.5", tables.String())
			if _, err := conn.Exec("SET @dp_delta = 1e-6"); err != nil {
				t.Fatal(err)
			}
			remaining := func() float64 {
				_, eps := queryRow(t, conn, "SELECT dp_remaining_epsilon()")
				return eps[0]
			}
			for _, lost := range []string{"none", "x", "y", "k", "d", "city", "h"} {
				names := regexp.MustCompile(`\b` + lost + `\b`)
				for _, s := range append(statements, noRow) {
					q := fmt.Sprintf(s, "m_"+lost)
					eps := remaining()
					r, err := conn.Query(q)
					if err == nil {
						r.Close()
					}
					charged := remaining() != eps
					switch {
					case names.MatchString(s) && s != noRow:
						if mysqlCode(err) != 1054 || !strings.Contains(err.Error(), "Unknown column '"+lost+"'") || charged {
							t.Errorf("%s: %v (charged %v), want 1054 naming %s, uncharged", q, err, charged, lost)
						}
					case err != nil:
						t.Errorf("%s: %v, want an answer", q, err)
					}
				}
			}
		})
	}
}
