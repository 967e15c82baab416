package proxy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/demo"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// newTestSession returns a session of the demo user over the demo catalog
// with a real SQLite ledger and no backend: the statements tested here
// never read data.
func newTestSession(t *testing.T) *Session {
	t.Helper()
	cfg, err := demo.Config("unused", "unused")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ledger, err := budget.Open(ctx, testdb.SQLite(t), budget.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	if err := ledger.SetLimit(ctx, catalog.UserAccount(demo.User), budget.Cost{Epsilon: 100, Delta: 1e-3}); err != nil {
		t.Fatal(err)
	}
	e, err := NewEngine(cfg, nil, ledger, nil)
	if err != nil {
		t.Fatal(err)
	}
	return e.Open(demo.User, 7)
}

func run(t *testing.T, s *Session, sql string) *Result {
	t.Helper()
	r, err := s.Execute(context.Background(), sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return r
}

func wantKind(t *testing.T, s *Session, sql string, kind dperr.Kind) {
	t.Helper()
	_, err := s.Execute(context.Background(), sql)
	var e *dperr.Error
	if !errors.As(err, &e) || e.Kind != kind {
		t.Errorf("%s: got %v, want a %s error", sql, err, kind)
	}
}

func TestSettings(t *testing.T) {
	s := newTestSession(t)
	if got := run(t, s, "SELECT @dp_epsilon, @dp_delta, @dp_mechanism").Rows[0]; fmt.Sprint(got) != "[0.1 1e-07 auto]" {
		t.Errorf("defaults: got %v", got)
	}
	run(t, s, "SET @dp_epsilon = 0.5, @dp_mechanism = 'laplace', @other = 'x'")
	if got := run(t, s, "SELECT @dp_epsilon, @dp_mechanism, @other").Rows[0]; fmt.Sprint(got) != "[0.5 laplace x]" {
		t.Errorf("after SET: got %v", got)
	}
	// A bad assignment changes nothing, not even the good ones before it.
	wantKind(t, s, "SET @dp_epsilon = 2, @dp_delta = -1", dperr.InvalidValue)
	wantKind(t, s, "SET @dp_epsilon = 11", dperr.InvalidValue)   // above max_epsilon 10
	wantKind(t, s, "SET @dp_delta = 5e-324", dperr.InvalidValue) // below 2^-1000: its shares would underflow
	run(t, s, "SET @dp_delta = 1e-300")
	run(t, s, "SET @dp_delta = NULL")
	wantKind(t, s, "SET @dp_epsilon = 'high'", dperr.InvalidValue)
	wantKind(t, s, "SET @dp_mechanism = 'nosuch'", dperr.InvalidValue)
	wantKind(t, s, "SET @dp_epsilom = 1", dperr.InvalidValue) // a typo is not silently kept
	if got := run(t, s, "SELECT @dp_epsilon").Rows[0][0]; got != 0.5 {
		t.Errorf("after refused SETs: @dp_epsilon = %v, want 0.5", got)
	}
	// NULL unsets them, as it unsets a MySQL user variable: the defaults.
	run(t, s, "SET @dp_epsilon = NULL, @dp_mechanism = NULL")
	if got := run(t, s, "SELECT @dp_epsilon, @dp_mechanism").Rows[0]; fmt.Sprint(got) != "[0.1 auto]" {
		t.Errorf("after SET … = NULL: got %v, want the defaults", got)
	}
	// System variables and SET NAMES are accepted and ignored.
	run(t, s, "SET NAMES utf8mb4")
	run(t, s, "SET autocommit = 1, sql_mode = 'STRICT_TRANS_TABLES'")
}

func TestWarningsDescribeTheLastStatement(t *testing.T) {
	s := newTestSession(t)
	wantKind(t, s, "SELECT * FROM pums", dperr.Unsupported)
	w := run(t, s, "SHOW WARNINGS")
	if len(w.Rows) != 1 || w.Rows[0][0] != "Error" || w.Rows[0][1] != int64(1235) {
		t.Errorf("SHOW WARNINGS after a refusal: got %v", w.Rows)
	}
	if again := run(t, s, "SHOW WARNINGS"); len(again.Rows) != 1 {
		t.Errorf("SHOW WARNINGS cleared the warnings")
	}
	if e := run(t, s, "SHOW ERRORS LIMIT 0"); len(e.Rows) != 0 {
		t.Errorf("LIMIT 0: got %v", e.Rows)
	}
	run(t, s, "SELECT 1")
	if w := run(t, s, "SHOW WARNINGS"); len(w.Rows) != 0 {
		t.Errorf("after a clean statement: got %v", w.Rows)
	}
}

// @@warning_count and @@error_count count the previous statement's
// conditions, as SHOW WARNINGS lists them, SHOW COUNT(*) WARNINGS and
// SHOW COUNT(*) ERRORS too (which keep them); a statement that reads them
// then has its own (none). They were refused as unknown system
// variables (1235), and so was SHOW COUNT(*). An unknown variable is
// MySQL's 1193 (HY000).
func TestWarningAndErrorCounts(t *testing.T) {
	s := newTestSession(t)
	rows := func(sql string) string { return fmt.Sprint(run(t, s, sql).Rows) }
	run(t, s, "SELECT 1/0, 2/0")
	if got := rows("SELECT @@warning_count, @@error_count"); got != "[[2 0]]" {
		t.Errorf("after two warnings: got %s", got)
	}
	if got := rows("SELECT @@warning_count"); got != "[[0]]" {
		t.Errorf("after SELECT @@warning_count: got %s", got)
	}
	wantKind(t, s, "SELECT * FROM pums", dperr.Unsupported)
	for _, q := range []string{"SHOW COUNT(*) WARNINGS", "SHOW COUNT(*) ERRORS", "SHOW COUNT(*) WARNINGS"} {
		if got := rows(q); got != "[[1]]" {
			t.Errorf("%s after a refusal: got %s", q, got)
		}
	}
	if got := run(t, s, "SHOW COUNT(*) ERRORS").Columns; fmt.Sprint(got) != "[@@session.error_count]" {
		t.Errorf("SHOW COUNT(*) ERRORS: columns %v", got)
	}
	// Beside a dpproxy setting, the variable is evaluated alone.
	if got := rows("SELECT @@error_count, @@session.warning_count, @dp_epsilon"); got != "[[1 1 0.1]]" {
		t.Errorf("after a refusal: got %s", got)
	}
	if got := rows("SHOW COUNT(*) WARNINGS"); got != "[[0]]" {
		t.Errorf("after a clean statement: got %s", got)
	}
	wantKind(t, s, "SELECT @@nosuch", dperr.UnknownVariable)
	wantKind(t, s, "SELECT @@nosuch, @dp_epsilon", dperr.UnknownVariable)
	wantKind(t, s, "SET @@nosuch = 1", dperr.UnknownVariable)
	if code, state := dperr.UnknownVariable.Code(); code != 1193 || state != "HY000" {
		t.Errorf("unknown variable: %d (%s), want 1193 (HY000)", code, state)
	}
}

// A statement the wire layer refused before the session saw it (1300,
// text that is not UTF-8) replaces what SHOW WARNINGS lists, as in
// MariaDB: its error alone, at level Error, counted by @@warning_count
// and @@error_count. SHOW WARNINGS listed the previous statement's.
func TestRefusedByWire(t *testing.T) {
	s := newTestSession(t)
	rows := func(sql string) string { return fmt.Sprint(run(t, s, sql).Rows) }
	run(t, s, "SELECT 1/0, 2/0")
	const message = `Invalid utf8mb4 character string: 'caf\xE9'`
	s.Refused(1300, message)
	if got, want := rows("SHOW WARNINGS"), "[[Error 1300 "+message+"]]"; got != want {
		t.Errorf("SHOW WARNINGS after a refusal: %s, want %s", got, want)
	}
	if got := rows("SHOW ERRORS"); got != "[[Error 1300 "+message+"]]" {
		t.Errorf("SHOW ERRORS after a refusal: %s", got)
	}
	if got := rows("SELECT @@warning_count, @@error_count"); got != "[[1 1]]" {
		t.Errorf("@@warning_count, @@error_count after a refusal: %s, want [[1 1]]", got)
	}
}

func TestCatalogAndBootstrapStatements(t *testing.T) {
	s := newTestSession(t)
	for _, tc := range []struct{ sql, want string }{
		{"SHOW DATABASES", "[[dpproxy] [information_schema]]"},
		{"SHOW TABLES FROM dpproxy", "[[pums]]"},
		{"SHOW COLUMNS FROM pums LIKE 'a%'", "[[age bigint YES  <nil> ]]"},
		{"SHOW FULL COLUMNS FROM pums LIKE 'a%'", "[[age bigint <nil> YES  <nil>  select bounds [0, 100]]]"},
		{"SELECT COLUMN_NAME, DATA_TYPE, COLUMN_COMMENT FROM information_schema.COLUMNS WHERE TABLE_NAME = 'pums' AND COLUMN_NAME LIKE 'in%'", "[[income double bounds [0, 500000]]]"},
		{"SELECT * FROM pums WHERE 1 = 0", "[]"},
		{"SELECT age, sex FROM pums LIMIT 0", "[]"},
		{"SELECT @@version_comment LIMIT 1", "[[" + VersionComment + "]]"},
		{"SELECT DATABASE(), USER()", "[[dpproxy demo@%]]"},
		{"SELECT dp_remaining_epsilon(), dp_remaining_delta()", "[[100 0.001]]"},
		{"SELECT 1, 'x', NULL", "[[1 x <nil>]]"},
	} {
		if got := fmt.Sprint(run(t, s, tc.sql).Rows); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.sql, got, tc.want)
		}
	}
	run(t, s, "USE dpproxy")
	if got := fmt.Sprint(run(t, s, "SELECT DATABASE()").Rows); got != "[[dpproxy]]" {
		t.Errorf("after USE: %s", got)
	}
	wantKind(t, s, "USE other", dperr.UnknownDatabase)
	wantKind(t, s, "SHOW COLUMNS FROM nosuch", dperr.UnknownTable)
}

