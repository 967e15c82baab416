package backend

import (
	"net/url"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestSessionSettingsPinned: the settings the rendered SQL is written for
// hold on every backend and ledger session (OpenDB) whatever a DSN says:
// a MySQL DSN's sql_mode (ORACLE, which made LENGTH count characters, or
// ANSI), under any spelling of its key, gives way to MySQLSQLMode; a
// PostgreSQL database's own search_path, extra_float_digits and DateStyle
// (ALTER DATABASE … SET) give way to pg_catalog first (the path's other
// schemas that exist, without pg_catalog), 3 and ISO, MDY, and JIT is off
// whatever the database or the DSN set.
func TestSessionSettingsPinned(t *testing.T) {
	t.Run("mysql", func(t *testing.T) {
		cfg, err := mysql.ParseDSN(testdb.MySQLDSN(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, params := range []map[string]string{
			nil,
			{"sql_mode": "'ORACLE'"},
			{"SQL_MODE": "'ANSI,PAD_CHAR_TO_FULL_LENGTH'", "time_zone": "'+02:00'"},
			{"@@session.sql_mode": "'EMPTY_STRING_IS_NULL,NO_BACKSLASH_ESCAPES'"},
		} {
			cfg.Params = params
			for _, zone := range []string{"", ServerTimeZone} {
				db, err := OpenDB("mysql", cfg.FormatDSN(), zone)
				if err != nil {
					t.Fatal(err)
				}
				var mode string
				var n int
				err = db.QueryRow("SELECT @@SESSION.sql_mode, LENGTH(_utf8mb4 0xE4B8AD)").Scan(&mode, &n)
				db.Close()
				if err != nil {
					t.Fatalf("DSN parameters %v: %v", params, err)
				}
				if mode != MySQLSQLMode || n != 3 {
					t.Errorf("DSN parameters %v, time zone %q: sql_mode %s and LENGTH of a 3-byte character %d; want %s and 3", params, zone, mode, n, MySQLSQLMode)
				}
			}
		}
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := testdb.PostgresDatabaseDSN(t, "UTF8")
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		admin := testdb.Open(t, "postgres", dsn)
		if _, err := admin.Exec("CREATE SCHEMA s1; CREATE SCHEMA s2; ALTER DATABASE " + u.Path[1:] + " SET search_path = public, pg_catalog; ALTER DATABASE " + u.Path[1:] + " SET extra_float_digits = 0; ALTER DATABASE " + u.Path[1:] + " SET DateStyle = 'German, DMY'; ALTER DATABASE " + u.Path[1:] + " SET jit = on"); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct{ dsn, path string }{
			{dsn, "public"},
			{dsn + "&search_path=s1,pg_catalog,nosuch,s2", "s1, s2"},
			{dsn + "&options=" + url.QueryEscape("-c search_path= -c extra_float_digits=1 -c jit=on"), ""},
		} {
			db, err := OpenDB("postgres", c.dsn, "")
			if err != nil {
				t.Fatal(err)
			}
			var path, digits, style, jit string
			err = db.QueryRow("SELECT current_setting('search_path'), current_setting('extra_float_digits'), current_setting('DateStyle'), current_setting('jit')").Scan(&path, &digits, &style, &jit)
			db.Close()
			if err != nil {
				t.Fatal(err)
			}
			if path != c.path || digits != "3" || style != "ISO, MDY" || jit != "off" {
				t.Errorf("%s: search_path %q, extra_float_digits %s, DateStyle %s, jit %s; want %q, 3, ISO, MDY, off", c.dsn, path, digits, style, jit, c.path)
			}
		}
	})
}
