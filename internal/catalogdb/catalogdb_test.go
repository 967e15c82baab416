package catalogdb

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

func testEngine(t *testing.T) *Engine {
	t.Helper()
	cat, err := catalog.ParseConfig(strings.NewReader(`
backend: {driver: sqlite, dsn: "file::memory:"}
users: [{name: a, password_hash: "*0000000000000000000000000000000000000000", epsilon: 1}]
tables:
  - name: visits
    columns:
      - {name: age, type: integer, lower: 0, upper: 120}
      - {name: city, type: text}
      - {name: spend, type: real, lower: 0, upper: 1000.5}
`))
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(cat, "dpproxy", Variables{"version_comment": "test"})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func query(t *testing.T, s *Session, q string) *Result {
	t.Helper()
	r, err := s.Query(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return r
}

// The engine holds the configured schema and never a row of it.
func TestConfiguredTablesHaveSchemaAndNoRows(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	s.SetDatabase("dpproxy")
	if r := query(t, s, "SELECT * FROM visits"); len(r.Rows) != 0 || len(r.Columns) != 3 {
		t.Errorf("SELECT * FROM visits: %d columns, rows %v", len(r.Columns), r.Rows)
	}
	if r := query(t, s, "SELECT COUNT(*) FROM visits"); fmt.Sprint(r.Rows) != "[[0]]" {
		t.Errorf("COUNT(*): %v", r.Rows)
	}
	r := query(t, s, "SELECT COLUMN_NAME, DATA_TYPE, COLUMN_COMMENT FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'dpproxy' ORDER BY ORDINAL_POSITION")
	if got := fmt.Sprint(r.Rows); got != "[[age bigint bounds [0, 120]] [city text ] [spend double bounds [0, 1000.5]]]" {
		t.Errorf("information_schema.COLUMNS: %s", got)
	}
	if r.Columns[0].Type != 253 || r.Columns[0].Charset == binaryCharset {
		t.Errorf("COLUMN_NAME column: %+v", r.Columns[0])
	}
}

// SET keeps session values, per session.
func TestSessionVariables(t *testing.T) {
	e := testEngine(t)
	s1, s2 := e.Open("a", 1, nil), e.Open("a", 2, nil)
	query(t, s1, "set autocommit=1, sql_mode = concat(@@sql_mode,',NO_ZERO_DATE'), @x = 'one'")
	if got := fmt.Sprint(query(t, s1, "SELECT @@sql_mode LIKE '%NO_ZERO_DATE%', @x, @@version_comment").Rows); got != "[[1 one test]]" {
		t.Errorf("session 1: %s", got)
	}
	if got := fmt.Sprint(query(t, s2, "SELECT @@sql_mode LIKE '%NO_ZERO_DATE%', @x").Rows); got != "[[0 <nil>]]" {
		t.Errorf("session 2 sees session 1's values: %s", got)
	}
	// ANSI_QUOTES (alone or in ANSI) would make "..." an identifier to
	// the engine while the checks read a string: refused, the mode kept.
	for _, set := range []string{"SET sql_mode = 'ANSI_QUOTES'", "SET sql_mode = concat(@@sql_mode, ',ANSI')"} {
		var ce *Error
		if _, err := s1.Query(context.Background(), set); !errors.As(err, &ce) || ce.Code != 1231 {
			t.Errorf("%s: %v, want 1231", set, err)
		}
	}
	if got := fmt.Sprint(query(t, s1, "SELECT @@sql_mode LIKE '%NO_ZERO_DATE%', @@sql_mode LIKE '%ANSI%'").Rows); got != "[[1 0]]" {
		t.Errorf("after the refused SETs: %s, want the mode as it was", got)
	}
	// Modes and a div_precision_increment that change what
	// post-processing computes are refused too, the settings kept; the
	// modes clients set at connect are taken.
	for _, set := range []string{
		"SET sql_mode = 'PIPES_AS_CONCAT'", "SET sql_mode = concat(@@sql_mode, ',HIGH_NOT_PRECEDENCE')",
		"SET sql_mode = 'NO_UNSIGNED_SUBTRACTION,STRICT_TRANS_TABLES'", "SET div_precision_increment = 8",
		"SET @@session.div_precision_increment = 0, sql_mode = ''",
		"SET sql_mode = 'NO_BACKSLASH_ESCAPES'",
	} {
		var ce *Error
		if _, err := s1.Query(context.Background(), set); !errors.As(err, &ce) || ce.Code != 1231 {
			t.Errorf("%s: %v, want 1231", set, err)
		}
	}
	if got := fmt.Sprint(query(t, s1, "SELECT @@sql_mode LIKE '%NO_ZERO_DATE%', @@sql_mode LIKE '%PIPES%' OR @@sql_mode LIKE '%NOT%' OR @@sql_mode LIKE '%UNSIGNED%', @@div_precision_increment").Rows); got != "[[1 0 4]]" {
		t.Errorf("after the refused SETs: %s, want the mode as it was", got)
	}
	for _, set := range []string{
		"SET sql_mode = 'ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'",
		"SET sql_mode = 'TRADITIONAL'", "SET div_precision_increment = 4",
	} {
		query(t, s1, set)
	}
	// A SET that fails after assigning the mode leaves no ANSI_QUOTES
	// behind either.
	if _, err := s1.Query(context.Background(), "SET sql_mode = 'ANSI_QUOTES', secure_file_priv = ''"); err == nil {
		t.Error("a SET of a read-only variable succeeded")
	}
	if got := fmt.Sprint(query(t, s1, "SELECT @@sql_mode LIKE '%ANSI%', REPEAT('x', 3)").Rows); got != "[[0 xxx]]" {
		t.Errorf("after a failed SET with ANSI_QUOTES: %s", got)
	}
}

// TestCommentsReadAsTheChecksRead: the engine gets the text as the
// checks (TiDB's parser) read it: "--" without white space after it is
// two minus signs, not a comment (go-mysql-server's reading ran the rest
// of the line as code), comments are blanks, and executable comments and
// hints are refused.
func TestCommentsReadAsTheChecksRead(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	for _, c := range []struct{ query, want string }{
		{"SELECT 1 --'\n, 2 -- '", "[[1]]"},
		{"SELECT 1 ---'\n 1 AS x, 2 AS s #'", "[[1]]"},
		{"SELECT 5 --2", "[[7]]"},
		{"/* a driver's comment */ SELECT 'a''--b', \"c\\\"#\" # trailing\n", "[[a'--b c\"#]]"},
		{"SELECT `x``--y` FROM (SELECT 3 AS `x``--y`) t -- end", "[[3]]"},
		{"SELECT @`plain_1`, @`plain_1` IS NULL", "[[<nil> 1]]"},
		{"SELECT LENGTH(GROUP_CONCAT(COLUMN_NAME)) > 0, LENGTH(CAST('a' AS BINARY(3))) FROM information_schema.COLUMNS", "[[1 3]]"},
	} {
		r, err := s.Query(context.Background(), c.query)
		if err != nil {
			t.Errorf("%q: %v", c.query, err)
			continue
		}
		if got := fmt.Sprint(r.Rows); got != c.want {
			t.Errorf("%q: %s, want %s", c.query, got, c.want)
		}
	}
	for _, q := range []string{"SELECT 1 /*!, 2 */", "SELECT 1 /*T![x] , '*/, 2 -- ' */", "SELECT /*+ MAX_EXECUTION_TIME(1) */ 1", "SELECT 1 /* open",
		"SELECT @`a, 2 AS s, @`c", "SET @`a = 1, GLOBAL max_connections = 7, @` = 1", "SELECT @@`version`",
		// The backstop, on the engine's own parse.
		"SELECT SLEEP(0)", "SELECT GET_LOCK('k', 0)", "EXPLAIN SELECT 1 FROM information_schema.TABLES WHERE SLEEP(0) = 0",
		"PREPARE p FROM 'SELECT SLEEP(0)'", "EXECUTE p", "SET GLOBAL max_connections = 7", "SET @@global.sql_mode = ''",
		"SELECT REPEAT('x', 2000000)", "SELECT LPAD('x', @n, 'y')", "SELECT LENGTH(SPACE(1 + 1))",
		"SELECT LENGTH(REPLACE(REPEAT('a', 1048576), 'a', REPEAT('b', 1048576)))",
		"SELECT LENGTH(CAST('a' AS BINARY(20000000)))", "SELECT LENGTH(CONVERT('a', CHAR(20000000)))",
		"SELECT LENGTH(GROUP_CONCAT(REPEAT('x', 1048576))) FROM information_schema.COLUMNS",
		"SELECT LENGTH(JSON_ARRAYAGG(REPEAT('x', 1048576))) FROM information_schema.COLUMNS"} {
		var ce *Error
		if _, err := s.Query(context.Background(), q); !errors.As(err, &ce) || ce.Code != 1235 {
			t.Errorf("%q: %v, want 1235", q, err)
		}
	}
}

// Writes and unknown tables are errors; a zero-row aggregate answers.
func TestReadOnlyAndErrors(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	s.SetDatabase("dpproxy")
	var ce *Error
	if _, err := s.Query(context.Background(), "INSERT INTO visits VALUES (1, 'x', 2)"); !errors.As(err, &ce) {
		t.Errorf("INSERT: %v", err)
	}
	// go-mysql-server panics closing this; the answer (no row) stands.
	if r, err := s.Query(context.Background(), "SELECT COUNT(*) FROM visits LIMIT 0"); err != nil || len(r.Rows) != 0 || len(r.Columns) != 1 {
		t.Errorf("COUNT(*) ... LIMIT 0: %v, %v", r, err)
	}
	if _, err := s.Query(context.Background(), "SELECT * FROM nosuch"); !errors.As(err, &ce) || ce.Code != 1146 {
		t.Errorf("unknown table: %v", err)
	}
	// A zero-row probe naming a column the table does not declare.
	if _, err := s.Query(context.Background(), "SELECT COUNT(*) FROM visits WHERE nosuch = NULL"); !errors.As(err, &ce) || ce.Code != 1054 || ce.State != "42S22" {
		t.Errorf("unknown column: %v", err)
	}
}

// TIMEDIFF(NOW(), UTC_TIMESTAMP()) is the server's zone offset, whole minutes.
func TestTimeZoneProbe(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	r := query(t, s, "SELECT TIMEDIFF(NOW(), UTC_TIMESTAMP())")
	got, _ := r.Rows[0][0].(string)
	if !regexp.MustCompile(`^-?\d\d:\d\d:00$`).MatchString(got) || r.Columns[0].Type != 11 {
		t.Errorf("TIMEDIFF(NOW(), UTC_TIMESTAMP()) = %q (type %d), want an offset of type TIME", got, r.Columns[0].Type)
	}
}

// Sessions of one engine run concurrently (go test -race checks the sharing).
func TestConcurrentSessions(t *testing.T) {
	e := testEngine(t)
	done := make(chan error)
	for i := range 8 {
		go func() {
			s := e.Open("a", uint32(i), nil)
			s.SetDatabase("dpproxy")
			for range 20 {
				if _, err := s.Query(context.Background(), fmt.Sprintf("SET @x = %d", i)); err != nil {
					done <- err
					return
				}
				r, err := s.Query(context.Background(), "SELECT @x, COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_NAME = 'visits'")
				if err != nil {
					done <- err
					return
				}
				if got := fmt.Sprint(r.Rows); got != fmt.Sprintf("[[%d 3]]", i) {
					done <- fmt.Errorf("session %d: %s", i, got)
					return
				}
			}
			done <- nil
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// TestCrossJoinsAreBounded: a statement over the catalog fails, instead of
// growing the proxy, once its sorts hold more than maxCachedRows rows or
// its result passes maxResultRows; statements of catalog size answer.
func TestCrossJoinsAreBounded(t *testing.T) {
	s := testEngine(t).Open("alice", 1, nil)
	ctx := context.Background()
	var n int
	r, err := s.Query(ctx, "SELECT COUNT(*) FROM information_schema.COLUMNS")
	if err != nil || len(r.Rows) != 1 {
		t.Fatalf("count: %v %v", r, err)
	}
	if _, err := fmt.Sscan(r.Rows[0][0].(string), &n); err != nil || n < 100 {
		t.Fatalf("information_schema.COLUMNS holds %v rows (%v); the joins below need over 100", r.Rows[0][0], err)
	}
	for _, q := range []string{
		"SELECT a.COLUMN_NAME FROM information_schema.COLUMNS a, information_schema.COLUMNS b, information_schema.COLUMNS c ORDER BY 1 LIMIT 1",
		"SELECT a.COLUMN_NAME, b.COLUMN_NAME, c.COLUMN_NAME FROM information_schema.COLUMNS a, information_schema.COLUMNS b, information_schema.COLUMNS c",
		"SELECT DISTINCT a.COLUMN_NAME, b.COLUMN_NAME, c.TABLE_NAME FROM information_schema.COLUMNS a, information_schema.COLUMNS b, information_schema.COLUMNS c",
	} {
		start := time.Now()
		_, err := s.Query(ctx, q)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%s: got %v, want it refused", q, err)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("%s: refused after %v", q, d)
		}
	}
	if r, err := s.Query(ctx, "SELECT a.TABLE_NAME, COUNT(*) FROM information_schema.TABLES a JOIN information_schema.COLUMNS b ON a.TABLE_NAME = b.TABLE_NAME GROUP BY a.TABLE_NAME ORDER BY 1"); err != nil || len(r.Rows) == 0 {
		t.Errorf("a join of catalog size: %v rows, %v", len(r.Rows), err)
	}
}

// TestMemoryBudget: statements whose operators hold rows outside the
// engine's memory manager (GROUP_CONCAT, window functions) or carry large
// values per row are cancelled once the heap grows by heapBudget, long
// before the statement timeout; an independent review grew the proxy by
// 3 GB in 30 s with each, or killed it.
func TestMemoryBudget(t *testing.T) {
	e := testEngine(t)
	e.timeout = time.Minute // the heap watch, not the deadline, must end them, however loaded the machine
	s := e.Open("alice", 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, q := range []string{
		"SELECT LENGTH(GROUP_CONCAT(a.COLUMN_NAME)) FROM information_schema.COLUMNS a, information_schema.COLUMNS b, information_schema.COLUMNS c",
		"SELECT COUNT(*) FROM (SELECT ROW_NUMBER() OVER () r FROM information_schema.COLUMNS a, information_schema.COLUMNS b, information_schema.COLUMNS c) t",
		"SELECT REPEAT('x', 1048576) FROM information_schema.COLUMNS a, information_schema.COLUMNS b LIMIT 500",
		"SELECT COUNT(*) FROM (SELECT x FROM (SELECT REPEAT('x', 1048576) x, a.COLUMN_NAME c FROM information_schema.COLUMNS a, information_schema.COLUMNS b) t ORDER BY c LIMIT 150000) u",
	} {
		start := time.Now()
		_, err := s.Query(ctx, q)
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(e.Msg, " MiB") {
			t.Errorf("%.60s: got %v, want the memory budget's refusal", q, err)
		}
		t.Logf("%.60s: refused after %v", q, time.Since(start))
	}
}

// TestStatementTimeout: a catalog statement that runs past the engine's
// timeout (a cross join that grows no heap to speak of) ends with 3024,
// freeing its slot, so that no analyst can hold the four slots every
// catalog statement waits for.
func TestStatementTimeout(t *testing.T) {
	e := testEngine(t)
	e.timeout = 50 * time.Millisecond
	s := e.Open("alice", 1, nil)
	_, err := s.Query(context.Background(), "SELECT COUNT(*) FROM information_schema.COLUMNS a, information_schema.COLUMNS b, information_schema.COLUMNS c, information_schema.COLUMNS d")
	var me *Error
	if !errors.As(err, &me) || me.Code != 3024 {
		t.Fatalf("got %v, want error 3024", err)
	}
	e.timeout = statementTimeout
	if _, err := s.Query(context.Background(), "SELECT COUNT(*) FROM information_schema.COLUMNS"); err != nil {
		t.Errorf("the next statement: %v", err)
	}
}

// TestSlotWaitEndsWithTheStatementsContext: a statement waiting for one
// of the engine's statement slots, all taken, gets 3024 when its deadline
// passes (the proxy's bound of a catalog statement) and 1317 only when it
// is cancelled (KILL, the client gone); it was 1317 for both.
func TestSlotWaitEndsWithTheStatementsContext(t *testing.T) {
	e := testEngine(t)
	var others []func()
	for i := range maxConcurrentStatements {
		release, err := e.slots.acquire(context.Background(), fmt.Sprint("user", i))
		if err != nil {
			t.Fatal(err)
		}
		others = append(others, release)
	}
	s := e.Open("alice", 1, nil)
	timed, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	var me *Error
	if _, err := s.Query(timed, "SHOW TABLES"); !errors.As(err, &me) || me.Code != 3024 || !strings.Contains(me.Msg, "statement slots") {
		t.Errorf("waiting past the deadline: got %v, want 3024 naming the wait", err)
	}
	killed, kill := context.WithCancel(context.Background())
	kill()
	if _, err := s.Query(killed, "SHOW TABLES"); !errors.As(err, &me) || me.Code != 1317 {
		t.Errorf("waiting when killed: got %v, want 1317", err)
	}
	for _, release := range others {
		release()
	}
	query(t, s, "SELECT 1")
}

// SET time_zone takes what private statements read as a zone and refuses
// anything else with MySQL's 1298, leaving the old value; an offset is
// kept as MySQL shows it, and NOW() reads it.
func TestSetTimeZone(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	for _, q := range []string{
		"SET time_zone = 'Mars/Olympus'", "SET time_zone = NULL", "SET time_zone = ''",
		"SET time_zone = 'Local'", "SET @@session.time_zone = '+14:01'", "SET SESSION time_zone = '-14:00'",
		"SET time_zone = '+05:60'", "SET time_zone = 5", "SET time_zone = 'server'",
	} {
		query(t, s, "SET time_zone = 'Europe/Paris'")
		var ce *Error
		_, err := s.Query(context.Background(), q)
		if !errors.As(err, &ce) || ce.Code != 1298 || ce.State != "HY000" || !strings.HasPrefix(ce.Msg, "Unknown or incorrect time zone: '") {
			t.Errorf("%s: %v, want 1298 (HY000) Unknown or incorrect time zone", q, err)
		}
		if got := s.TimeZone(); got != "Europe/Paris" {
			t.Errorf("after %s: time_zone %q, want the old Europe/Paris", q, got)
		}
	}
	for q, want := range map[string]string{
		"SET time_zone = '+5:00'":                "+05:00",
		"SET @@session.time_zone = '-13:59'":     "-13:59",
		"SET SESSION time_zone = 'utc'":          "UTC",
		"SET time_zone = 'system'":               "SYSTEM",
		"SET time_zone = 'America/New_York'":     "America/New_York",
		"SET time_zone = DEFAULT":                "SYSTEM",
		"SET time_zone = CONCAT('+1', '4:00')":   "+14:00",
		"SET time_zone = '+00:00', @y = 1":       "+00:00",
		"SET @@time_zone = 'Asia/Kolkata', @z=2": "Asia/Kolkata",
	} {
		query(t, s, q)
		if got := s.TimeZone(); got != want {
			t.Errorf("%s: time_zone %q, want %q", q, got, want)
		}
	}
	query(t, s, "SET time_zone = '+5:00'")
	r := query(t, s, "SELECT TIMEDIFF(NOW(), UTC_TIMESTAMP()), @@time_zone")
	if got := fmt.Sprint(r.Rows[0]); got != "[05:00:00 +05:00]" {
		t.Errorf("NOW() - UTC_TIMESTAMP() and @@time_zone at '+5:00': %s", got)
	}
}

// A statement's result carries the warnings it raised, in order and at
// most max_error_count of them (64 by default, as MariaDB's; 0 to 65535,
// SET per session), counting them all, and only its own: the session's
// are cleared before each statement (they accumulated without bound
// before) and after it (the engine held a statement's warnings, all of
// them, until the next one).
func TestWarningsPerStatement(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	s.SetDatabase("dpproxy")
	if r := query(t, s, "SELECT 1 / 0, 1 DIV 0, 1 % 0"); fmt.Sprint(r.Warnings) != "[{Warning 1365 Division by 0} {Warning 1365 Division by 0} {Warning 1365 Division by 0}]" || r.Conditions.All != 3 {
		t.Errorf("SELECT 1 / 0, 1 DIV 0, 1 %% 0: warnings %v, %+v", r.Warnings, r.Conditions)
	}
	if held := len(s.sess.Warnings()); held != 0 {
		t.Errorf("the engine's session holds %d warnings after the statement, want none", held)
	}
	if r := query(t, s, "SELECT 1"); len(r.Warnings) != 0 || r.Conditions.All != 0 {
		t.Errorf("SELECT 1 after divisions by 0: warnings %v, %+v", r.Warnings, r.Conditions)
	}
	divisions := func(n int) string { return "SELECT 1 / 0" + strings.Repeat(", 1 / 0", n-1) }
	if got := query(t, s, "SELECT @@max_error_count").Rows; fmt.Sprint(got) != "[[64]]" || s.MaxErrorCount() != 64 {
		t.Errorf("max_error_count %v (%d), want MariaDB's default 64", got, s.MaxErrorCount())
	}
	for _, c := range []struct {
		set        string
		n, keep    int
		maxErrorCt uint64
	}{
		{"", 65, 64, 64},
		{"SET max_error_count = 2", 3, 2, 2},
		{"SET max_error_count = 0", 3, 0, 0},
		{"SET max_error_count = 65535", 100, 100, 65535},
		{"SET max_error_count = DEFAULT", 65, 64, 64},
	} {
		if c.set != "" {
			query(t, s, c.set)
		}
		r := query(t, s, divisions(c.n))
		if len(r.Warnings) != c.keep || r.Conditions.All != uint64(c.n) || s.MaxErrorCount() != c.maxErrorCt {
			t.Errorf("%s; %d divisions by 0: %d warnings kept, %d counted (max_error_count %d), want %d, %d (%d)", c.set, c.n, len(r.Warnings), r.Conditions.All, s.MaxErrorCount(), c.keep, c.n, c.maxErrorCt)
		}
	}
	for _, bad := range []string{"SET max_error_count = 65536", "SET max_error_count = -1"} {
		if _, err := s.Query(context.Background(), bad); err == nil {
			t.Errorf("%s: accepted, want it refused", bad)
		}
	}
}

// @@warning_count and @@error_count read the conditions SetConditions
// recorded (the previous statement's), in any form MySQL reads them, and
// cannot be set; an unknown system variable is MySQL's 1193, named
// without @@ and its scope. Both were 1105 "Unknown system variable".
func TestConditionCountsAndUnknownVariables(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	if got := fmt.Sprint(query(t, s, "SELECT @@warning_count, @@error_count").Rows); got != "[[0 0]]" {
		t.Errorf("a new session: %s", got)
	}
	s.SetConditions(Conditions{All: 3, Errors: 1})
	for q, want := range map[string]string{
		"SELECT @@warning_count, @@error_count, @@session.warning_count, @@SESSION.error_count + 1": "[[3 1 3 2]]",
		"SHOW SESSION VARIABLES WHERE Variable_name IN ('warning_count', 'error_count')":            "[[error_count 1] [warning_count 3]]",
	} {
		if got := fmt.Sprint(query(t, s, q).Rows); got != want {
			t.Errorf("%s: got %s, want %s", q, got, want)
		}
	}
	if _, err := s.Query(context.Background(), "SET @@warning_count = 0"); err == nil {
		t.Error("SET @@warning_count was accepted")
	}
	for q, name := range map[string]string{
		"SELECT @@nosuch":              "nosuch",
		"SELECT @@session.nosuch + 1":  "nosuch",
		"SELECT @@GLOBAL.nosuch":       "nosuch",
		"SET @@nosuch = 1":             "nosuch",
		"SET SESSION other_nosuch = 1": "other_nosuch",
	} {
		var ce *Error
		if _, err := s.Query(context.Background(), q); !errors.As(err, &ce) || ce.Code != 1193 || ce.State != "HY000" || ce.Msg != "Unknown system variable '"+name+"'" {
			t.Errorf("%s: got %v, want 1193 (HY000) Unknown system variable '%s'", q, err, name)
		}
	}
}

// TestQueryUpToStopsAtItsRows: QueryUpTo reads only the rows it returns
// (sql_select_limit's cut), so a statement with more than maxResultRows
// rows answers under a smaller limit, and fails only when the limit
// is larger than maxResultRows and the answer has more; under
// sql_select_limit 5 such a statement failed with the 100,000 rows error.
func TestQueryUpToStopsAtItsRows(t *testing.T) {
	s := testEngine(t).Open("alice", 1, nil)
	ctx := context.Background()
	const cube = "SELECT a.ID, b.ID, c.ID FROM information_schema.COLLATIONS a, information_schema.COLLATIONS b, information_schema.COLLATIONS c"
	for _, n := range []uint64{0, 5, maxResultRows} {
		r, err := s.QueryUpTo(ctx, cube, n)
		if err != nil || uint64(len(r.Rows)) != n || len(r.Columns) != 3 {
			t.Fatalf("QueryUpTo %d: %v, %v; want %d rows of 3 columns", n, r, err, n)
		}
	}
	for _, n := range []uint64{maxResultRows + 1, math.MaxUint64} {
		var e *Error
		if _, err := s.QueryUpTo(ctx, cube, n); !errors.As(err, &e) || !strings.Contains(e.Msg, "at most 100000 rows") {
			t.Errorf("QueryUpTo %d: got %v, want the 100000 rows refusal", n, err)
		}
	}
}
