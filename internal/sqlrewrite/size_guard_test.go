package sqlrewrite_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestStringSizesAreBounded: statements that could make the proxy build
// an unbounded string in its own memory (the catalog engine evaluates
// FROM-less SELECTs, SET values and post-processing) are refused at parse
// with 1235, before anything runs; an independent review killed the proxy
// with SET @v = REPEAT(REPEAT('x', 100000), 2000000000). The forms clients
// send (Connector/J's sql_mode = concat(@@sql_mode, ...), mysqldump's
// SET @OLD_... = @@..., short REPEATs and LPADs) still parse.
func TestStringSizesAreBounded(t *testing.T) {
	p := sqlrewrite.NewParser(testCatalog())
	for _, sql := range []string{
		"SET @v = REPEAT('xx', 2000000000)",
		"SET @v = REPEAT(REPEAT('x', 100000), 2000000000)",
		"SET @v = REPEAT(REPEAT('x', 1000000), 2)",
		"SELECT REPEAT('x', 1048577)",
		"SELECT REPEAT('x', @n)",
		"SELECT REPEAT('x', 1.5)",
		"SELECT LENGTH(SPACE(2000000))",
		"SELECT LPAD('a', 1000000, 'b')",
		"SELECT REPLACE(REPEAT('a', 1000000), 'a', 'bb')",
		"SELECT BENCHMARK(1000000000, MD5('a'))",
		"SELECT FORMAT(1, 2000000000)",
		"SELECT HEX(HEX(HEX(HEX(HEX(HEX(HEX(HEX(HEX(HEX(HEX(HEX(REPEAT('x', 1000000)))))))))))))",
		"SELECT REGEXP_REPLACE(REPEAT('a', 1000000), 'a', 'bb')",
		"SELECT CONCAT(" + strings.Repeat("@a, ", 80) + "@a)",
		"SET @v = CONCAT(@v, 'x')",
		"SET @v = '" + strings.Repeat("x", 300<<10) + "'",
		"SET sql_mode = '" + strings.Repeat("x", 70<<10) + "'",
		"SELECT COUNT(*), REPEAT('x', 2000000) FROM pums",
		// CAST pads to its length; the aggregates repeat their argument
		// per row (an independent review built 300 MB and 40 MiB).
		"SELECT LENGTH(CAST('a' AS BINARY(300000000)))",
		"SELECT LENGTH(CONVERT('a', CHAR(2000000)))",
		"SELECT LENGTH(GROUP_CONCAT(REPEAT('x', 1048576))) FROM information_schema.COLUMNS",
		"SELECT LENGTH(JSON_ARRAYAGG(REPEAT('x', 10000))) FROM information_schema.COLUMNS",
	} {
		_, err := p.Parse(sql)
		var e *dperr.Error
		if !errors.As(err, &e) || e.Kind != dperr.Unsupported {
			t.Errorf("%.80q: got %v, want an Unsupported refusal", sql, err)
		}
	}
	for _, sql := range []string{
		"SET sql_mode = concat(@@sql_mode, ',STRICT_TRANS_TABLES')",
		"SET @OLD_CHARACTER_SET_CLIENT = @@CHARACTER_SET_CLIENT",
		"SET @v = REPEAT('ab', 1000)",
		"SET NAMES utf8mb4",
		"SELECT REPEAT('-', 40), LPAD('7', 3, '0'), SPACE(4), REPLACE('a.b', '.', '_')",
		"SELECT CONCAT(@a, @b, @@version)",
		"SELECT FORMAT(1234.5, 2), HEX('ab'), UPPER(CONCAT('a', DATABASE()))",
		"SELECT COUNT(*) FROM pums WHERE state IN (" + strings.Repeat("'CA', ", 2000) + "'NY')",
		// GROUP_CONCAT's ORDER BY items are none of its result, which
		// is cut at group_concat_max_len (at most 1 MiB): these were
		// refused as building up to 20 MB.
		"SELECT GROUP_CONCAT(COLUMN_NAME ORDER BY ORDINAL_POSITION) FROM information_schema.COLUMNS WHERE TABLE_NAME = 'pums'",
		"SELECT TABLE_NAME, GROUP_CONCAT(COLUMN_NAME, ' ', COLUMN_TYPE ORDER BY ORDINAL_POSITION SEPARATOR ', ') FROM information_schema.COLUMNS GROUP BY TABLE_NAME",
		"SELECT GROUP_CONCAT(TABLE_NAME), GROUP_CONCAT(DISTINCT COLUMN_NAME) FROM information_schema.COLUMNS",
	} {
		if _, err := p.Parse(sql); err != nil {
			t.Errorf("%.80q: %v", sql, err)
		}
	}
}

// TestNestedNumbersAndConcatsAreNotMultiplied: a function that returns a
// number is bounded by a number's longest text and CONCAT by the sum of
// its arguments, so nesting them no longer multiplies the bound by four
// per level: ABS nested nine deep was refused as "a statement whose
// strings may reach 22369600 bytes", and ten nested CONCATs of an 11-byte
// result likewise (an independent review). What still amplifies stays
// refused: HEX nested (above), and ABS or CONCAT of what does, since a
// DECIMAL keeps its digits in the catalog engine.
func TestNestedNumbersAndConcatsAreNotMultiplied(t *testing.T) {
	p := sqlrewrite.NewParser(testCatalog())
	nest := func(open, inner, close string, n int) string {
		return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
	}
	for _, sql := range []string{
		"SELECT " + nest("ABS(", "1", ")", 9),
		"SELECT " + nest("ROUND(FLOOR(CEIL(TRUNCATE(MOD(", "-7.5", ", 3), 1))))", 12),
		"SELECT " + nest("SQRT(LN(LOG10(POW(SIGN(LENGTH(", "'x'", ")), 2))))", 12),
		"SELECT " + nest("CONCAT(", "'a'", ", 'b')", 10),
		"SELECT " + nest("CONCAT_WS('-', ", "'a'", ", 'b')", 10),
		"SELECT " + nest("ABS(", "COUNT(*)", ")", 12) + " FROM pums",
		"SELECT " + nest("CONCAT(", "COUNT(*)", ", '%')", 12) + " FROM pums",
	} {
		if _, err := p.Parse(sql); err != nil {
			t.Errorf("%.80q: %v", sql, err)
		}
	}
	for _, sql := range []string{
		"SELECT REPEAT(ABS(REPEAT('9', 1000000)), 100)",
		"SELECT REPEAT(CONCAT(REPEAT('9', 1000000), 'x'), 2)",
		"SELECT CONCAT(" + strings.Repeat("REPEAT('x', 1000000), ", 17) + "'x')",
		"SELECT CONCAT_WS(REPEAT('-', 1000000), " + strings.Repeat("'a', ", 20) + "'b')",
	} {
		_, err := p.Parse(sql)
		var e *dperr.Error
		if !errors.As(err, &e) || e.Kind != dperr.Unsupported {
			t.Errorf("%.80q: got %v, want an Unsupported refusal", sql, err)
		}
	}
}
