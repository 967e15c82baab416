package main

import (
	"math"
	"net/url"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestSQLModePinnedOnMariaDB: the proxy's MariaDB sessions run in the
// sql_mode its SQL is written for, whatever the DSN (or the server's
// global default) says. With sql_mode=ORACLE in the DSN, LENGTH counts
// characters, so the guard on the sort key's length in bytes let ids of
// 21,001 bytes but 7,001 characters through, and each of the two persons
// holding them was bounded as many: COUNT(*) answered 208 to 211 where
// the bound allows about 200 (an independent review). At ε = 50 a count's
// noise is below 1 with probability 1 − 1e-21.
func TestSQLModePinnedOnMariaDB(t *testing.T) {
	dsn := testdb.MySQLDSN(t)
	direct := testdb.Open(t, "mysql", dsn)
	testdb.LongCJKUnitIDs(t, direct)
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["sql_mode"] = "'ORACLE'"
	_, db := startCarolProxy(t, "mysql", cfg.FormatDSN(), "{default_epsilon: 50, max_epsilon: 50}", "epsilon: 1000, delta: 1.0e-3", `  - name: lv3
    privacy_unit: pid
    max_rows_per_unit: 1
    columns:
      - {name: amt, type: integer, lower: 0, upper: 100}
`)
	for _, q := range []string{"SELECT COUNT(*) FROM lv3", "SELECT COUNT(*) FROM lv3 WHERE amt >= 0"} {
		var count float64
		if err := db.QueryRow(q).Scan(&count); err != nil {
			t.Fatal(err)
		} else if math.Abs(count-200) > 1 {
			t.Errorf("%s = %g, want 200 (the two ids of 21,001 bytes are read by no fetch)", q, count)
		}
	}
}

// TestSearchPathPinnedOnPostgres: a database whose search_path names a
// schema before pg_catalog (ALTER DATABASE … SET search_path) does not
// change what the rendered SQL calls. An aggregate evil.count(*) that
// starts at 1,000 replaced the built-in COUNT(*) in every fetch, and
// COUNT(*) of 100 rows answered 1,100. At ε = 10 a count's noise is
// below 5 with probability 1 − 1e-21.
func TestSearchPathPinnedOnPostgres(t *testing.T) {
	dsn := testdb.PostgresDatabaseDSN(t, "UTF8")
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	admin := testdb.Open(t, "postgres", dsn)
	for _, q := range []string{
		"CREATE SCHEMA data",
		"CREATE TABLE data.t (amt INTEGER)",
		"INSERT INTO data.t SELECT g % 100 FROM generate_series(1, 100) AS g",
		"CREATE SCHEMA evil",
		"CREATE AGGREGATE evil.count(*) (SFUNC = int8inc, STYPE = int8, INITCOND = '1000')",
		"ALTER DATABASE " + u.Path[1:] + " SET search_path = evil, pg_catalog, data",
	} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	_, db := startCarolProxy(t, "postgres", dsn, "{default_epsilon: 10, max_epsilon: 50}", "epsilon: 1000, delta: 1.0e-3", `  - name: t
    columns:
      - {name: amt, type: integer, lower: 0, upper: 100}
`)
	for _, q := range []string{"SELECT COUNT(*) FROM t", "SELECT COUNT(*) FROM t WHERE amt < 50"} {
		want := 100.0
		if q != "SELECT COUNT(*) FROM t" {
			want = 50
		}
		var count float64
		if err := db.QueryRow(q).Scan(&count); err != nil {
			t.Fatal(err)
		} else if math.Abs(count-want) > 5 {
			t.Errorf("%s = %g, want %g (the built-in COUNT(*), not evil.count)", q, count, want)
		}
	}
}
