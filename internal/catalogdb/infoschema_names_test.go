package catalogdb

import (
	"fmt"
	"testing"
)

// TestInformationSchemaTableNamesUpperCase: information_schema's tables
// are named in upper case, as MySQL 8 and MariaDB name them, in SHOW
// TABLES and in information_schema.TABLES and COLUMNS; they are still
// found under any case, and the configured tables keep their names.
// Before, go-mysql-server's lower-case names were listed (columns,
// tables), so SHOW TABLES FROM information_schema LIKE 'COL%' listed
// nothing (an independent review).
func TestInformationSchemaTableNamesUpperCase(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	s.SetDatabase("dpproxy")
	for _, c := range []struct{ q, want string }{
		{"SHOW TABLES FROM information_schema LIKE 'COL%'", "[[COLLATIONS] [COLLATION_CHARACTER_SET_APPLICABILITY] [COLUMNS] [COLUMNS_EXTENSIONS] [COLUMN_PRIVILEGES] [COLUMN_STATISTICS]]"},
		{"SHOW TABLES FROM information_schema LIKE 'col%'", "[]"},
		{"SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'information_schema' AND TABLE_NAME IN ('TABLES', 'COLUMNS', 'SCHEMATA', 'STATISTICS', 'ROUTINES', 'tables') ORDER BY 1", "[[COLUMNS] [ROUTINES] [SCHEMATA] [STATISTICS] [TABLES]]"},
		{"SELECT DISTINCT TABLE_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'information_schema' AND TABLE_NAME IN ('TABLES', 'COLUMNS', 'tables') ORDER BY 1", "[[COLUMNS] [TABLES]]"},
		{"SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'dpproxy'", "[[visits]]"},
		{"SELECT DISTINCT TABLE_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'dpproxy'", "[[visits]]"},
		{"SHOW TABLES", "[[visits]]"},
		{"SELECT COUNT(*) > 0 FROM information_schema.columns WHERE table_name = 'visits'", "[[1]]"},
		{"SELECT COUNT(*) > 0 FROM INFORMATION_SCHEMA.Tables WHERE TABLE_NAME = 'COLUMNS'", "[[1]]"},
	} {
		if got := fmt.Sprint(query(t, s, c.q).Rows); got != c.want {
			t.Errorf("%s: %s, want %s", c.q, got, c.want)
		}
	}
}
