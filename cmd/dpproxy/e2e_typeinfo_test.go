package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// odbcTypeInfo is the statement MariaDB Connector/ODBC 3.1 sends for
// SQLGetTypeInfo(SQL_ALL_TYPES), as captured from the wire: 43 SELECTs of
// literals joined by UNION.
func odbcTypeInfo(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "clients", "mariadb_odbc_typeinfo.sql"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestODBCTypeInfoEndToEnd: SQLGetTypeInfo(SQL_ALL_TYPES), which ODBC BI
// tools send on connecting, answers through the real proxy with go-sql-driver
// (text and binary protocol, as pyodbc sends it), in milliseconds, with
// MySQL's column names and types and the rows MariaDB gives for the same
// statement, several at once without holding the catalog engine; it was
// refused with 1235. A UNION of as many SELECTs that reads a table is
// still refused, at once, and so is SQLGetTypeInfo under a collation other
// than the default.
func TestODBCTypeInfoEndToEnd(t *testing.T) {
	typeInfo := odbcTypeInfo(t)
	p := startProxy(t, "", nil)
	db := p.connect(t, "demo", "demo")

	start := time.Now()
	names, types, rows := columnsOf(t, db, typeInfo)
	t.Logf("SQLGetTypeInfo answered in %v", time.Since(start))
	if len(rows) != 43 || len(names) != 19 {
		t.Fatalf("SQLGetTypeInfo: %d rows of %d columns, want 43 of 19", len(rows), len(names))
	}
	if names[0] != "TYPE_NAME" || names[1] != "DATA_TYPE" || names[18] != "INTERVAL_PRECISION" {
		t.Errorf("column names %v", names)
	}
	if types[0] != "VARCHAR" || types[1] != "BIGINT" || types[2] != "BIGINT" || types[5] != "VARCHAR" || types[18] != "BINARY" {
		t.Errorf("column types %v, want VARCHAR, BIGINT, BIGINT, …, VARCHAR, …, BINARY as MySQL types them", types)
	}
	byName := map[string][]string{}
	for _, r := range rows {
		byName[r[0]+"/"+r[1]] = r
	}
	for key, want := range map[string]string{
		"BIT/-7":           "BIT -7 1   NULL 1 1 3 0 0 0 BIT 0 0 0 0 10 NULL",
		"LONGBLOB/-4":      "LONGBLOB -4 2147483647 ' ' NULL 1 1 3 0 0 0 LONGBLOB 0 0 0 0 10 NULL",
		"DECIMAL/3":        "DECIMAL 3 65   precision,scale 1 0 3 0 0 1 DECIMAL -308 308 0 0 10 NULL",
		"LONG VARCHAR/-10": "LONG VARCHAR -10 16777215 ' ' NULL 1 0 3 0 0 0 LONG VARCHAR 0 0 0 0 10 NULL",
	} {
		if got := strings.Join(byName[key], " "); got != want {
			t.Errorf("%s: %q, want %q", key, got, want)
		}
	}

	// Binary protocol: pyodbc prepares the statement.
	stmt, err := db.Prepare(typeInfo)
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	r, err := stmt.Query()
	if err != nil {
		t.Fatalf("prepared SQLGetTypeInfo: %v", err)
	}
	n, sum := 0, int64(0)
	for r.Next() {
		vals := make([]any, 19)
		var dataType int64
		vals[1] = &dataType
		for i := range vals {
			if i != 1 {
				vals[i] = new(any)
			}
		}
		if err := r.Scan(vals...); err != nil {
			t.Fatal(err)
		}
		n, sum = n+1, sum+dataType
	}
	r.Close()
	if n != 43 || sum != 382 {
		t.Errorf("prepared SQLGetTypeInfo: %d rows, DATA_TYPE sum %d; want 43, 382", n, sum)
	}

	// ORDER BY and LIMIT on the result columns.
	if _, _, rows = columnsOf(t, db, typeInfo+" ORDER BY DATA_TYPE, TYPE_NAME DESC LIMIT 2"); len(rows) != 2 || rows[0][0] != "LONG VARCHAR" || rows[1][0] != "VARCHAR" {
		t.Errorf("ORDER BY DATA_TYPE LIMIT 2: %v", rows)
	}

	// Eight at once (four held the catalog engine for good), then the catalog answers.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			r, err := db.QueryContext(ctx, typeInfo)
			if err == nil {
				r.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent SQLGetTypeInfo: %v", err)
		}
	}
	if _, _, rows = columnsOf(t, db, "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'dpproxy'"); len(rows) != 1 {
		t.Errorf("catalog after SQLGetTypeInfo: %v", rows)
	}

	// 43 SELECTs that read a table, the catalog's or a configured one, or
	// hold a variable: refused, at once.
	for _, branch := range []string{
		"SELECT TABLE_NAME, %d FROM information_schema.TABLES",
		"SELECT COUNT(*), %d FROM pums",
		"SELECT @@version, %d",
	} {
		parts := make([]string, 43)
		for i := range parts {
			parts[i] = fmt.Sprintf(branch, i)
		}
		start := time.Now()
		_, err := db.Query(strings.Join(parts, " UNION "))
		if mysqlCode(err) != 1235 || !strings.Contains(err.Error(), "more than 8 SELECTs") || time.Since(start) > 5*time.Second {
			t.Errorf("43 × %s: %v after %v, want 1235 naming the limit", branch, err, time.Since(start))
		}
	}
	if _, v := queryRow(t, db, "SELECT dp_remaining_epsilon()"); v[0] != 100 {
		t.Errorf("SQLGetTypeInfo spent budget: remaining %v", v[0])
	}

	// Under another collation_connection, whose comparisons dpproxy does
	// not implement, the catalog engine answers up to 8 SELECTs; longer
	// ones are refused, naming the default.
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), "SET collation_connection = 'utf8mb4_general_ci'"); err != nil {
		t.Fatal(err)
	}
	if r, err := conn.QueryContext(t.Context(), "SELECT 'a' AS k UNION SELECT 'b'"); err != nil {
		t.Errorf("two SELECTs under utf8mb4_general_ci: %v", err)
	} else {
		r.Close()
	}
	if _, err := conn.QueryContext(t.Context(), typeInfo); mysqlCode(err) != 1235 || !strings.Contains(err.Error(), "utf8mb4_0900_bin") {
		t.Errorf("SQLGetTypeInfo under utf8mb4_general_ci: %v, want 1235 naming the default collation", err)
	}

}

