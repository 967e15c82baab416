package main

import (
	"database/sql"
	"fmt"
	"testing"
)

// TestCollationsAsMariaDB runs comparisons, ordering, de-duplication and
// the predicates BETWEEN, IN, IS TRUE/FALSE and LIKE of released values,
// released text keys and literals through the proxy and on MariaDB itself,
// over the same rows, and compares the answers as
// TestPostProcessingAsMariaDB does (values, NULLs, warnings' levels and
// codes, error codes): under the proxy's default collation_connection,
// utf8mb4_0900_bin (MariaDB's utf8mb4_nopad_bin: byte order, trailing
// spaces count), and under utf8mb4_general_ci and utf8mb4_bin on both. A
// released text key compares in its column's collation,
// utf8mb4_general_ci (dpproxy declares text columns so on a MySQL/MariaDB
// backend; MariaDB's column is), whatever the connection's; literals' text in the
// connection's. Each released value appears where its noise cannot
// matter (COUNT(*) * 0), so the answers are exact. Statements without
// FROM, which the catalog engine answers, are compared too, but for what
// the catalog engine (go-mysql-server) answers otherwise: it compares
// trailing spaces as NO PAD under every collation, GREATEST and LEAST of
// texts byte by byte, and reads '3000abc' as 0, not 3000.
func TestCollationsAsMariaDB(t *testing.T) {
	conn, refConn, _ := besideMariaDBText(t)
	queries := []string{
		// A released text key compares in its column's collation.
		"SELECT k2, COUNT(*) * 0 FROM tt GROUP BY k2 HAVING k2 = 'A'",
		"SELECT k2, COUNT(*) * 0 FROM tt GROUP BY k2 HAVING k2 < 'B'",
		"SELECT k2, COUNT(*) * 0 FROM tt GROUP BY k2 HAVING k2 = 'E' OR k2 = 'a  '",
		"SELECT k2, COUNT(*) * 0 FROM tt GROUP BY k2 HAVING k2 <=> 'B' ORDER BY k2 DESC",
		"SELECT k2, NULLIF(k2, 'A'), GREATEST(k2, 'B'), LEAST(k2, 'B'), k2 LIKE 'A%', k2 LIKE 'e', k2 IN ('A', 'x'), k2 BETWEEN 'A' AND 'B', COUNT(*) * 0 FROM tt GROUP BY k2",
		"SELECT k2, CONCAT(k2, 'x') = 'AX', COUNT(*) * 0 FROM tt GROUP BY k2 ORDER BY CONCAT(k2, 'x') DESC",
		// Literals' text compares in the connection's collation.
		"SELECT CASE WHEN i < 2 THEN 'b' WHEN i < 3 THEN 'A' ELSE 'C' END AS g, COUNT(*) * 0 FROM tt GROUP BY g ORDER BY g",
		"SELECT k1, CASE WHEN k1 = 1 THEN 'b' WHEN k1 = 2 THEN 'A' ELSE 'C' END AS g, COUNT(*) * 0 FROM tt GROUP BY k1 ORDER BY g, k1",
		"SELECT CONCAT('A', COUNT(*) * 0) = 'a0', CONCAT('A', COUNT(*) * 0) < 'a1', CONCAT('a', COUNT(*) * 0) = 'a0 ' FROM tt",
		"SELECT GREATEST(CONCAT('a', COUNT(*) * 0), 'B'), LEAST(CONCAT('a', COUNT(*) * 0), 'B'), NULLIF(CONCAT('a', COUNT(*) * 0), 'A0') FROM tt",
		"SELECT CONCAT('é', COUNT(*) * 0) LIKE 'E%', CONCAT('A', COUNT(*) * 0) IN ('a0'), CONCAT('b', COUNT(*) * 0) BETWEEN 'A' AND 'C' FROM tt",
		"SELECT DISTINCT CASE WHEN k1 = 1 THEN 'x' ELSE 'X' END AS g, COUNT(*) * 0 FROM tt GROUP BY k1 ORDER BY g",
		"SELECT COUNT(DISTINCT g), MIN(g), MAX(g) FROM (SELECT k1, CASE WHEN k1 = 1 THEN 'x' WHEN k1 = 2 THEN 'X' ELSE 'Y' END AS g, COUNT(*) AS n FROM tt GROUP BY k1) AS s",
		"SELECT g, SUM(n) FROM (SELECT k1, CASE WHEN k1 = 1 THEN 'x' ELSE 'X' END AS g, COUNT(*) * 0 AS n FROM tt GROUP BY k1) AS s GROUP BY g",
		// Text read as a number: its numeric prefix, with warning 1292.
		"SELECT COUNT(*) * 0 = '0abc', COUNT(*) * 0 + 3000 = '3000abc', COUNT(*) * 0 + ' 1 ', COUNT(*) * 0 = '' FROM tt",
		"SELECT COUNT(*) * 0 + '1e', AVG(y) * 0 + '2x', COUNT(*) * 0 = ' 0 ' FROM tt",
		// BETWEEN, IN, IS TRUE/FALSE and LIKE of released values and keys.
		"SELECT k1, COUNT(*) * 0 + 300 AS c FROM tt GROUP BY k1 HAVING c BETWEEN 100 AND 600",
		"SELECT k1, COUNT(*) * 0 FROM tt GROUP BY k1 HAVING k1 IN (1, 2)",
		"SELECT k1, COUNT(*) * 0 FROM tt GROUP BY k1 HAVING k1 NOT IN (1, 2) OR k1 NOT BETWEEN 2 AND 3",
		"SELECT k1, COUNT(*) * 0 FROM tt GROUP BY k1 HAVING COUNT(*) * 0 + k1 BETWEEN 2 AND 5 AND COUNT(*) * 0 + 1 IS TRUE",
		"SELECT COUNT(*) * 0 IS TRUE, COUNT(*) * 0 IS FALSE, COUNT(*) * 0 IS NOT NULL, COUNT(*) * 0 + 1 IS NOT TRUE, COUNT(*) * 0 IS NOT FALSE FROM tt",
		"SELECT NULLIF(COUNT(*) * 0, 0) IS TRUE, NULLIF(COUNT(*) * 0, 0) IS NOT TRUE, NULLIF(COUNT(*) * 0, 0) IS FALSE, NULLIF(COUNT(*) * 0, 0) IS NOT FALSE FROM tt",
		"SELECT COUNT(*) * 0 + 3000 LIKE '3%', COUNT(*) * 0 + 3000 NOT LIKE '3%', COUNT(*) * 0 + 3000 LIKE '_0_0', AVG(y) * 0 + 2.5 LIKE '2.5' FROM tt",
		"SELECT NULLIF(COUNT(*) * 0, 0) BETWEEN 1 AND 2, 5 BETWEEN NULLIF(COUNT(*) * 0, 0) AND 3, 5 BETWEEN NULLIF(COUNT(*) * 0, 0) AND 10, 5 NOT BETWEEN NULLIF(COUNT(*) * 0, 0) AND 3 FROM tt",
		"SELECT COUNT(*) * 0 IN (1, NULL), COUNT(*) * 0 NOT IN (1, NULL), COUNT(*) * 0 IN (0, NULL), NULLIF(COUNT(*) * 0, 0) IN (1) FROM tt",
		"SELECT NULLIF(COUNT(*) * 0, 0) LIKE 'a', 'a' LIKE NULLIF(COUNT(*) * 0, 0), CONCAT('a%', COUNT(*) * 0) LIKE 'a|%0' ESCAPE '|', CONCAT('abc', COUNT(*) * 0) LIKE 'a|%%' ESCAPE '|' FROM tt",
		"SELECT '10' BETWEEN '9' AND COUNT(*) * 0 + 11, '1.0' IN ('1', COUNT(*) * 0 + 2), 'a' IN (COUNT(*) * 0, 'b') FROM tt",
		"SELECT k1, COUNT(*) * 0 FROM tt GROUP BY k1 HAVING 'x1' LIKE CONCAT('X', k1)",
		// Without FROM: the catalog engine.
		"SELECT 'a' = 'A', 'B' > 'a', 'é' = 'E', 'a' LIKE 'A', 'b' BETWEEN 'A' AND 'C', 'A' IN ('a', 'b'), NULLIF('a', 'A')",
		"SELECT 3000 = '3000', 'x' IS TRUE, 3000 LIKE '3%', 5 BETWEEN NULL AND 3, 1 IN (2, NULL)",
	}
	for _, coll := range []struct{ proxy, maria string }{
		{"utf8mb4_0900_bin", "utf8mb4_nopad_bin"},
		{"utf8mb4_general_ci", "utf8mb4_general_ci"},
		{"utf8mb4_bin", "utf8mb4_bin"},
	} {
		if _, err := conn.ExecContext(t.Context(), "SET collation_connection = '"+coll.proxy+"'"); err != nil {
			t.Fatal(err)
		}
		if _, err := refConn.ExecContext(t.Context(), "SET collation_connection = '"+coll.maria+"'"); err != nil {
			t.Fatal(err)
		}
		for _, q := range queries {
			// MariaDB keeps the last statement's warnings through a
			// statement without tables that raises none.
			if _, err := refConn.ExecContext(t.Context(), "SELECT i FROM tt LIMIT 0"); err != nil {
				t.Fatal(err)
			}
			got, want := runCompared(t.Context(), conn, q), runCompared(t.Context(), refConn, q)
			if got != want {
				t.Errorf("%s (collation_connection %s):\n proxy   %s\n MariaDB %s", q, coll.proxy, got, want)
			}
		}
	}
}

