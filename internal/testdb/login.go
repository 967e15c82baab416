package testdb

import (
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// limitedPassword is the password of every LimitedLogin.
const limitedPassword = "dpproxy-limited"

// LimitedLogin creates a login that may hold at most limit connections
// at once (PostgreSQL's CONNECTION LIMIT, MySQL/MariaDB's
// MAX_USER_CONNECTIONS) and read the tables already in dsn's schema or
// database (a DSN of PostgresDSN or MySQLDSN, as driver "postgres" or
// "mysql"), and returns dsn with that login's user and password. The
// login is dropped when the test ends, after what the test registered
// later (its pools, a proxy) has closed; a PostgreSQL URL DSN is needed.
func LimitedLogin(t testing.TB, driver, dsn string, limit int) string {
	t.Helper()
	name := freshName(t)
	switch driver {
	case "postgres":
		u, err := url.Parse(dsn)
		if err != nil || !strings.HasPrefix(u.Scheme, "postgres") {
			t.Skipf("testdb: LimitedLogin needs a postgres:// DSN (%v)", err)
		}
		schema := u.Query().Get("search_path")
		admin := Open(t, "postgres", dsn)
		for _, s := range []string{
			"CREATE ROLE " + name + " LOGIN PASSWORD '" + limitedPassword + "' CONNECTION LIMIT " + strconv.Itoa(limit),
			"GRANT USAGE ON SCHEMA " + schema + " TO " + name,
			"GRANT SELECT ON ALL TABLES IN SCHEMA " + schema + " TO " + name,
		} {
			if _, err := admin.Exec(s); err != nil {
				t.Fatalf("testdb: %s: %v", s, err)
			}
		}
		t.Cleanup(func() {
			for _, s := range []string{
				"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '" + name + "'",
				"DROP OWNED BY " + name,
				"DROP ROLE " + name,
			} {
				if _, err := admin.Exec(s); err != nil {
					t.Errorf("testdb: %s: %v", s, err)
				}
			}
		})
		u.User = url.UserPassword(name, limitedPassword)
		return u.String()
	case "mysql":
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			t.Fatalf("testdb: %v", err)
		}
		admin := Open(t, "mysql", dsn)
		account := "'" + name + "'@'%'"
		for _, s := range []string{
			"CREATE USER " + account + " IDENTIFIED BY '" + limitedPassword + "' WITH MAX_USER_CONNECTIONS " + strconv.Itoa(limit),
			"GRANT SELECT ON " + cfg.DBName + ".* TO " + account,
		} {
			if _, err := admin.Exec(s); err != nil {
				t.Fatalf("testdb: %s: %v", s, err)
			}
		}
		t.Cleanup(func() {
			if _, err := admin.Exec("DROP USER " + account); err != nil {
				t.Errorf("testdb: DROP USER %s: %v", account, err)
			}
		})
		cfg.User, cfg.Passwd = name, limitedPassword
		return cfg.FormatDSN()
	}
	t.Fatalf("testdb: LimitedLogin: no logins on %s", driver)
	return ""
}