// bootstrapStatements are the SHOW and FROM-less statements that clients
// and connectors send (mariadb, mysql, go-sql-driver, JDBC, DBeaver), each
// answered by the session without the backend.
var bootstrapStatements = []string{
	"SHOW VARIABLES", "SHOW GLOBAL VARIABLES", "SHOW SESSION VARIABLES", "SHOW VARIABLES LIKE 'max%'",
	"SHOW STATUS", "SHOW GLOBAL STATUS", "SHOW SESSION STATUS LIKE 'Q%'",
	"SHOW DATABASES", "SHOW SCHEMAS", "SHOW TABLES", "SHOW FULL TABLES", "SHOW TABLES FROM dpproxy LIKE 'p%'",
	"SHOW COLUMNS FROM pums", "SHOW FULL COLUMNS FROM pums", "DESCRIBE pums", "DESC pums age",
	"SHOW WARNINGS", "SHOW ERRORS", "SHOW WARNINGS LIMIT 1",
	"SHOW ENGINES", "SHOW CHARSET", "SHOW COLLATION", "SHOW PLUGINS", "SHOW TABLE STATUS",
	"SHOW INDEX FROM pums", "SHOW TRIGGERS", "SHOW PROCEDURE STATUS", "SHOW FUNCTION STATUS",
	"SHOW EVENTS", "SHOW OPEN TABLES", "SHOW PROCESSLIST", "SHOW PRIVILEGES", "SHOW PROFILES",
	"select @@version_comment limit 1", "SELECT DATABASE(), USER() limit 1", "SELECT @@max_allowed_packet",
	"SELECT @@session.auto_increment_increment AS auto_increment_increment, @@character_set_client AS character_set_client, " +
		"@@character_set_connection AS character_set_connection, @@character_set_results AS character_set_results, " +
		"@@character_set_server AS character_set_server, @@collation_server AS collation_server, @@init_connect AS init_connect, " +
		"@@interactive_timeout AS interactive_timeout, @@license AS license, @@lower_case_table_names AS lower_case_table_names, " +
		"@@max_allowed_packet AS max_allowed_packet, @@net_write_timeout AS net_write_timeout, @@performance_schema AS performance_schema, " +
		"@@query_cache_size AS query_cache_size, @@query_cache_type AS query_cache_type, @@sql_mode AS sql_mode, " +
		"@@system_time_zone AS system_time_zone, @@time_zone AS time_zone, @@transaction_isolation AS transaction_isolation, " +
		"@@wait_timeout AS wait_timeout",
	"SELECT @@tx_read_only, @@transaction_read_only, @@autocommit, @@sql_select_limit",
	"SELECT VERSION(), CONNECTION_ID(), NOW(), LAST_INSERT_ID()",
	"SELECT dp_remaining_epsilon(), dp_remaining_delta(), @dp_epsilon, @dp_delta, @dp_mechanism, @dp_trim",
	"EXPLAIN SELECT COUNT(*), AVG(age) FROM pums",
}