// besideMariaDBText loads the same six rows of tt (i, k1 INTEGER; k2
// VARCHAR in utf8mb4_general_ci with 'a', 'b' and 'é'; y DOUBLE) into
// MariaDB and behind a proxy (k2 a text key with those values), and
// returns a session of the proxy and a connection to MariaDB, both at
// @dp_epsilon = 1, and the proxy session's remaining epsilon.
func besideMariaDBText(t *testing.T) (proxy, reference *sql.Conn, remaining func() float64) {
	t.Helper()
	proxy, reference, remaining = besideMariaDBTable(t, []string{
		"CREATE TABLE tt (i INTEGER, k1 INTEGER, k2 VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci, y DOUBLE)",
		"INSERT INTO tt VALUES (1, 1, 'a', 1), (2, 2, 'b', 2), (3, 3, 'é', 3), (1, 2, 'a', 4), (2, 3, 'b', 5), (3, 1, 'é', 6)",
	}, `
  - name: tt
    columns:
      - {name: i, type: integer, lower: 1, upper: 3}
      - {name: k1, type: integer, lower: 1, upper: 3, values: [1, 2, 3]}
      - {name: k2, type: text, values: [a, b, é]}
      - {name: y, type: real, lower: 0, upper: 10}
`)
	for _, c := range []*sql.Conn{proxy, reference} {
		if _, err := c.ExecContext(t.Context(), "SET @dp_epsilon = 1"); err != nil {
			t.Fatal(err)
		}
	}
	return proxy, reference, remaining
}

