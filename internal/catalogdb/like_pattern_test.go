package catalogdb

import (
	"fmt"
	"testing"
)

// A LIKE pattern that ends in its escape character matches that
// character, as in MariaDB: SHOW ... LIKE 'a\\' is an empty set and
// 'a\\' LIKE 'a\\' is 1, where go-mysql-server's matcher failed with 1105
// "invalid string for character set" on a column of the catalog.
func TestLikePatternEndingInEscape(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	s.SetDatabase("dpproxy")
	for _, q := range []string{`SHOW TABLES LIKE 'a\\'`, `SHOW DATABASES LIKE 'a\\'`, `SHOW VARIABLES LIKE 'a\\'`, `SHOW COLUMNS FROM visits LIKE 'a\\'`} {
		if r := query(t, s, q); len(r.Rows) != 0 {
			t.Errorf("%s: %q, want no row", q, r.Rows)
		}
	}
	for _, c := range []struct{ query, want string }{
		{`SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'visits' AND table_name NOT LIKE 'visits\\'`, "[1]"},
		{`SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'visits' AND CONCAT(table_name, '\\') LIKE 'visits\\'`, "[1]"},
		{`SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'visits' AND CONCAT(table_name, '|') LIKE 'visits|' ESCAPE '|'`, "[1]"},
		{`SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'visits' AND CONCAT(table_name, '\\') LIKE 'visits\\\\\\'`, "[0]"},
		{`SELECT COUNT(*) FROM information_schema.tables WHERE table_name LIKE 'visit_' AND table_name LIKE 'vis\\its'`, "[1]"},
		{`SELECT 'a\\' LIKE 'a\\', 'a' LIKE 'a\\', 'a|' LIKE 'a|' ESCAPE '|', 'ab' LIKE 'a\\'`, "[1 0 1 0]"},
	} {
		r := query(t, s, c.query)
		got := "[]"
		if len(r.Rows) == 1 {
			got = fmt.Sprint(r.Rows[0])
		}
		if got != c.want {
			t.Errorf("%s: %s, want %s", c.query, got, c.want)
		}
	}
}
