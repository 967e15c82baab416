package proxy

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/catalogdb"
	"github.com/dpproxy/dpproxy/internal/dperr"
)

// TestCatalogErrorKinds: the catalog engine's errors reach the client with
// their own codes: a statement past its time limit is 3024 (it was sent
// as 1235), an interrupted one 1317, a bad value 1231, an unknown
// system variable 1193, and the other errors the engine words as MySQL
// does with MySQL's codes (they were 1235); the engine's 1105 (a
// failure, a bound of the catalog reached) stays 1105, not a refusal.
func TestCatalogErrorKinds(t *testing.T) {
	for code, want := range map[uint16]dperr.Kind{3024: dperr.Timeout, 1317: dperr.Canceled, 1231: dperr.InvalidValue, 1064: dperr.Parse, 1235: dperr.Unsupported, 1193: dperr.UnknownVariable,
		1046: dperr.NoDatabase, 1109: dperr.UnknownSchemaTable, 1052: dperr.AmbiguousColumn, 1305: dperr.UnknownFunction, 1582: dperr.ParameterCount,
		1238: dperr.ReadOnlyVariable, 1066: dperr.DuplicateAlias, 1222: dperr.ColumnCount, 1242: dperr.SubqueryRows, 1055: dperr.NotInGroupBy, 1426: dperr.TooBigPrecision,
		1425: dperr.TooBigScale, 1427: dperr.ScaleOverPrecision,
		1105: dperr.Internal} {
		err := catalogError(&catalogdb.Error{Code: code, State: "HY000", Msg: "m"})
		if got := dperr.KindOf(err); got != want {
			t.Errorf("catalog error %d: kind %v, want %v", code, got, want)
		}
	}
}

// TestInterruptedCatalogStatement: a catalog statement cancelled while it
// runs (KILL QUERY, the client gone) is 1317, and one cut by its deadline
// 3024, each in MySQL's words; they were 1235 with Go's "context
// canceled" and "context deadline exceeded".
func TestInterruptedCatalogStatement(t *testing.T) {
	s := newTestSession(t)
	const slow = "SELECT COUNT(*) FROM information_schema.COLUMNS a, information_schema.COLUMNS b, information_schema.COLUMNS c, information_schema.COLUMNS d"
	killed, kill := context.WithCancel(context.Background())
	timer := time.AfterFunc(100*time.Millisecond, kill) // it runs for its 10 s limit otherwise
	defer timer.Stop()
	_, err := s.Execute(killed, slow)
	if code, state := dperr.KindOf(err).Code(); code != 1317 || state != "70100" || strings.Contains(err.Error(), "context") {
		t.Errorf("killed: %d %s %q, want 1317 in MySQL's words", code, state, err)
	}
	timed, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = s.Execute(timed, slow)
	if code, state := dperr.KindOf(err).Code(); code != 3024 || state != "HY000" || strings.Contains(err.Error(), "context") {
		t.Errorf("past its deadline: %d %s %q, want 3024 in MySQL's words", code, state, err)
	}
}

// TestCatalogEngineFailureIs1105: a statement the catalog engine panicked
// on reaches the client as the engine reports it, 1105, and is logged as
// an internal error; it was sent as 1235, a refusal.
func TestCatalogEngineFailureIs1105(t *testing.T) {
	err := catalogError(fmt.Errorf("%w: panic: boom", catalogdb.ErrEngineFailed))
	code, _ := dperr.KindOf(err).Code()
	if code != 1105 || err.Error() != "the catalog engine failed on this statement" {
		t.Errorf("a panic in the catalog engine: %d %q, want 1105 and the engine's message", code, err.Error())
	}
}

// TestSessionUserFunctions: SESSION_USER() and SYSTEM_USER(), which
// Connector/J's getSystemFunctions lists, are USER(), alone and beside
// dpproxy's settings, and CURRENT_ROLE() is NULL; alone they were 1235.
func TestSessionUserFunctions(t *testing.T) {
	s := newTestSession(t)
	for sql, want := range map[string]string{
		"SELECT SESSION_USER(), SYSTEM_USER(), CURRENT_ROLE()":              "[[demo@% demo@% <nil>]]",
		"SELECT SESSION_USER(), SYSTEM_USER(), CURRENT_ROLE(), @dp_epsilon": "[[demo@% demo@% <nil> 0.1]]",
	} {
		if got := fmt.Sprint(run(t, s, sql).Rows); got != want {
			t.Errorf("%s: %s, want %s", sql, got, want)
		}
	}
}

// TestCatalogErrorGarbled: a message go-mysql-server formatted with
// missing arguments ("expression #%!d(MISSING)") is not passed through.
func TestCatalogErrorGarbled(t *testing.T) {
	err := catalogError(&catalogdb.Error{Code: 1055, State: "42000",
		Msg: "in aggregated query without GROUP BY, expression #%!d(MISSING) of SELECT list contains nonaggregated column '%!s(MISSING)'"})
	if msg := err.Error(); strings.Contains(msg, "%!") || msg == "" {
		t.Errorf("a garbled engine message reached the client: %q", msg)
	}
}