// TestBootstrapResultsAreWellTyped: every bootstrap and SHOW statement
// answers a result whose columns each hold one type, as package wire
// requires. SHOW [GLOBAL] VARIABLES mixed int64 and string in its Value
// column and failed with 1105 before results were built from typed columns.
func TestBootstrapResultsAreWellTyped(t *testing.T) {
	s := newTestSession(t)
	for _, sql := range bootstrapStatements {
		r, err := s.Execute(context.Background(), sql)
		if err != nil {
			t.Errorf("%s: %v (cause %v)", sql, err, errors.Unwrap(err))
			continue
		}
		if err := checkResult(r); err != nil {
			t.Errorf("%s: %v", sql, err)
		}
	}
	// SHOW VARIABLES lists max_allowed_packet as configured, as text.
	r := run(t, s, "SHOW VARIABLES LIKE 'max_allowed_packet'")
	if got := fmt.Sprint(r.Rows); got != "[[max_allowed_packet 4194304]]" {
		t.Errorf("SHOW VARIABLES LIKE 'max_allowed_packet': got %s", got)
	}
}

// TestTypedTable: a value of the wrong type for its column is an internal
// error when the result is built, and checkResult catches a mixed column.
func TestTypedTable(t *testing.T) {
	tb := newTable(Text("name"), Int("n"))
	tb.row("a", int64(1))
	tb.row("b", nil)
	if _, err := tb.result(); err != nil {
		t.Fatal(err)
	}
	tb.row("c", "2")
	if _, err := tb.result(); dperr.KindOf(err) != dperr.Internal {
		t.Errorf("a string in an Int column: got %v, want an internal error", err)
	}
	mixed := &Result{Columns: []string{"Value"}, Rows: [][]any{{int64(1)}, {"x"}}}
	if err := checkResult(mixed); dperr.KindOf(err) != dperr.Internal {
		t.Errorf("mixed column: got %v, want an internal error", err)
	}
}