// TestConstantUnionsAsMariaDB: UNIONs of literal rows, SQLGetTypeInfo's
// among them, answer through the proxy with the column names and rows,
// in order, that MariaDB 10.11 gives under its byte-order collation
// without padding (the proxy's utf8mb4_0900_bin): parenthesized SELECTs
// and UNIONs with their own ORDER BY and LIMIT, strings, NULLs, integers
// and strings in one column (sorted as text), ties under LIMIT. The
// catalog engine answered the parenthesized ones, and put (SELECT 1)
// UNION (SELECT 2) ORDER BY 1 DESC in the order 1, 2. Parenthesized set
// operations the catalog engine would answer (a decimal, a catalog table)
// are refused with 1235.
func TestConstantUnionsAsMariaDB(t *testing.T) {
	p := startProxy(t, "", nil)
	db := p.connect(t, "demo", "demo")
	maria, err := testdb.MySQL(t).Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer maria.Close()
	if _, err := maria.ExecContext(t.Context(), "SET collation_connection = utf8mb4_nopad_bin"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		odbcTypeInfo(t),
		"SELECT 'a' AS k, 1 AS n UNION ALL SELECT 'a', 1 UNION SELECT 'A', 1 UNION ALL SELECT 'a', 1 UNION ALL SELECT 7, NULL",
		"SELECT 'b' AS k, 2 AS n UNION ALL SELECT 'B', 10 UNION ALL SELECT 'a', NULL UNION ALL SELECT 'é', -1 ORDER BY k DESC, 2 LIMIT 1, 3",
		"(SELECT 1) UNION (SELECT 2) ORDER BY 1 DESC",
		"SELECT 1 UNION SELECT 2 ORDER BY 1 DESC",
		"(SELECT 1 AS a) UNION ALL (SELECT 2) ORDER BY a DESC LIMIT 1",
		"(SELECT 2 ORDER BY 1) UNION (SELECT 1)",
		"SELECT 1 UNION (SELECT 2 ORDER BY 1 LIMIT 1) ORDER BY 1 DESC",
		"(SELECT 2 LIMIT 1) UNION (SELECT 1) ORDER BY 1",
		"((SELECT 1) UNION (SELECT 2)) ORDER BY 1 DESC",
		"(SELECT 1 UNION SELECT 2) UNION SELECT 3 ORDER BY 1 DESC",
		"SELECT 1 UNION (SELECT 2 UNION SELECT 3) ORDER BY 1 DESC",
		"(SELECT 1 UNION SELECT 2 ORDER BY 1 DESC)",
		"(SELECT 1 UNION SELECT 2) ORDER BY 1 DESC LIMIT 1",
		"(SELECT 1) UNION ALL (SELECT 1) UNION (SELECT 2) ORDER BY 1 DESC",
		"(SELECT 1) UNION ALL (SELECT 1) UNION ALL ((SELECT 1) UNION (SELECT 1))",
		"SELECT 1 UNION ALL (SELECT 2) UNION ALL SELECT 0 ORDER BY 1",
		"SELECT 3 UNION ALL (SELECT 1 UNION SELECT 2 ORDER BY 1 DESC)",
		"SELECT 3 UNION ALL (SELECT 1 UNION SELECT 2 ORDER BY 1 DESC LIMIT 1)",
		"(SELECT 1 UNION SELECT 2 ORDER BY 1 DESC) UNION SELECT 0",
		"SELECT 1 UNION ALL (SELECT 2 LIMIT 0) UNION ALL SELECT 3",
		"(SELECT -5 AS a ORDER BY a LIMIT 1, 1) UNION ALL (SELECT 7)",
		"((SELECT 1) ORDER BY 1 DESC LIMIT 1) UNION SELECT 2",
		"SELECT 3 UNION SELECT 1 LIMIT 1",
		// Strings, byte order without padding, and NULLs.
		"(SELECT 'b') UNION (SELECT 'a') ORDER BY 1",
		"(SELECT 'é') UNION (SELECT 'e') UNION (SELECT 'z') ORDER BY 1 DESC",
		"SELECT 'a ' UNION SELECT 'a' UNION SELECT 'A' ORDER BY 1",
		"SELECT 'b' UNION SELECT NULL UNION SELECT 'a' ORDER BY 1 DESC",
		"(SELECT NULL UNION SELECT 1 ORDER BY 1 DESC LIMIT 1) UNION (SELECT NULL) ORDER BY 1",
		"SELECT NULL AS n UNION SELECT NULL",
		// Integers and strings in one column compare as text; a part's
		// own ORDER BY sorts by its own SELECTs' types.
		"SELECT 1 UNION SELECT 'a' UNION SELECT 10 UNION SELECT 9 ORDER BY 1",
		"(SELECT 1) UNION (SELECT '10') UNION (SELECT 9) ORDER BY 1 DESC",
		"(SELECT 1 UNION SELECT 10 ORDER BY 1 DESC LIMIT 1) UNION SELECT 'a' ORDER BY 1",
		"(SELECT 9 UNION SELECT 10 UNION SELECT 'a' ORDER BY 1 LIMIT 2) UNION ALL SELECT 1 ORDER BY 1 DESC",
		"(SELECT 9223372036854775807) UNION (SELECT -1) ORDER BY 1",
		"SELECT 1 UNION SELECT '1' UNION (SELECT 1)",
		// A second sort key orders rows the first leaves tied. (Which
		// tied row comes first under one key is unspecified: MariaDB's
		// filesort returned either on different machines.)
		"(SELECT 'b' AS k, 1 AS n) UNION ALL (SELECT 'a', 2) UNION ALL (SELECT 'b', 0) ORDER BY k, n LIMIT 2",
		"(SELECT 1 AS a, 'x' AS b) UNION ALL (SELECT 1, 'y') UNION ALL (SELECT 1, 'z') ORDER BY a DESC, b DESC LIMIT 2",
	} {
		names, want, err := queryAll(t.Context(), maria, q)
		if err != nil {
			t.Fatalf("MariaDB: %.60s: %v", q, err)
		}
		gotNames, got, err := queryAll(t.Context(), db, q)
		switch {
		case err != nil:
			t.Errorf("%.60s: %v", q, err)
		case fmt.Sprint(gotNames) != fmt.Sprint(names) || fmt.Sprint(got) != fmt.Sprint(want):
			t.Errorf("%.60s:\nproxy   %v %v\nMariaDB %v %v", q, gotNames, got, names, want)
		}
	}
	for _, q := range []string{
		"(SELECT 1.5) UNION (SELECT 2) ORDER BY 1 DESC",
		"SELECT 1 UNION (SELECT 2 UNION SELECT 3 ORDER BY 1 + 0 LIMIT 1)",
		"(SELECT TABLE_NAME FROM information_schema.TABLES) UNION (SELECT 'zzz') ORDER BY 1 DESC",
	} {
		if _, _, err := queryAll(t.Context(), db, q); mysqlCode(err) != 1235 {
			t.Errorf("%s: %v, want 1235", q, err)
		}
	}
}

// queryAll runs q on db (a pool or a connection) and returns its column
// names and rows, each value as text or NULL.
func queryAll(ctx context.Context, db interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, q string) (names []string, rows [][]string, err error) {
	r, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	if names, err = r.Columns(); err != nil {
		return nil, nil, err
	}
	for r.Next() {
		vals := make([]sql.NullString, len(names))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := r.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = v.String
			if !v.Valid {
				row[i] = "NULL"
			}
		}
		rows = append(rows, row)
	}
	return names, rows, r.Err()
}