// TestShowCharacterSet: SHOW CHARACTER SET lists the 41 character sets
// information_schema.CHARACTER_SETS and COLLATIONS know (MySQL 8's, with
// gb18030, which MariaDB lacks), in name order as MySQL 8 lists them, LIKE
// filtering Charset and WHERE its columns; it listed 13 of them.
func TestShowCharacterSet(t *testing.T) {
	s := newTestSession(t)
	r := run(t, s, "SHOW CHARACTER SET")
	if len(r.Rows) != 41 || fmt.Sprint(r.Rows[0]) != "[armscii8 ARMSCII-8 Armenian armscii8_general_ci 1]" {
		t.Errorf("SHOW CHARACTER SET: %d rows, first %v; want 41, armscii8's", len(r.Rows), r.Rows[0])
	}
	var cols []string
	for _, c := range r.Typed {
		cols = append(cols, c.Name)
	}
	if got := strings.Join(cols, ","); got != "Charset,Description,Default collation,Maxlen" {
		t.Errorf("SHOW CHARACTER SET columns: %s", got)
	}
	for sql, want := range map[string]string{
		"SHOW CHARACTER SET LIKE 'big5'":         "[[big5 Big5 Traditional Chinese big5_chinese_ci 2]]",
		"SHOW CHARSET WHERE Maxlen = 4":          "[[gb18030 China National Standard GB18030 gb18030_chinese_ci 4] [utf16 UTF-16 Unicode utf16_general_ci 4] [utf16le UTF-16LE Unicode utf16le_general_ci 4] [utf32 UTF-32 Unicode utf32_general_ci 4] [utf8mb4 UTF-8 Unicode utf8mb4_0900_ai_ci 4]]",
		"SHOW CHARACTER SET WHERE Charset = 'x'": "[]",
	} {
		if got := fmt.Sprint(run(t, s, sql).Rows); got != want {
			t.Errorf("%s: %s, want %s", sql, got, want)
		}
	}
}

// TestShowSchemas: SHOW SCHEMAS, SHOW DATABASES' synonym, takes LIKE and
// WHERE as SHOW DATABASES does; with either it was 1235. Both answer in
// MariaDB's shape: with LIKE the column is Database (<pattern>) (it was
// Database), VARCHAR(64) NOT NULL (it was LONGTEXT).
func TestShowSchemas(t *testing.T) {
	s := newTestSession(t)
	for _, c := range []struct{ sql, column, want string }{
		{"SHOW SCHEMAS", "Database", "[[dpproxy] [information_schema]]"},
		{"SHOW DATABASES", "Database", "[[dpproxy] [information_schema]]"},
		{"SHOW SCHEMAS LIKE 'dp%'", "Database (dp%)", "[[dpproxy]]"},
		{"SHOW DATABASES LIKE 'DP%'", "Database (DP%)", "[[dpproxy]]"},
		{"SHOW SCHEMAS WHERE `Database` = 'dpproxy'", "Database", "[[dpproxy]]"},
		{"SHOW DATABASES WHERE `Database` LIKE 'info%'", "Database", "[[information_schema]]"},
		{"SHOW DATABASES LIKE 'x%'", "Database (x%)", "[]"},
	} {
		r := run(t, s, c.sql)
		if got := fmt.Sprint(r.Rows); got != c.want || len(r.Typed) != 1 || r.Typed[0].Name != c.column ||
			r.Typed[0].Type != 253 || r.Typed[0].Length != 192 || r.Typed[0].Flags&1 == 0 {
			t.Errorf("%s: %s %+v, want %s in %s, VARCHAR(64) NOT NULL", c.sql, got, r.Typed, c.want, c.column)
		}
	}
}

// TestGroupConcatOverTheCatalog: GROUP_CONCAT with ORDER BY over the
// catalog is answered, its result cut at group_concat_max_len; the size
// guard counted its ORDER BY items as part of its result and refused it
// (1235, GROUP_CONCAT of up to 20490000 bytes).
func TestGroupConcatOverTheCatalog(t *testing.T) {
	s := newTestSession(t)
	var names []string
	for _, row := range run(t, s, "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_NAME = 'pums' ORDER BY ORDINAL_POSITION").Rows {
		names = append(names, fmt.Sprint(row[0]))
	}
	want := fmt.Sprint([][]any{{strings.Join(names, ",")}})
	q := "SELECT GROUP_CONCAT(COLUMN_NAME ORDER BY ORDINAL_POSITION) FROM information_schema.COLUMNS WHERE TABLE_NAME = 'pums'"
	if got := fmt.Sprint(run(t, s, q).Rows); len(names) == 0 || got != want {
		t.Errorf("%s: %s, want %s", q, got, want)
	}
	run(t, s, "SET group_concat_max_len = 6")
	if got := fmt.Sprint(run(t, s, q).Rows); got != fmt.Sprint([][]any{{strings.Join(names, ",")[:6]}}) {
		t.Errorf("%s cut at 6: %s", q, got)
	}
}