// TestLongLiteralsDoNotPanic: a numeric literal the TiDB parser cannot
// hold, in a query, a SET or a statement built from prepared arguments,
// is a parse error, and the session keeps working. Before the fix the
// parser panicked and the connection died.
func TestLongLiteralsDoNotPanic(t *testing.T) {
	s := newTestSession(t)
	long := strings.Repeat("9", 82)
	for _, sql := range []string{
		"SELECT " + long, "SET @dp_epsilon = 0." + strings.Repeat("1", 80), "SELECT AVG(age) FROM pums WHERE age < " + long,
	} {
		wantKind(t, s, sql, dperr.Parse)
	}
	run(t, s, "SELECT 1")
}

func TestSQLLevelPrepareAndExecute(t *testing.T) {
	s := newTestSession(t)
	run(t, s, "PREPARE s FROM 'SELECT ? + 1 AS n, CONCAT(?, ''?'') AS t'")
	run(t, s, "SET @a = 41, @b = 'it''s'")
	if got := fmt.Sprint(run(t, s, "EXECUTE s USING @a, @b").Rows); got != "[[42 it's?]]" {
		t.Errorf("EXECUTE: got %s", got)
	}
	wantKind(t, s, "EXECUTE s USING @a", dperr.WrongArguments) // one variable for two markers
	run(t, s, "SET @q = 'SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_NAME = ?'")
	run(t, s, "PREPARE t FROM @q")
	run(t, s, "SET @name = 'pums'")
	if got := fmt.Sprint(run(t, s, "EXECUTE t USING @name").Rows); got != "[[pums]]" {
		t.Errorf("EXECUTE t: got %s", got)
	}
	run(t, s, "DEALLOCATE PREPARE s")
	wantKind(t, s, "EXECUTE s USING @a, @b", dperr.UnknownStatement)
	run(t, s, "PREPARE r FROM 'EXECUTE r'")
	wantKind(t, s, "EXECUTE r", dperr.Unsupported)
}

