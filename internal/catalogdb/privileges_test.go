package catalogdb

import (
	"fmt"
	"testing"
)

// TestPrivilegesAsShowGrants: information_schema says what SHOW GRANTS
// says, GRANT SELECT ON `dpproxy`.* TO `a`@`%`, as MariaDB 10.11 says it
// for such an account: every column's PRIVILEGES is 'select' (it was ”),
// SCHEMA_PRIVILEGES holds the SELECT on the database and USER_PRIVILEGES
// USAGE (both were empty), TABLE_PRIVILEGES and COLUMN_PRIVILEGES nothing.
func TestPrivilegesAsShowGrants(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	for q, want := range map[string]string{
		"SELECT DISTINCT PRIVILEGES FROM information_schema.COLUMNS":                                         "[[select]]",
		"SELECT COLUMN_NAME, PRIVILEGES FROM information_schema.COLUMNS WHERE TABLE_NAME = 'visits' LIMIT 1": "[[age select]]",
		"SELECT * FROM information_schema.SCHEMA_PRIVILEGES":                                                 "[['a'@'%' def dpproxy SELECT NO]]",
		"SELECT * FROM information_schema.USER_PRIVILEGES":                                                   "[['a'@'%' def USAGE NO]]",
		"SELECT COUNT(*) FROM information_schema.TABLE_PRIVILEGES":                                           "[[0]]",
		"SELECT COUNT(*) FROM information_schema.COLUMN_PRIVILEGES":                                          "[[0]]",
	} {
		if got := fmt.Sprint(query(t, s, q).Rows); got != want {
			t.Errorf("%s: %s, want %s", q, got, want)
		}
	}
	if got := fmt.Sprint(query(t, testEngine(t).Open("b", 2, nil), "SELECT GRANTEE FROM information_schema.SCHEMA_PRIVILEGES").Rows); got != "[['b'@'%']]" {
		t.Errorf("another user's SCHEMA_PRIVILEGES: %s", got)
	}
}