// TestCatalogErrorsReachTheClientInMySQLWords: errors of statements over
// the catalog reach the client with MySQL's codes and texts; they were
// the engine's ("table not found: pums", "database not found: mysql").
func TestCatalogErrorsReachTheClientInMySQLWords(t *testing.T) {
	s := newTestSession(t)
	for _, c := range []struct{ sql, want string }{
		{"SELECT * FROM mysql.user", "1049 Unknown database 'mysql'"},
		{"SHOW COLUMNS FROM secret_tbl", "1146 Table 'dpproxy.secret_tbl' doesn't exist"},
		{"SHOW TABLES FROM nodb", "1049 Unknown database 'nodb'"},
		{"SELECT COLUMN_NAME, TABLE_NAME FROM information_schema.COLUMNS, information_schema.TABLES", "1052 Column 'TABLE_NAME' in SELECT is ambiguous"},
		{"SET @@version = 'x'", "1238 Variable 'version' is a read only variable"},
		{"USE information_schema", ""},
		{"SELECT COUNT(*) FROM pums", "1109 Unknown table 'pums' in information_schema"},
	} {
		_, err := s.Execute(context.Background(), c.sql)
		got := ""
		if err != nil {
			code, _ := dperr.KindOf(err).Code()
			got = fmt.Sprintf("%d %s", code, err)
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.sql, got, c.want)
		}
	}
}

// TestShowCollation: SHOW COLLATION has MySQL 8's columns, named as MySQL
// names them (they were collation, charset, ID, default, compiled,
// SORTLEN, PAD_ATTRIBUTE), in name order, LIKE filtering Collation and
// WHERE its columns.
func TestShowCollation(t *testing.T) {
	s := newTestSession(t)
	r := run(t, s, "SHOW COLLATION LIKE 'latin1%'")
	var cols []string
	for _, c := range r.Typed {
		cols = append(cols, c.Name)
	}
	if got := strings.Join(cols, ","); got != "Collation,Charset,Id,Default,Compiled,Sortlen,Pad_attribute" {
		t.Errorf("SHOW COLLATION columns: %s", got)
	}
	if len(r.Rows) < 2 || fmt.Sprint(r.Rows[0]) != "[latin1_bin latin1 47  Yes 1 PAD SPACE]" {
		t.Errorf("SHOW COLLATION LIKE 'latin1%%': %v", r.Rows)
	}
	if got := fmt.Sprint(run(t, s, "SHOW COLLATION WHERE Id = 8 AND `Default` = 'Yes'").Rows); got != "[[latin1_swedish_ci latin1 8 Yes Yes 1 PAD SPACE]]" {
		t.Errorf("SHOW COLLATION WHERE Id = 8: %s", got)
	}
}

// TestTableNamesWithoutCase: names resolve without case, which
// @@lower_case_table_names 2 tells clients (stored as given, compared in
// lower case; it was 0, case-sensitive), and SHOW TABLES LIKE matches
// them so, as information_schema.TABLES does: SHOW TABLES LIKE 'PUMS%'
// listed nothing.
func TestTableNamesWithoutCase(t *testing.T) {
	s := newTestSession(t)
	for sql, want := range map[string]string{
		"SELECT @@lower_case_table_names":                                                "[[2]]",
		"SHOW VARIABLES LIKE 'lower_case_table_names'":                                   "[[lower_case_table_names 2]]",
		"SHOW TABLES LIKE 'PUMS%'":                                                       "[[pums]]",
		"SHOW FULL TABLES FROM DPPROXY LIKE 'Pu%'":                                       "[[pums BASE TABLE]]",
		"SHOW TABLES LIKE 'x%'":                                                          "[]",
		"SHOW TABLES FROM information_schema LIKE 'collation%'":                          "[[COLLATIONS] [COLLATION_CHARACTER_SET_APPLICABILITY]]",
		"SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_NAME LIKE 'PUMS%'": "[[pums]]",
		"SHOW COLUMNS FROM PUMS LIKE 'AGE'":                                              "[[age bigint YES  <nil> ]]",
	} {
		if got := fmt.Sprint(run(t, s, sql).Rows); got != want {
			t.Errorf("%s: %s, want %s", sql, got, want)
		}
	}
}