// TestUnknownPreparedStatement: EXECUTE and DEALLOCATE PREPARE of a name
// the session has not prepared answer as MariaDB 10.11 does, 1243 (HY000)
// "Unknown prepared statement handler (s) given to EXECUTE" (resp.
// DEALLOCATE PREPARE), the code of a COM_STMT_EXECUTE of an unknown id.
// Before, both were 1231 (42000), an invalid setting.
func TestUnknownPreparedStatement(t *testing.T) {
	s := newTestSession(t)
	for sql, want := range map[string]string{
		"EXECUTE s":            "Unknown prepared statement handler (s) given to EXECUTE",
		"DEALLOCATE PREPARE s": "Unknown prepared statement handler (s) given to DEALLOCATE PREPARE",
		"DROP PREPARE s":       "Unknown prepared statement handler (s) given to DEALLOCATE PREPARE",
	} {
		_, err := s.Execute(context.Background(), sql)
		var e *dperr.Error
		if !errors.As(err, &e) {
			t.Fatalf("%s: got %v, want a dperr error", sql, err)
		}
		if code, state := e.SQLCode(); code != 1243 || state != "HY000" || e.Msg != want {
			t.Errorf("%s: got %d (%s) %q, want 1243 (HY000) %q", sql, code, state, e.Msg, want)
		}
	}
}

// TestExecuteArgumentCount: EXECUTE with fewer USING variables than the
// statement has markers (none at all included) or more answers as MariaDB
// 10.11 does, 1210 (HY000) "Incorrect arguments to EXECUTE", before
// anything is charged. Before, both were 1235 (42000), as unsupported.
func TestExecuteArgumentCount(t *testing.T) {
	s := newTestSession(t)
	run(t, s, "PREPARE s FROM 'SELECT SUM(income) FROM pums WHERE age > ?'")
	run(t, s, "SET @a = 30, @b = 40")
	before := run(t, s, "SELECT dp_remaining_epsilon()").Rows
	for _, sql := range []string{"EXECUTE s", "EXECUTE s USING @a, @b"} {
		_, err := s.Execute(context.Background(), sql)
		var e *dperr.Error
		if !errors.As(err, &e) {
			t.Fatalf("%s: got %v, want a dperr error", sql, err)
		}
		if code, state := e.SQLCode(); code != 1210 || state != "HY000" || e.Msg != "Incorrect arguments to EXECUTE" {
			t.Errorf("%s: got %d (%s) %q, want 1210 (HY000) \"Incorrect arguments to EXECUTE\"", sql, code, state, e.Msg)
		}
	}
	if after := run(t, s, "SELECT dp_remaining_epsilon()").Rows; fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("remaining epsilon went from %v to %v", before, after)
	}
}