// TestUnimplementedCollationRefusedBeforeCharge: under a
// collation_connection post-processing does not compare in
// (utf8mb4_unicode_ci), a statement that would order literals' text is
// refused with 1235 before anything is charged; one that compares a
// released text key, in its column's collation, is answered as MariaDB
// answers it.
func TestUnimplementedCollationRefusedBeforeCharge(t *testing.T) {
	conn, refConn, remaining := besideMariaDBText(t)
	for _, c := range []*sql.Conn{conn, refConn} {
		if _, err := c.ExecContext(t.Context(), "SET collation_connection = 'utf8mb4_unicode_ci'"); err != nil {
			t.Fatal(err)
		}
	}
	before := remaining()
	q := "SELECT CASE WHEN i < 2 THEN 'b' ELSE 'A' END AS g, COUNT(*) FROM tt GROUP BY g ORDER BY g"
	if got := runCompared(t.Context(), conn, q); got != "error 1235" {
		t.Errorf("%s under utf8mb4_unicode_ci: %s, want error 1235", q, got)
	}
	if after := remaining(); after != before {
		t.Errorf("the refused statement charged %g", before-after)
	}
	q = "SELECT k2, COUNT(*) * 0 FROM tt GROUP BY k2 HAVING k2 = 'A' OR k2 LIKE 'E'"
	if got, want := runCompared(t.Context(), conn, q), runCompared(t.Context(), refConn, q); got != want {
		t.Errorf("%s under utf8mb4_unicode_ci:\n proxy   %s\n MariaDB %s", q, got, want)
	}
}

// TestSetNamesCollate: SET NAMES cs COLLATE c sets collation_connection
// to c, as in MySQL, which go-sql-driver sends for a DSN with charset and
// collation; literals' text then compares in c. The catalog engine's
// parser dropped the COLLATE: the session kept utf8mb4's default and
// 'a' = 'A' was 1 under utf8mb4_bin.
func TestSetNamesCollate(t *testing.T) {
	p := startProxy(t, "", nil)
	for _, tc := range []struct {
		collation string
		equal     string // 'a' = 'A', 'a ' = 'a'
	}{
		{"utf8mb4_bin", "0 1"},
		{"utf8mb4_general_ci", "1 1"},
	} {
		db, err := sql.Open("mysql", fmt.Sprintf("demo:demo@tcp(%s)/dpproxy?timeout=10s&charset=utf8mb4&collation=%s", p.addr, tc.collation))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		conn, err := db.Conn(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		var got string
		if err := conn.QueryRowContext(t.Context(), "SELECT @@collation_connection").Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != tc.collation {
			t.Errorf("DSN collation %s: @@collation_connection is %s", tc.collation, got)
		}
		var caseEqual, padEqual int
		if err := conn.QueryRowContext(t.Context(), "SELECT COUNT(*) * 0 + ('a' = 'A'), COUNT(*) * 0 + ('a ' = 'a') FROM pums").Scan(&caseEqual, &padEqual); err != nil {
			t.Fatal(err)
		}
		if g := fmt.Sprintf("%d %d", caseEqual, padEqual); g != tc.equal {
			t.Errorf("under %s: 'a' = 'A', 'a ' = 'a' gave %s, want %s (MySQL's)", tc.collation, g, tc.equal)
		}
	}
}
