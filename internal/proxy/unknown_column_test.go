package proxy

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestCatalogUnknownColumnAsMariaDB: a catalog statement that names an
// unknown column is 1054 with MariaDB 10.11's text, the name as written
// and the clause that holds it, the first in the order MariaDB resolves
// them (checked below against a MariaDB server, over its table shown for
// pums). They read "Unknown column: column "Collation" could not be found
// in any table in scope" (checked: this failed), a qualified name was
// 1235 or 1146, and USING's clause 'from clause'.
func TestCatalogUnknownColumnAsMariaDB(t *testing.T) {
	s := newTestSession(t)
	cases := []struct{ sql, want string }{
		{"SHOW COLUMNS FROM pums WHERE Collation = 'x'", "Unknown column 'Collation' in 'WHERE'"},
		{"SHOW FULL COLUMNS FROM pums WHERE `Field` = 'a' AND Nonexistent = 1", "Unknown column 'Nonexistent' in 'WHERE'"},
		{"SHOW TABLES WHERE Nonexistent = 'x'", "Unknown column 'Nonexistent' in 'WHERE'"},
		{"SHOW VARIABLES WHERE `My Col` = 1", "Unknown column 'My Col' in 'WHERE'"},
		{"SELECT * FROM information_schema.columns WHERE XyZ = 'x'", "Unknown column 'XyZ' in 'WHERE'"},
		{"SELECT x FROM information_schema.tables WHERE x = 1", "Unknown column 'x' in 'SELECT'"},
		{"SELECT table_name FROM information_schema.tables WHERE x = 1 ORDER BY x", "Unknown column 'x' in 'WHERE'"},
		{"SELECT table_name FROM information_schema.tables GROUP BY x HAVING x = 1 ORDER BY x", "Unknown column 'x' in 'ORDER BY'"},
		{"SELECT table_name FROM information_schema.tables GROUP BY x HAVING x = 1", "Unknown column 'x' in 'GROUP BY'"},
		{"SELECT table_name FROM information_schema.tables t GROUP BY table_name HAVING x = 1", "Unknown column 'x' in 'HAVING'"},
		{"SELECT 1 FROM information_schema.tables a JOIN information_schema.columns b ON x = 1", "Unknown column 'x' in 'ON'"},
		{"SELECT 1 FROM information_schema.tables a JOIN information_schema.columns b ON x = 1 WHERE x = 1", "Unknown column 'x' in 'WHERE'"},
		{"SELECT 1 FROM information_schema.tables a JOIN information_schema.columns b USING (x)", "Unknown column 'x' in 'FROM'"},
		{"SELECT table_name FROM information_schema.tables WHERE table_name IN (SELECT x FROM information_schema.columns)", "Unknown column 'x' in 'SELECT'"},
		{"SELECT (SELECT 1 FROM information_schema.tables WHERE x = 1) FROM information_schema.columns", "Unknown column 'x' in 'WHERE'"},
		{"SELECT x FROM (SELECT x FROM information_schema.tables) d", "Unknown column 'x' in 'SELECT'"},
		{"SELECT ROW_NUMBER() OVER (PARTITION BY x) FROM information_schema.tables", "Unknown column 'x' in 'GROUP BY'"},
		{"SELECT ROW_NUMBER() OVER (ORDER BY x) FROM information_schema.tables WHERE x = 1", "Unknown column 'x' in 'WHERE'"},
		{"SELECT table_name FROM information_schema.tables UNION SELECT table_name FROM information_schema.columns ORDER BY x", "Unknown column 'x' in 'ORDER BY'"},
		{"SELECT table_name FROM information_schema.tables ORDER BY 5", "Unknown column '5' in 'ORDER BY'"},
		{"SELECT T.nonexistent FROM information_schema.tables t", "Unknown column 'T.nonexistent' in 'SELECT'"},
		{"SELECT table_name FROM information_schema.tables WHERE x.nonexistent = 1", "Unknown column 'x.nonexistent' in 'WHERE'"},
	}
	for _, c := range cases {
		_, err := s.Execute(context.Background(), c.sql)
		var e *dperr.Error
		if !errors.As(err, &e) || e.Kind != dperr.UnknownColumn || e.Msg != c.want {
			t.Errorf("%s: %v, want 1054 %q", c.sql, err, c.want)
		}
	}

	// MariaDB's own answer, the reference.
	db := testdb.MySQL(t)
	if _, err := db.Exec("CREATE TABLE shown (a INT, b VARCHAR(10))"); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		q := strings.ReplaceAll(c.sql, "pums", "shown")
		rows, err := db.Query(q)
		if err == nil {
			err = rows.Err()
			rows.Close()
		}
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1054 || me.Message != c.want {
			t.Errorf("MariaDB: %s: %v, want 1054 %q", q, err, c.want)
		}
	}
}