// TestSQLLevelPrepareLimits: a session keeps at most 1024 SQL-level
// prepared statements (1461) and 16 MiB of their texts (1153), as the
// protocol's prepared statements; replacing or deallocating one gives its
// room back. Before the fix PREPARE had no limit: 5,000 statements, or
// 4 MiB texts until the proxy ran out of memory.
func TestSQLLevelPrepareLimits(t *testing.T) {
	s := newTestSession(t)
	for i := range maxPreparedStatements {
		run(t, s, fmt.Sprintf("PREPARE s%d FROM 'SELECT 1'", i))
	}
	wantKind(t, s, "PREPARE one_more FROM 'SELECT 1'", dperr.TooManyPrepared)
	run(t, s, "PREPARE s0 FROM 'SELECT 2'") // replacing one is fine
	run(t, s, "DEALLOCATE PREPARE s1")
	run(t, s, "PREPARE one_more FROM 'SELECT 1'")
	if code, state := dperr.TooManyPrepared.Code(); code != 1461 || state != "42000" {
		t.Errorf("TooManyPrepared is %d/%s, want 1461/42000", code, state)
	}
	for i := range maxPreparedStatements {
		if i != 1 {
			run(t, s, fmt.Sprintf("DEALLOCATE PREPARE s%d", i))
		}
	}
	run(t, s, "DEALLOCATE PREPARE one_more")

	big := "SELECT 1 /*" + strings.Repeat("x", 4<<20-len("SELECT 1 /**/")) + "*/" // 4 MiB
	for i := range 4 {
		run(t, s, fmt.Sprintf("PREPARE b%d FROM '%s'", i, big))
	}
	wantKind(t, s, "PREPARE b4 FROM '"+big+"'", dperr.TooLarge)
	run(t, s, "PREPARE b0 FROM '"+big+"'") // replacing: still 16 MiB
	run(t, s, "DEALLOCATE PREPARE b3")
	run(t, s, "PREPARE b4 FROM '"+big+"'")
	wantKind(t, s, "PREPARE b5 FROM 'SELECT 1'", dperr.TooLarge)
	if code, _ := dperr.TooLarge.Code(); code != 1153 {
		t.Errorf("TooLarge is %d, want 1153", code)
	}
}