// TestProcessList: SHOW PROCESSLIST shows the session's own connection,
// with the client's address as its Host, also after a reset (it showed
// nothing).
func TestProcessList(t *testing.T) {
	s := newTestSession(t)
	s.SetClientAddress("127.0.0.1:50334")
	want := "[[7 demo 127.0.0.1:50334 dpproxy Query 0 running SHOW PROCESSLIST]]"
	if got := fmt.Sprint(run(t, s, "SHOW PROCESSLIST").Rows); got != want {
		t.Errorf("SHOW PROCESSLIST: %s, want %s", got, want)
	}
	s.Reset()
	if got := fmt.Sprint(run(t, s, "SHOW PROCESSLIST").Rows); got != want {
		t.Errorf("after a reset, SHOW PROCESSLIST: %s, want %s", got, want)
	}
}

// TestShowTablesAsMariaDB: SHOW [FULL] TABLES answers in MariaDB 10.11's
// shape: with LIKE the column is named Tables_in_<db> (<pattern>) (it was
// Tables_in_<db>), the name is VARCHAR(64) NOT NULL (it was LONGTEXT), and
// information_schema's tables are of type SYSTEM VIEW (they were BASE
// TABLE); WHERE filters the columns shown, and an unknown database is 1049.
func TestShowTablesAsMariaDB(t *testing.T) {
	s := newTestSession(t)
	for sql, want := range map[string]string{
		"SHOW TABLES LIKE 'p%'":                                                             "[Tables_in_dpproxy (p%)] [[pums]]",
		"SHOW FULL TABLES FROM dpproxy LIKE 'p%'":                                           "[Tables_in_dpproxy (p%) Table_type] [[pums BASE TABLE]]",
		"SHOW TABLES":                                                                       "[Tables_in_dpproxy] [[pums]]",
		"SHOW FULL TABLES WHERE Table_type = 'BASE TABLE'":                                  "[Tables_in_dpproxy Table_type] [[pums BASE TABLE]]",
		"SHOW TABLES WHERE Tables_in_dpproxy = 'pums'":                                      "[Tables_in_dpproxy] [[pums]]",
		"SHOW FULL TABLES FROM information_schema LIKE 'collation%'":                        "[Tables_in_information_schema (collation%) Table_type] [[COLLATIONS SYSTEM VIEW] [COLLATION_CHARACTER_SET_APPLICABILITY SYSTEM VIEW]]",
		"SHOW TABLES FROM information_schema WHERE Tables_in_information_schema = 'TABLES'": "[Tables_in_information_schema] [[TABLES]]",
	} {
		r := run(t, s, sql)
		var names []string
		for _, c := range r.Typed {
			names = append(names, c.Name)
		}
		if got := fmt.Sprint(names, " ", r.Rows); got != fmt.Sprint(strings.SplitN(want, "] ", 2)[0]+"]", " ", strings.SplitN(want, "] ", 2)[1]) {
			t.Errorf("%s: %s, want %s", sql, got, want)
		}
		if c := r.Typed[0]; c.Type != 253 || c.Flags&1 == 0 || c.Length != 192 {
			t.Errorf("%s: first column %+v, want VARCHAR(64) NOT NULL as MariaDB", sql, c)
		}
	}
	if _, err := s.Execute(context.Background(), "SHOW TABLES FROM nodb LIKE 'p%'"); err == nil || !strings.Contains(err.Error(), "Unknown database 'nodb'") {
		t.Errorf("SHOW TABLES FROM nodb LIKE: %v, want 1049", err)
	}
}

// TestShowIndexAsMariaDB: SHOW INDEX (KEYS, INDEXES) of a configured
// table answers MariaDB 10.11's 14 columns (go-mysql-server's had MySQL
// 8's Visible and Expression for Ignored), names and texts VARCHAR where
// MariaDB's are (they were all LONGTEXT), NOT NULL where MariaDB's are,
// and no row: a configured table has no index.
func TestShowIndexAsMariaDB(t *testing.T) {
	s := newTestSession(t)
	for _, sql := range []string{"SHOW INDEX FROM pums", "SHOW KEYS FROM dpproxy.pums", "SHOW INDEXES FROM pums WHERE Key_name = 'PRIMARY'"} {
		r := run(t, s, sql)
		var got []string
		for _, c := range r.Typed {
			null := ""
			if c.Flags&1 == 0 {
				null = "?"
			}
			got = append(got, fmt.Sprintf("%s:%d%s", c.Name, c.Type, null))
		}
		want := "[Table:253 Non_unique:3 Key_name:253 Seq_in_index:3 Column_name:253 Collation:253? Cardinality:8? Sub_part:8? " +
			"Packed:254? Null:253 Index_type:253 Comment:253? Index_comment:253 Ignored:252]"
		if fmt.Sprint(got) != want || len(r.Rows) != 0 {
			t.Errorf("%s:\n%v %v\nwant %s and no row", sql, got, r.Rows, want)
		}
	}
}
