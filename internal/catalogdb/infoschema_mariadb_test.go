package catalogdb

import (
	"fmt"
	"strings"
	"testing"
)

// TestInformationSchemaNotNull: the columns MariaDB 10.11 declares NOT
// NULL in information_schema (mariaDBNotNull) are announced with
// NOT_NULL_FLAG, as MariaDB announces them (DBeaver, SQLAlchemy and
// JDBC's isNullable read it); go-mysql-server announced TABLES.TABLE_NAME,
// COLUMNS.COLUMN_NAME, SCHEMATA.SCHEMA_NAME and most others nullable.
// And no column announced NOT NULL holds a NULL in any row the engine
// gives (the engine's own rows, a configured table's and
// information_schema's).
func TestInformationSchemaNotNull(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	for _, c := range []struct{ table, notNull string }{
		{"TABLES", "TABLE_CATALOG TABLE_SCHEMA TABLE_NAME TABLE_TYPE TABLE_COMMENT"},
		{"COLUMNS", "TABLE_CATALOG TABLE_SCHEMA TABLE_NAME COLUMN_NAME ORDINAL_POSITION IS_NULLABLE DATA_TYPE COLUMN_TYPE COLUMN_KEY EXTRA PRIVILEGES COLUMN_COMMENT"},
		{"SCHEMATA", "CATALOG_NAME SCHEMA_NAME DEFAULT_CHARACTER_SET_NAME DEFAULT_COLLATION_NAME"},
		{"STATISTICS", "TABLE_CATALOG TABLE_SCHEMA TABLE_NAME NON_UNIQUE INDEX_SCHEMA INDEX_NAME SEQ_IN_INDEX COLUMN_NAME NULLABLE INDEX_TYPE INDEX_COMMENT"},
		{"KEY_COLUMN_USAGE", "CONSTRAINT_CATALOG CONSTRAINT_SCHEMA CONSTRAINT_NAME TABLE_CATALOG TABLE_SCHEMA TABLE_NAME COLUMN_NAME ORDINAL_POSITION"},
		{"VIEWS", "TABLE_CATALOG TABLE_SCHEMA TABLE_NAME VIEW_DEFINITION CHECK_OPTION IS_UPDATABLE DEFINER SECURITY_TYPE CHARACTER_SET_CLIENT COLLATION_CONNECTION"},
		{"ROUTINES", "SPECIFIC_NAME ROUTINE_CATALOG ROUTINE_SCHEMA ROUTINE_NAME ROUTINE_TYPE DATA_TYPE ROUTINE_BODY"},
	} {
		r := query(t, s, "SELECT * FROM information_schema."+c.table)
		flags := map[string]uint16{}
		for _, col := range r.Columns {
			flags[strings.ToUpper(col.Name)] = col.Flags
		}
		for _, name := range strings.Fields(c.notNull) {
			if f, ok := flags[name]; !ok || f&notNullFlag == 0 {
				t.Errorf("%s.%s: flags %#x (present %v), want NOT_NULL as in MariaDB", c.table, name, f, ok)
			}
		}
	}
	// And the columns MariaDB declares nullable are announced so.
	for table, cols := range map[string]string{"STATISTICS": "COLLATION CARDINALITY SUB_PART PACKED COMMENT", "COLLATIONS": "CHARACTER_SET_NAME ID IS_DEFAULT"} {
		r := query(t, s, "SELECT * FROM information_schema."+table)
		for _, col := range r.Columns {
			if strings.Contains(" "+cols+" ", " "+strings.ToUpper(col.Name)+" ") && col.Flags&notNullFlag != 0 {
				t.Errorf("%s.%s: NOT NULL, want nullable as in MariaDB", table, col.Name)
			}
		}
	}
	for name := range mariaDBNotNull {
		r := query(t, s, "SELECT * FROM information_schema."+name)
		for _, row := range r.Rows {
			for j, col := range r.Columns {
				if col.Flags&notNullFlag != 0 && row[j] == nil {
					t.Errorf("%s.%s is announced NOT NULL and holds NULL in %v", name, col.Name, row)
				}
			}
		}
	}
}

// TestInformationSchemaVarcharNotEnum: the columns MariaDB 10.11 declares
// VARCHAR where go-mysql-server had an ENUM (TABLES.TABLE_TYPE,
// COLUMNS.COLUMN_KEY, ...) are VARCHAR of MariaDB's length without
// ENUM_FLAG, with their values; CAST(TABLE_TYPE AS CHAR) made the engine
// panic.
func TestInformationSchemaVarcharNotEnum(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	for name, n := range mariaDBVarchar {
		table, col, _ := strings.Cut(name, ".")
		r := query(t, s, "SELECT "+col+" FROM information_schema."+table+" LIMIT 0")
		if c := r.Columns[0]; c.Type != 253 || c.Flags&enumFlag != 0 || c.Length != uint32(3*n) {
			t.Errorf("%s: %+v, want VARCHAR(%d) as in MariaDB", name, c, n)
		}
	}
	for q, want := range map[string]string{
		"SELECT TABLE_TYPE, CAST(TABLE_TYPE AS CHAR), ROW_FORMAT FROM information_schema.TABLES WHERE TABLE_NAME = 'visits'": "[[BASE TABLE BASE TABLE Dynamic]]",
		"SELECT DISTINCT TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'information_schema'":                "[[SYSTEM VIEW]]",
		"SELECT DISTINCT COLUMN_KEY FROM information_schema.COLUMNS WHERE TABLE_NAME = 'visits'":                             "[[]]",
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_TYPE = 'BASE TABLE'":                                     "[[1]]",
	} {
		if got := fmt.Sprint(query(t, s, q).Rows); got != want {
			t.Errorf("%s: %s, want %s", q, got, want)
		}
	}
}

// TestNullColumnsAreNotAnnouncedNotNull: a column that holds a NULL is
// not announced NOT NULL. go-mysql-server announced a LEFT JOIN's inner
// columns as their table declares them, NOT NULL, with NULLs in the rows
// without a match (Connector/J 8's COLLATIONS LEFT JOIN CHARACTER_SETS).
func TestNullColumnsAreNotAnnouncedNotNull(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	for _, q := range []string{
		"SELECT c.COLLATION_NAME, s.MAXLEN FROM information_schema.COLLATIONS c LEFT JOIN information_schema.CHARACTER_SETS s ON 1 = 0 LIMIT 1",
		"SELECT t.TABLE_NAME, c.COLUMN_NAME FROM information_schema.TABLES t LEFT JOIN information_schema.COLUMNS c ON 1 = 0 WHERE t.TABLE_NAME = 'visits'",
	} {
		r := query(t, s, q)
		if len(r.Rows) != 1 || r.Rows[0][0] == nil || r.Rows[0][1] != nil {
			t.Fatalf("%s: rows %v", q, r.Rows)
		}
		if r.Columns[0].Flags&notNullFlag == 0 || r.Columns[1].Flags&notNullFlag != 0 {
			t.Errorf("%s: flags %#x %#x, want the first NOT NULL, the second (NULL) not", q, r.Columns[0].Flags, r.Columns[1].Flags)
		}
	}
}
