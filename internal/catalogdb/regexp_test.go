package catalogdb

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestRegexpRefusedBeforeItRuns: no regular expression reaches the
// engine's matcher (backstop's regexpFunctions), wherever the statement
// writes it. The patterns backtrack exponentially: were one to run, it
// would hold a CPU that no deadline frees. Their subjects are kept short
// (16 characters for a constant, about 40 ms if it ran, twice that per
// added character; the two rows of SCHEMATA for a column, as the engine
// compiles the pattern again for each row) so that a regression fails
// the test in seconds rather than hanging it.
func TestRegexpRefusedBeforeItRuns(t *testing.T) {
	const subject, pattern = "REPEAT('a', 16)", "'(a+)+b'"
	e := testEngine(t)
	s := e.Open("a", 1, nil)
	s.SetDatabase("dpproxy")
	for _, q := range []string{
		"SELECT " + subject + " REGEXP " + pattern,
		"SELECT " + subject + " rLiKe " + pattern,
		"SELECT " + subject + " NOT REGEXP " + pattern,
		"SELECT " + subject + " NOT RLIKE " + pattern,
		"SELECT REGEXP_LIKE(" + subject + ", " + pattern + ")",
		"SELECT REGEXP_INSTR(" + subject + ", " + pattern + ")",
		"SELECT REGEXP_SUBSTR(" + subject + ", " + pattern + ")",
		"SELECT REGEXP_REPLACE(" + subject + ", " + pattern + ", 'c')",
		"SELECT `regexp_like`(" + subject + ", " + pattern + ")",
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE CONCAT(REPEAT('a', 12), TABLE_NAME) RLIKE '^(a+)+b'",
		"SELECT COUNT(*) FROM information_schema.SCHEMATA s JOIN information_schema.SCHEMATA t ON t.SCHEMA_NAME REGEXP " + pattern,
		"SELECT SCHEMA_NAME FROM information_schema.SCHEMATA GROUP BY SCHEMA_NAME HAVING MAX(SCHEMA_NAME) REGEXP " + pattern,
		"SELECT SCHEMA_NAME FROM information_schema.SCHEMATA ORDER BY SCHEMA_NAME REGEXP " + pattern,
		"SELECT CASE WHEN " + subject + " REGEXP " + pattern + " THEN 1 END",
		"SELECT (SELECT " + subject + " REGEXP " + pattern + ")",
		"SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE EXISTS (SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME RLIKE " + pattern + ")",
		"SELECT * FROM (SELECT " + subject + " REGEXP " + pattern + " AS m) AS d",
		"WITH d AS (SELECT " + subject + " REGEXP " + pattern + " AS m) SELECT m FROM d",
		"SELECT 1 UNION SELECT " + subject + " REGEXP " + pattern,
		"SELECT ROW_NUMBER() OVER (ORDER BY SCHEMA_NAME REGEXP " + pattern + ") FROM information_schema.SCHEMATA",
		"SELECT COUNT(*) FROM visits WHERE city REGEXP " + pattern,
		"SELECT @s REGEXP @p",
		"SET @s = " + subject + " REGEXP " + pattern,
		"SET @s = 1, @t = REGEXP_LIKE(" + subject + ", " + pattern + ")",
		"SET @@session.sql_mode = IF(" + subject + " REGEXP " + pattern + ", '', '')",
		"SHOW TABLES WHERE Tables_in_dpproxy REGEXP " + pattern,
		"SHOW VARIABLES WHERE Value RLIKE " + pattern,
		"EXPLAIN SELECT 1 FROM information_schema.SCHEMATA WHERE " + subject + " REGEXP " + pattern,
	} {
		var ce *Error
		_, err := s.Query(context.Background(), q)
		if !errors.As(err, &ce) || ce.Code != 1235 || ce.State != "42000" || !strings.Contains(ce.Msg, "LIKE") {
			t.Errorf("%s: %v, want 1235 naming LIKE", q, err)
		}
		// A prepared statement's description runs the same checks.
		if _, err := s.Describe(context.Background(), q); !errors.As(err, &ce) || ce.Code != 1235 {
			t.Errorf("%s described: %v, want 1235", q, err)
		}
	}
	// LIKE, which the refusal names, answers.
	if r := query(t, s, "SELECT COUNT(*) > 0, 'abc' LIKE 'a%c' FROM information_schema.TABLES WHERE TABLE_NAME LIKE 'COLUMN%'"); len(r.Rows) != 1 || r.Rows[0][0] != "1" || r.Rows[0][1] != "1" {
		t.Errorf("LIKE: %v", r.Rows)
	}
}
