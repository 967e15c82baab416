package catalogdb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// mysql8InformationSchema are the tables of MySQL 8.0's information_schema
// (SHOW TABLES FROM information_schema), which clients and tools read.
var mysql8InformationSchema = []string{
	"ADMINISTRABLE_ROLE_AUTHORIZATIONS", "APPLICABLE_ROLES", "CHARACTER_SETS", "CHECK_CONSTRAINTS",
	"COLLATION_CHARACTER_SET_APPLICABILITY", "COLLATIONS", "COLUMN_PRIVILEGES", "COLUMN_STATISTICS",
	"COLUMNS", "COLUMNS_EXTENSIONS", "ENABLED_ROLES", "ENGINES", "EVENTS", "FILES", "KEY_COLUMN_USAGE",
	"KEYWORDS", "OPTIMIZER_TRACE", "PARAMETERS", "PARTITIONS", "PLUGINS", "PROCESSLIST", "PROFILING",
	"REFERENTIAL_CONSTRAINTS", "RESOURCE_GROUPS", "ROLE_COLUMN_GRANTS", "ROLE_ROUTINE_GRANTS",
	"ROLE_TABLE_GRANTS", "ROUTINES", "SCHEMA_PRIVILEGES", "SCHEMATA", "SCHEMATA_EXTENSIONS",
	"ST_GEOMETRY_COLUMNS", "ST_SPATIAL_REFERENCE_SYSTEMS", "ST_UNITS_OF_MEASURE", "STATISTICS",
	"TABLE_CONSTRAINTS", "TABLE_CONSTRAINTS_EXTENSIONS", "TABLE_PRIVILEGES", "TABLES", "TABLES_EXTENSIONS",
	"TABLESPACES", "TABLESPACES_EXTENSIONS", "TRIGGERS", "USER_ATTRIBUTES", "USER_PRIVILEGES", "VIEW_ROUTINE_USAGE",
	"VIEW_TABLE_USAGE", "VIEWS", "INNODB_BUFFER_PAGE", "INNODB_CMP", "INNODB_TRX", "INNODB_TABLES",
}

// TestEveryInformationSchemaTableAnswers reads every information_schema
// table the engine lists, and MySQL 8's, with SELECT * ... LIMIT 1 and
// COUNT(*): each answers, or (a MySQL 8 table the engine lacks) fails
// with 1109 unknown table, never with the engine's failure.
// COLUMN_STATISTICS, which mysqldump 8 reads, made the engine panic: it
// is empty, with MySQL 8's columns.
func TestEveryInformationSchemaTableAnswers(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	listed := map[string]bool{}
	for _, row := range query(t, s, "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'information_schema'").Rows {
		listed[strings.ToUpper(row[0].(string))] = true
	}
	if len(listed) < 40 {
		t.Fatalf("information_schema lists %d tables", len(listed))
	}
	names := append([]string(nil), mysql8InformationSchema...)
	for name := range listed {
		names = append(names, name)
	}
	for _, name := range names {
		for _, q := range []string{"SELECT * FROM information_schema.`" + name + "` LIMIT 1", "SELECT COUNT(*) FROM information_schema.`" + name + "`"} {
			_, err := s.Query(context.Background(), q)
			var e *Error
			switch {
			case err == nil:
			case errors.As(err, &e) && e.Code == 1109 && !listed[name]:
			default:
				t.Errorf("%s: %v", q, err)
			}
		}
	}
	r := query(t, s, "SELECT * FROM information_schema.COLUMN_STATISTICS")
	var cols []string
	for _, c := range r.Columns {
		cols = append(cols, c.Name)
	}
	if got := fmt.Sprint(cols, len(r.Rows)); got != "[SCHEMA_NAME TABLE_NAME COLUMN_NAME HISTOGRAM] 0" {
		t.Errorf("COLUMN_STATISTICS: columns and rows %s, want MySQL 8's columns and no row", got)
	}
}

// TestCharacterSetsListsEveryCharacterSet: information_schema.CHARACTER_SETS
// lists every character set information_schema.COLLATIONS names, with
// MySQL 8's columns; it listed utf8mb4 alone, so Connector/J 8's
// COLLATIONS LEFT JOIN CHARACTER_SETS read a NULL MAXLEN for latin1.
func TestCharacterSetsListsEveryCharacterSet(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	r := query(t, s, "SELECT * FROM information_schema.CHARACTER_SETS")
	var cols []string
	for _, c := range r.Columns {
		cols = append(cols, c.Name)
	}
	if got := strings.Join(cols, " "); got != "CHARACTER_SET_NAME DEFAULT_COLLATE_NAME DESCRIPTION MAXLEN" {
		t.Errorf("CHARACTER_SETS columns: %s", got)
	}
	for q, want := range map[string]string{
		"SELECT COUNT(*) FROM information_schema.CHARACTER_SETS":                       "[[41]]",
		"SELECT COUNT(DISTINCT CHARACTER_SET_NAME) FROM information_schema.COLLATIONS": "[[41]]",
		"SELECT * FROM information_schema.CHARACTER_SETS WHERE CHARACTER_SET_NAME IN ('latin1', 'utf8mb4', 'big5') ORDER BY 1": "[[big5 big5_chinese_ci Big5 Traditional Chinese 2] " +
			"[latin1 latin1_swedish_ci cp1252 West European 1] [utf8mb4 utf8mb4_0900_ai_ci UTF-8 Unicode 4]]",
		"SELECT COUNT(*) FROM information_schema.COLLATIONS c LEFT JOIN information_schema.CHARACTER_SETS s " +
			"ON c.CHARACTER_SET_NAME = s.CHARACTER_SET_NAME WHERE s.MAXLEN IS NULL": "[[0]]",
	} {
		if got := fmt.Sprint(query(t, s, q).Rows); got != want {
			t.Errorf("%s: %s, want %s", q, got, want)
		}
	}
}
