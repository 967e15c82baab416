package main

import (
	"database/sql"
	"strconv"
	"strings"
	"testing"
	"time"
)

// columnsOf runs q and returns its column names and go-sql-driver's type names.
func columnsOf(t *testing.T, db *sql.DB, q string) (names, types []string, rows [][]string) {
	t.Helper()
	r, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer r.Close()
	cts, err := r.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cts {
		names = append(names, c.Name())
		types = append(types, c.DatabaseTypeName())
	}
	for r.Next() {
		vals := make([]sql.NullString, len(cts))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := r.Scan(ptrs...); err != nil {
			t.Fatalf("%s: %v", q, err)
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
	if err := r.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return names, types, rows
}

// TestCatalogBrowseEndToEnd browses the schema through the real proxy as BI
// tools do: information_schema, SHOW in MySQL's shapes, zero-row probes,
// Connector/J's connect statement, and the refused mix of catalog and data.
func TestCatalogBrowseEndToEnd(t *testing.T) {
	p := startProxy(t, "", nil)
	db := p.connect(t, "demo", "demo")
	db.SetMaxOpenConns(1) // one session: SET and USE must persist between statements

	_, _, rows := columnsOf(t, db, "SELECT TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'dpproxy' ORDER BY TABLE_NAME")
	if len(rows) != 1 || rows[0][0] != "pums" || rows[0][1] != "BASE TABLE" {
		t.Errorf("information_schema.TABLES: %v", rows)
	}
	_, types, rows := columnsOf(t, db, "SELECT COLUMN_NAME, ORDINAL_POSITION, DATA_TYPE, COLUMN_COMMENT FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'pums' ORDER BY ORDINAL_POSITION")
	if len(rows) != 6 || rows[0][0] != "age" || rows[0][2] != "bigint" || rows[0][3] != "bounds [0, 100]" {
		t.Errorf("information_schema.COLUMNS: %v", rows)
	}
	if types[1] != "UNSIGNED INT" {
		t.Errorf("ORDINAL_POSITION has type %s, want UNSIGNED INT", types[1])
	}
	names, _, rows := columnsOf(t, db, "SHOW FULL TABLES")
	if strings.Join(names, ",") != "Tables_in_dpproxy,Table_type" || len(rows) != 1 || rows[0][1] != "BASE TABLE" {
		t.Errorf("SHOW FULL TABLES: %v %v", names, rows)
	}
	names, _, rows = columnsOf(t, db, "SHOW FULL COLUMNS FROM pums")
	if len(names) != 9 || names[8] != "Comment" || len(rows) != 6 {
		t.Errorf("SHOW FULL COLUMNS: %v %v", names, rows)
	}
	names, _, _ = columnsOf(t, db, "SHOW INDEX FROM pums")
	if len(names) < 13 || names[2] != "Key_name" {
		t.Errorf("SHOW INDEX: %v", names)
	}
	_, _, rows = columnsOf(t, db, "SHOW CREATE TABLE pums")
	if len(rows) != 1 || !strings.Contains(rows[0][1], "`age` bigint COMMENT 'bounds [0, 100]'") {
		t.Errorf("SHOW CREATE TABLE: %v", rows)
	}
	// MariaDB Connector/J's default connect statement, and the session keeps the value.
	if _, err := db.Exec("set autocommit=1, sql_mode = concat(@@sql_mode,',STRICT_TRANS_TABLES')"); err != nil {
		t.Fatalf("Connector/J's SET: %v", err)
	}
	if _, _, rows = columnsOf(t, db, "SELECT @@sql_mode"); !strings.Contains(rows[0][0], "STRICT_TRANS_TABLES") {
		t.Errorf("@@sql_mode after SET: %v", rows)
	}
	// Connect-time probes, typed.
	if _, types, _ = columnsOf(t, db, "SELECT NOW(), TIMEDIFF(NOW(), UTC_TIMESTAMP()), CAST('x' AS CHAR(60))"); types[0] != "DATETIME" || types[1] != "TIME" {
		t.Errorf("NOW(), TIMEDIFF: types %v", types)
	}
	// Zero-row probes read no row and cost nothing.
	for _, q := range []string{"SELECT * FROM pums LIMIT 0", "SELECT age, income FROM pums WHERE 1 = 0"} {
		if _, _, rows = columnsOf(t, db, q); len(rows) != 0 {
			t.Errorf("%s: %d rows", q, len(rows))
		}
	}
	if _, v := queryRow(t, db, "SELECT dp_remaining_epsilon()"); v[0] != 100 {
		t.Errorf("catalog statements spent budget: remaining %v", v[0])
	}
	// Server-side prepared statements (binary protocol) on the catalog, typed.
	var pos uint32
	var now string
	var name string
	if err := db.QueryRow("SELECT COLUMN_NAME, ORDINAL_POSITION, NOW() FROM information_schema.COLUMNS WHERE TABLE_NAME = ? AND COLUMN_NAME = ?", "pums", "income").Scan(&name, &pos, &now); err != nil {
		t.Fatalf("prepared catalog query: %v", err)
	}
	if _, err := time.Parse(time.DateTime, now); name != "income" || pos != 5 || err != nil {
		t.Errorf("prepared catalog query: %s %d %v", name, pos, now)
	}
	// A string parameter bound to a numeric column is that number.
	if _, v := queryRow(t, db, "SELECT COUNT(*) FROM pums WHERE sex = ?", "1"); v[0] < 0 {
		t.Errorf("sex = '1': %v", v)
	}
	// A statement mixing the catalog with a configured table is refused.
	_, err := db.Query("SELECT COUNT(*) FROM pums JOIN information_schema.COLUMNS c ON c.TABLE_NAME = 'pums'")
	if mysqlCode(err) != 1235 {
		t.Errorf("mix of catalog and data: %v, want 1235", err)
	}
	// USE information_schema, then unqualified catalog tables.
	if _, err := db.Exec("USE information_schema"); err != nil {
		t.Fatalf("USE information_schema: %v", err)
	}
	if _, _, rows = columnsOf(t, db, "SELECT SCHEMA_NAME FROM SCHEMATA ORDER BY SCHEMA_NAME"); len(rows) != 2 || rows[0][0] != "dpproxy" {
		t.Errorf("SCHEMATA: %v", rows)
	}
}

// TestCatalogWithMariaDBCLI browses through the mariadb client.
func TestCatalogWithMariaDBCLI(t *testing.T) {
	p := startProxy(t, "", nil)
	out, err := p.mariadbCLI(t, "demo", "demo", "dpproxy", "-e",
		"SHOW FULL TABLES; USE information_schema; SELECT COUNT(*) FROM COLUMNS WHERE TABLE_SCHEMA = 'dpproxy'; SHOW CREATE TABLE dpproxy.pums\\G")
	if err != nil {
		t.Fatalf("mariadb: %v\n%s", err, out)
	}
	for _, want := range []string{"Tables_in_dpproxy\tTable_type", "pums\tBASE TABLE", "COUNT(*)\n6", "CREATE TABLE `pums`"} {
		if !strings.Contains(out, want) {
			t.Errorf("mariadb output lacks %q:\n%s", want, out)
		}
	}
	// SQL-level PREPARE/EXECUTE of a private aggregate, with a bound variable.
	out, err = p.mariadbCLI(t, "demo", "demo", "dpproxy", "-N", "-e",
		"SET @a = 30; PREPARE s FROM 'SELECT COUNT(*) FROM pums WHERE educ > ?'; EXECUTE s USING @a; DEALLOCATE PREPARE s")
	if err != nil {
		t.Fatalf("mariadb PREPARE/EXECUTE: %v\n%s", err, out)
	}
	if _, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64); err != nil {
		t.Errorf("EXECUTE of a count printed %q", out)
	}
	out, err = p.mariadbCLI(t, "demo", "demo", "dpproxy", "-e", "SELECT * FROM pums JOIN information_schema.TABLES")
	if err == nil || !strings.Contains(out, "ERROR 1235 (42000)") {
		t.Errorf("mix through the CLI: err=%v, output %q", err, out)
	}
}

// TestStringVariablesAreTextEndToEnd: string system variables reach
// go-sql-driver as VARCHAR (text), not VARBINARY, which made JDBC's
// getObject return byte[] and PyMySQL bytes.
func TestStringVariablesAreTextEndToEnd(t *testing.T) {
	p := startProxy(t, "", nil)
	db := p.connect(t, "demo", "demo")
	names, types, _ := columnsOf(t, db, "SELECT @@version, @@sql_mode, @@time_zone")
	for i, typ := range types {
		if typ != "VARCHAR" {
			t.Errorf("%s has type %s, want VARCHAR", names[i], typ)
		}
	}
}

// TestColumnStatisticsEndToEnd: mysqldump 8's read of
// information_schema.COLUMN_STATISTICS answers an empty table; the
// catalog engine panicked on it (1235 "the catalog engine failed").
func TestColumnStatisticsEndToEnd(t *testing.T) {
	p := startProxy(t, "", nil)
	db := p.connect(t, "demo", "demo")
	if _, _, rows := columnsOf(t, db, "SELECT COUNT(*) FROM information_schema.COLUMN_STATISTICS"); len(rows) != 1 || rows[0][0] != "0" {
		t.Errorf("COUNT(*) of COLUMN_STATISTICS: %v, want 0", rows)
	}
	names, _, rows := columnsOf(t, db, "SELECT COLUMN_NAME, HISTOGRAM FROM information_schema.COLUMN_STATISTICS WHERE SCHEMA_NAME = 'dpproxy' AND TABLE_NAME = 'pums'")
	if len(names) != 2 || len(rows) != 0 {
		t.Errorf("COLUMN_STATISTICS of pums: %v %v", names, rows)
	}
}

// TestPortIsTheListenPort: @@port is the port the proxy listens on, as
// MySQL reports its own; it was 3306 whatever the proxy's. With it, the
// client's own connection in SHOW PROCESSLIST.
func TestPortIsTheListenPort(t *testing.T) {
	p := startProxy(t, "", nil)
	db := p.connect(t, "demo", "demo")
	var port string
	if err := db.QueryRow("SELECT @@port").Scan(&port); err != nil {
		t.Fatal(err)
	}
	if want := p.addr[strings.LastIndex(p.addr, ":")+1:]; port != want {
		t.Errorf("@@port %s, want %s", port, want)
	}
	_, _, rows := columnsOf(t, db, "SHOW PROCESSLIST")
	if len(rows) != 1 || rows[0][1] != "demo" || !strings.HasPrefix(rows[0][2], "127.0.0.1:") || rows[0][7] != "SHOW PROCESSLIST" {
		t.Errorf("SHOW PROCESSLIST: %v, want the connection's own row", rows)
	}
}