// TestExecuteUsingNULIsRefusedUncharged: EXECUTE ... USING a variable that
// holds a NUL byte (or bytes that are not UTF-8) binds it into the text as
// a literal; the statement is refused at parse (1235), before any
// reservation, and the budget does not move. (The session has no backend:
// a statement that got past the parser would fail after reserving.)
func TestExecuteUsingNULIsRefusedUncharged(t *testing.T) {
	cfg, err := demo.Config("unused", "unused")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tables[0].Columns = append(cfg.Tables[0].Columns, catalog.Column{Name: "name", Source: "name", Type: catalog.Text})
	ctx := context.Background()
	ledger, err := budget.Open(ctx, testdb.SQLite(t), budget.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	if err := ledger.SetLimit(ctx, catalog.UserAccount(demo.User), budget.Cost{Epsilon: 100, Delta: 1e-3}); err != nil {
		t.Fatal(err)
	}
	e, err := NewEngine(cfg, nil, ledger, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := e.Open(demo.User, 7)
	run(t, s, "PREPARE q FROM 'SELECT COUNT(*) FROM pums WHERE name = ?'")
	run(t, s, `SET @nul = 'a\0b', @latin1 = X'43ff41'`)
	for _, v := range []string{"@nul", "@latin1"} {
		wantKind(t, s, "EXECUTE q USING "+v, dperr.Unsupported)
	}
	if got := fmt.Sprint(run(t, s, "SELECT dp_remaining_epsilon(), dp_remaining_delta()").Rows); got != "[[100 0.001]]" {
		t.Errorf("after the refusals: remaining %s, want [[100 0.001]]", got)
	}
}

// TestConnectionLimitVariables: @@max_connections and
// @@max_user_connections report the limits wire enforces, a user's own
// max_user_connections as its session value (they were MySQL's defaults,
// 151 and 0, whatever the configuration; found by an independent review).
func TestConnectionLimitVariables(t *testing.T) {
	cfg, err := demo.Config("unused", "unused")
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConnections, cfg.MaxUserConnections = 40, 10
	u, _ := cfg.User(demo.SHA2User)
	u.MaxUserConnections = 3
	ledger, err := budget.Open(context.Background(), testdb.SQLite(t), budget.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEngine(cfg, nil, ledger, nil)
	if err != nil {
		t.Fatal(err)
	}
	for user, want := range map[string]string{demo.User: "[[40 10 10]]", demo.SHA2User: "[[40 3 10]]"} {
		s := e.Open(user, 1)
		got := fmt.Sprint(run(t, s, "SELECT @@max_connections, @@max_user_connections, @@global.max_user_connections").Rows)
		if got != want {
			t.Errorf("%s: got %s, want %s", user, got, want)
		}
		s.Close()
	}
}

// TestShowGrantsForAnotherUser: SHOW GRANTS, FOR CURRENT_USER() and FOR
// one's own name show the analyst's grants, the global USAGE and SELECT on
// dpproxy, as MariaDB shows them (DBeaver and Workbench issue them; the
// USAGE row was missing); FOR any other name is refused as MySQL refuses it without SELECT on
// the mysql database (1044), whether or not the user exists. Before, it
// answered the analyst's own grants under the other name's question.
func TestShowGrantsForAnotherUser(t *testing.T) {
	s := newTestSession(t)
	want := fmt.Sprintf("[[GRANT USAGE ON *.* TO `%s`@`%%`] [GRANT SELECT ON `%s`.* TO `%s`@`%%`]]", demo.User, Database, demo.User)
	for _, sql := range []string{"SHOW GRANTS", "SHOW GRANTS FOR CURRENT_USER()", "SHOW GRANTS FOR CURRENT_USER",
		"SHOW GRANTS FOR " + demo.User, "SHOW GRANTS FOR '" + demo.User + "'@'%'"} {
		if got := fmt.Sprint(run(t, s, sql).Rows); got != want {
			t.Errorf("%s: got %s, want %s", sql, got, want)
		}
	}
	for _, sql := range []string{"SHOW GRANTS FOR " + demo.SHA2User, "SHOW GRANTS FOR 'nobody'@'%'", "SHOW GRANTS FOR root@localhost"} {
		_, err := s.Execute(context.Background(), sql)
		var e *dperr.Error
		if !errors.As(err, &e) || e.Kind != dperr.DatabaseAccessDenied {
			t.Errorf("%s: got %v, want 1044", sql, err)
			continue
		}
		if code, state := e.Kind.Code(); code != 1044 || state != "42000" || e.Msg != "Access denied for user '"+demo.User+"'@'%' to database 'mysql'" {
			t.Errorf("%s: got %d (%s) %q", sql, code, state, e.Msg)
		}
	}
}

// TestExecuteUsingTypedVariables: EXECUTE ... USING binds a user variable
// as the binary protocol binds an argument of its type, and answers as
// MariaDB 10.11 does. A DOUBLE was bound as a decimal literal (ROUND(2.5)
// was 3 and 0.1 * 3 was 0.3 where MariaDB gives 2 and
// 0.30000000000000004), a DATETIME, TIMESTAMP or TIME bare (1064 near
// "03:04:05 AS a").
func TestExecuteUsingTypedVariables(t *testing.T) {
	s := newTestSession(t)
	run(t, s, "SET @v = 2.5e0, @w = 0.1e0, @big = -1e300, @s = 'NULL', @n = NULL")
	run(t, s, "PREPARE s FROM 'SELECT ROUND(?) AS r, ? * 3 AS m, ? AS b, ? AS s, ? AS n'")
	if got := fmt.Sprint(run(t, s, "EXECUTE s USING @v, @w, @big, @s, @n").Rows); got != "[[{2 0} 0.30000000000000004 -1e300 NULL <nil>]]" {
		t.Errorf("EXECUTE s: got %s, want [[{2 0} 0.30000000000000004 -1e300 NULL <nil>]] (ROUND 2)", got)
	}
	run(t, s, "PREPARE c FROM 'SELECT ? AS a'")
	for set, want := range map[string]string{
		"SET @t = TIMESTAMP('2020-01-02 03:04:05')":        "2020-01-02 03:04:05",
		"SET @t = TIMESTAMP('2020-01-02 03:04:05.25')":     "2020-01-02 03:04:05.250000",
		"SET @t = TIME('-02:00:00')":                       "-02:00:00",
		"SET @t = CAST('2020-01-02 03:04:05' AS DATETIME)": "2020-01-02 03:04:05",
	} {
		run(t, s, set)
		if got := fmt.Sprint(run(t, s, "EXECUTE c USING @t").Rows); got != "[["+want+"]]" {
			t.Errorf("%s; EXECUTE c USING @t: got %s, want [[%s]]", set, got, want)
		}
	}
	for _, set := range []string{"SET @t = NOW()", "SET @t = UTC_TIMESTAMP()", "SET @t = CURTIME()", "SET @t = CURDATE()"} {
		run(t, s, set)
		run(t, s, "EXECUTE c USING @t")
	}
}

// TestShowWarningsLimitAtMost: SHOW WARNINGS LIMIT 1, 18446744073709551615
// (MySQL's greatest LIMIT) shows what follows the first warning; the end
// of the window overflowed and the statement panicked.
func TestShowWarningsLimitAtMost(t *testing.T) {
	s := newTestSession(t)
	run(t, s, "SELECT 1/0, 2/0")
	all := run(t, s, "SHOW WARNINGS").Rows
	if len(all) < 2 {
		t.Fatalf("SELECT 1/0, 2/0: warnings %v, want two", all)
	}
	if got, want := fmt.Sprint(run(t, s, "SHOW WARNINGS LIMIT 1, 18446744073709551615").Rows), fmt.Sprint(all[1:]); got != want {
		t.Errorf("SHOW WARNINGS LIMIT 1, 18446744073709551615: got %s, want %s", got, want)
	}
}

// TestExecuteUsingLimit: a LIMIT or OFFSET marker of EXECUTE ... USING
// reads its variable as MariaDB 10.11 does: a DOUBLE truncated, a DECIMAL
// rounded half away from zero, a string by its leading integer, NULL as
// 0; a negative value (and a DOUBLE or string from 2^63 up) is 1210.
// DOUBLE and DECIMAL variables were bound as 2.9e+00 and 2.5 (1064),
// strings quoted (1064), negative integers as -1 (1064).
func TestExecuteUsingLimit(t *testing.T) {
	s := newTestSession(t)
	run(t, s, "PREPARE l FROM 'SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_NAME = ''pums'' LIMIT ?'")
	for value, want := range map[string]int{
		"2.9e0": 2, "3.5e0": 3, "-0.5e0": 0, "2.5": 3, "2.4": 2, "-0.4": 0, "'2'": 2, "'2.9'": 2, "'abc'": 0, "' 3x'": 3,
		"NULL": 0, "3": 3, "CAST(1 AS UNSIGNED)": 1, "99999999999999999999": -1, "18446744073709551615": -1,
	} {
		run(t, s, "SET @l = "+value)
		got := len(run(t, s, "EXECUTE l USING @l").Rows)
		if want < 0 {
			want = len(run(t, s, "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_NAME = 'pums'").Rows)
		}
		if got != want {
			t.Errorf("LIMIT @l = %s: %d rows, want %d", value, got, want)
		}
	}
	for _, value := range []string{"-1e0", "9.3e18", "-1.0", "-0.5", "-1", "'-1'", "' -2'", "'9223372036854775808'"} {
		run(t, s, "SET @l = "+value)
		wantKind(t, s, "EXECUTE l USING @l", dperr.WrongArguments)
	}
}

// TestExecuteUsingNegatedMinimum: EXECUTE ... USING a BIGINT variable
// -9223372036854775808 under a unary minus is MariaDB 10.11's 1690
// (22003), before anything is charged; it was bound as
// - -9223372036854775808, answered and charged. A binary minus binds as
// before.
func TestExecuteUsingNegatedMinimum(t *testing.T) {
	s := newTestSession(t)
	run(t, s, "SET @m = -9223372036854775808")
	run(t, s, "PREPARE s FROM 'SELECT COUNT(*) FROM pums WHERE age = -?'")
	before := run(t, s, "SELECT dp_remaining_epsilon()").Rows
	_, err := s.Execute(context.Background(), "EXECUTE s USING @m")
	var e *dperr.Error
	if !errors.As(err, &e) {
		t.Fatalf("EXECUTE s USING @m: got %v, want 1690", err)
	}
	if code, state := e.SQLCode(); code != 1690 || state != "22003" {
		t.Errorf("EXECUTE s USING @m: got %d (%s), want 1690 (22003)", code, state)
	}
	if after := run(t, s, "SELECT dp_remaining_epsilon()").Rows; fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("remaining epsilon went from %v to %v", before, after)
	}
	run(t, s, "PREPARE c FROM 'SELECT ? - 0 AS a'")
	if got := fmt.Sprint(run(t, s, "EXECUTE c USING @m").Rows); got != "[[-9223372036854775808]]" {
		t.Errorf("EXECUTE c USING @m: got %s", got)
	}
}
