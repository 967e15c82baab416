package main

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strconv"
	"testing"
)

// TestConstantsAsMariaDB runs SELECTs without FROM through the proxy and
// on MariaDB itself, both sessions under collation_connection
// utf8mb4_general_ci (MariaDB's, which the proxy's post-processing
// implements), and compares what each answers: the column names, the
// decimals of DOUBLE and DECIMAL columns, the cells as text, the distinct
// levels and codes of SHOW WARNINGS and the error code. Post-processing answers these (sqlrewrite constantQuery),
// as it answers the same expressions beside an aggregate; the catalog
// engine, which answered them before, cast '1.5' to SIGNED as 2 and
// '1e5' as 100000 without warning 1292, rounded ROUND(2.5e0) to 3,
// compared 'a' = 'a ' as 0 and wrapped BIGINT overflow instead of error
// 1690. None of them spends budget.
//
// The driver reads a DOUBLE cell as a number, so a DOUBLE's text is
// compared through CONCAT and CAST AS CHAR, and on the wire by
// TestFixedDecimalsAsMariaDB.
//
// Left out, where post-processing is known to differ: the order of
// warnings of different kinds from two columns (the proxy lists 1292
// before the notes and warnings of CASTs); the texts of messages (the
// codes are compared).
func TestConstantsAsMariaDB(t *testing.T) {
	conn, refConn, remaining := besideMariaDBTable(t, []string{"CREATE TABLE IF NOT EXISTS t (i INTEGER)"}, `
  - name: t
    columns:
      - {name: i, type: integer, lower: 1, upper: 5}
`)
	for _, c := range []*sql.Conn{conn, refConn} {
		if _, err := c.ExecContext(t.Context(), "SET NAMES utf8mb4 COLLATE utf8mb4_general_ci"); err != nil {
			t.Fatal(err)
		}
	}
	before := remaining()
	compare := func(q string, decimals bool) {
		// MariaDB keeps the last statement's warnings through a statement
		// without tables that raises none; one with a table clears them.
		for _, c := range []*sql.Conn{conn, refConn} {
			if _, err := c.ExecContext(t.Context(), "SELECT i FROM t LIMIT 0"); err != nil {
				t.Fatal(err)
			}
		}
		got, want := runConstants(t.Context(), conn, q, decimals), runConstants(t.Context(), refConn, q, decimals)
		if got != want {
			t.Errorf("%s:\n proxy   %s\n MariaDB %s", q, got, want)
		}
	}
	for _, q := range []string{
		// The README's examples.
		"SELECT CAST('1.5' AS SIGNED), CAST('1e5' AS SIGNED), ROUND(2.5e0)",
		// CAST of text, decimals and negatives.
		"SELECT CAST('-1.5' AS SIGNED), CAST('abc' AS SIGNED), CAST(' 12 ' AS SIGNED)",
		"SELECT CAST(1.5 AS SIGNED), CAST(-1.5 AS SIGNED), CAST(2.5 AS SIGNED), CAST(0.5 AS SIGNED), CAST(-0.5 AS SIGNED)",
		"SELECT CAST(-1 AS UNSIGNED)",
		"SELECT CAST('-1' AS UNSIGNED)",
		"SELECT CAST(9.5 AS UNSIGNED), CAST(-9.5 AS UNSIGNED)",
		"SELECT CAST(1e20 AS SIGNED)",
		"SELECT CAST(18446744073709551615 AS SIGNED)",
		"SELECT CAST('18446744073709551616' AS UNSIGNED)",
		"SELECT CAST('9223372036854775808' AS SIGNED)",
		"SELECT CAST('-9223372036854775809' AS SIGNED)",
		"SELECT CAST(1.25 AS DECIMAL(3,1)), CAST('1.005' AS DECIMAL(5,2)), CAST(-0.5 AS DECIMAL(2,0))",
		"SELECT CAST(123.45 AS DECIMAL(3,1))",
		"SELECT CAST('abc' AS DECIMAL(5,2)), CAST('1.5x' AS DECIMAL(5,2))",
		"SELECT CAST('1.5 ' AS DECIMAL(5,2))",
		"SELECT CAST(3.7 AS DOUBLE), CAST('1x' AS DOUBLE)",
		"SELECT CAST(0.1 AS FLOAT) + 0",
		"SELECT CAST(12 AS CHAR), CAST(1.50 AS CHAR), CAST(-0.5 AS CHAR)",
		// ROUND and TRUNCATE ties: away from zero for exact values, to
		// even for DOUBLEs.
		"SELECT ROUND(2.5), ROUND(-2.5), ROUND(-0.5), ROUND(1.45, 1), ROUND(-1.45, 1), ROUND(1.005, 2)",
		"SELECT ROUND(2.5e0), ROUND(3.5e0), ROUND(-2.5e0), ROUND(0.5e0)",
		"SELECT ROUND(1234.5, -2), ROUND(15, -1), ROUND(25, -1), ROUND(-5, -1), ROUND(123.456, -1)",
		"SELECT TRUNCATE(1.999, 2), TRUNCATE(-1.999, 1), TRUNCATE(1999, -2), TRUNCATE(-2.55, 1), TRUNCATE(2.5e0, 0)",
		"SELECT FLOOR(-1.5), CEIL(1.2), FLOOR(2.5e0), SIGN(-3), ABS(-2.50)",
		// Division, DIV and MOD.
		"SELECT 7 / 2, 7 DIV 2, -7 DIV 2, 10 DIV -3, 5.5 DIV 2, 1 DIV 0.3",
		"SELECT 7 % 3, -7 % 3, 5.5 % 2, -5.5 % 2, MOD(-7, 3)",
		"SELECT 1 / 3, 1 / 3 * 3, 10 / 4.0, 2 / 3 + 0.0, 1.0 / 3",
		"SELECT 7 / 0, 7 DIV 0, 7 % 0",
		// Overflow: error 1690.
		"SELECT 9223372036854775807 + 1",
		"SELECT -9223372036854775808 - 1",
		"SELECT 9223372036854775807 * 2",
		"SELECT 18446744073709551615 + 1",
		"SELECT CAST(18446744073709551615 AS UNSIGNED) + 1",
		"SELECT 0 - CAST(1 AS UNSIGNED)",
		"SELECT ABS(-9223372036854775807 - 1)",
		"SELECT 1e308 * 10",
		"SELECT 100000000000000000000 + 1, 0.1 + 0.2 = 0.3, 0.1e0 + 0.2e0 = 0.3e0",
		// Text compared in utf8mb4_general_ci: PAD SPACE, case and
		// accents folded.
		"SELECT 'a' = 'a ', 'a ' = 'a', 'a' < 'a ', 'a' = 'A', 'é' = 'e', 'a' < 'B'",
		"SELECT 'b' BETWEEN 'a' AND 'c', 'B' BETWEEN 'a' AND 'c', NULLIF('a', 'A'), LEAST('b', 'a')",
		"SELECT CASE 'a' WHEN 'A' THEN 'match' ELSE 'no' END",
		// LIKE.
		"SELECT 'abc' LIKE 'A%', 'abc' LIKE 'a_c', 'a%c' LIKE 'a\\%c', 'abc' NOT LIKE '%d', 'abc' LIKE 'ab'",
		"SELECT 'a ' LIKE 'a', 'a_c' LIKE 'a|_c' ESCAPE '|'",
		// Text read as a number.
		"SELECT '10' + 5, '1.5abc' + 1, '5' = 5, '5abc' = 5, 'abc' = 0",
		// CONCAT and NULLs.
		"SELECT CONCAT('a', 1, 2.50), CONCAT('a', NULL), CONCAT(1.0, 'x', 1e1)",
		"SELECT NULL + 1, NULL = NULL, NULL <=> NULL, 1 IN (1, NULL), 2 IN (1, NULL), 2 NOT IN (1, NULL)",
		"SELECT 1 AND NULL, 0 OR NULL, 1 XOR 1, NOT 0, TRUE + TRUE, 1 IS TRUE, NULL IS NOT FALSE",
		"SELECT COALESCE(NULL, NULL, 3), IFNULL(NULL, 'x'), NULLIF(1, 1), LEAST(1, NULL), GREATEST(1, 2.5, 3)",
		// IF and CASE typing.
		"SELECT IF(1 > 0, 'yes', 2), IF(NULL, 1, 2.5), IF(1, 2, 3.5), IF(1, 1, 'a') + 0",
		"SELECT CASE WHEN 1 = 0 THEN 1 ELSE 2.5 END, CASE 2 WHEN 1 THEN 'one' WHEN 2 THEN 'two' END, CASE WHEN NULL THEN 1 END",
		"SELECT COALESCE(1, 'a'), GREATEST('10', 9), GREATEST(1e0, 2)",
		"SELECT LEAST('abc', 0), LEAST('1.50', 2), GREATEST('1e1', 2), GREATEST('07', 1), GREATEST('5 ', 1.5), LEAST(NULL, 'abc', 0)",
		// Functions of DOUBLEs.
		"SELECT POWER(2, 10), SQRT(2), SQRT(-1), EXP(1), LOG(2, 8), LOG10(100), POWER(2, 0.5)",
		"SELECT LOG(0), LN(-1)",
		// Literals, with MySQL's column names.
		"SELECT 1, (1), - 1, 'abc', NULL, 1.50, 1e3, TRUE, 'a' 'b'",
		"SELECT 1 + 1 AS two, 5 BETWEEN 1 AND 10, 1 BETWEEN 2 AND 0, 1 = 1 = 1",
	} {
		compare(q, false)
	}
	// The same, with the decimals MariaDB announces for DOUBLE and DECIMAL
	// columns.
	for _, q := range []string{
		// ROUND, TRUNCATE, FLOOR and CEIL of a DOUBLE fix its decimals:
		// ROUND(x, 2) shows 2 (1.00), FLOOR(x) none, without an exponent
		// however large; arithmetic, ABS and IF carry them on.
		"SELECT ROUND(1e0, 2), FLOOR(1e15), CEIL(1.5e15), ROUND(123.456e0, -1), TRUNCATE(1.23456e0, 3)",
		"SELECT CONCAT(ROUND(1e0, 2)), CONCAT(FLOOR(1e15)), CAST(CEIL(1.5e15) AS CHAR), CONCAT(TRUNCATE(1.23456e0, 3)), CONCAT(FLOOR(1e20)), CONCAT(CEIL(-1e22))",
		"SELECT CONCAT(ROUND(1.5e0, 30)), CONCAT(ROUND(1e-20, 30)), CONCAT(ROUND(1e300, 2)), CONCAT(ROUND(2.675e0, 2)), CONCAT(ROUND(-0.001e0, 2))",
		"SELECT ROUND(1e0, 40), ROUND(1.5e0, 31), CONCAT(ROUND(1.5e0, 31)), ROUND(1e0, -40), CONCAT(ROUND(1e0, 1 + 1)), CONCAT(ROUND(1e0, '2')), ROUND(1e0, NULL)",
		"SELECT ROUND(1e0, 2) + 1, ROUND(1e0, 2) * ROUND(2e0, 1), ROUND(1e0, 2) - 1, ROUND(1e0, 2) % 1, ROUND(1e0, 2) / 3, FLOOR(1e0) / 2, ROUND(1e0, 30) / 3, ROUND(1e0, 2) + 1e0",
		"SELECT CONCAT(ROUND(1e0, 2) + 1), CONCAT(ROUND(1e0, 2) / 3), CONCAT(-ROUND(1e0, 2)), CONCAT(ROUND(-1e0, 2) / 3000000), CONCAT(ROUND(1.23e0, 2) * 1.5), CONCAT(ROUND(1e0, 2) * 1.555)",
		"SELECT ABS(ROUND(-1e0, 2)), CONCAT(ABS(ROUND(-1e0, 2))), FLOOR('1.5'), ABS('1.5'), ROUND('1.555', 2), CONCAT(ROUND('1.555', 2)), ROUND(FLOOR(1.5e0), 2), FLOOR(ROUND(1.5e0, 2))",
		"SELECT IF(1, ROUND(1e0, 2), 1e0), IF(1, ROUND(1e0, 2), 1.5), IF(1, ROUND(1e0, 2), ROUND(1e0, 3)), COALESCE(ROUND(1e0, 2)), GREATEST(ROUND(1e0, 2), 0), GREATEST('5', ROUND(1e0, 2))",
		"SELECT IF(0, 'a', ROUND(1e0, 2)), CONCAT(ROUND(1e0, 2)) LIKE '1.00', ROUND(1e0, 2) = '1.00', POW(ROUND(1e0, 2), 1), CAST(ROUND(1e0, 2) AS DOUBLE), SQRT(ROUND(4e0, 2))",
		"SELECT ROUND(1.55, 1 + 0), ROUND(1.555, '2'), ROUND(1.55, NULL), ROUND(15, NULL), FLOOR(NULL), ROUND(NULL, 2), ABS(NULL), ROUND(NULL)",
		// Fractional digits: an exact number rounds half away from zero, a
		// DOUBLE half to even, text is cut (MariaDB warns that '2.5' is
		// not an INTEGER, twice; README).
		"SELECT ROUND(1.555, 2.5), ROUND(1e0, 2.7e0), ROUND(15.5, -0.6), ROUND(1.555, '2'), TRUNCATE(1.2345e0, 2.9), ROUND(1.5555, 2.5e0), ROUND(1.5555, -0.5), CONCAT(ROUND(1e0, 2.5))",
	} {
		compare(q, true)
	}
	// A DOUBLE parameter stays a DOUBLE (the proxy once wrote it as the
	// DECIMAL literal 2.25, whose ROUND is 2.3).
	const q = "SELECT ROUND(?, 1), ? + 0"
	if got, want := runPrepared(t, conn, q, 2.25, 2.0), runPrepared(t, refConn, q, 2.25, 2.0); got != want {
		t.Errorf("%s with 2.25, 2.0:\n proxy   %s\n MariaDB %s", q, got, want)
	}
	if after := remaining(); after != before {
		t.Errorf("constants spent epsilon %g", before-after)
	}
}

// runConstants runs q on conn and describes what it answered: the error
// code, or the column names, with decimals the decimals of each DOUBLE
// and DECIMAL column (31 for a DOUBLE whose decimals are not fixed, "-"
// for other types), the cells as text (NULLs as NULL) and the distinct
// levels and codes of SHOW WARNINGS other than the proxy's notes.
func runConstants(ctx context.Context, conn *sql.Conn, q string, decimals bool) string {
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return errorText(err)
	}
	cols, _ := rows.Columns()
	types, err := rows.ColumnTypes()
	if err != nil {
		return errorText(err)
	}
	var shown []string
	for _, ct := range types {
		_, scale, ok := ct.DecimalSize()
		switch {
		case !decimals:
		case !ok || ct.DatabaseTypeName() != "DOUBLE" && ct.DatabaseTypeName() != "DECIMAL":
			shown = append(shown, "-")
		case scale == math.MaxInt64: // the driver's NOT_FIXED_DEC
			shown = append(shown, "31")
		default:
			shown = append(shown, strconv.FormatInt(scale, 10))
		}
	}
	var out []string
	for rows.Next() {
		cells, err := scanCells(rows, len(cols))
		if err != nil {
			return "scan: " + err.Error()
		}
		for _, c := range cells {
			if !c.Valid {
				out = append(out, "NULL")
				continue
			}
			out = append(out, fmt.Sprintf("%q", c.String))
		}
	}
	if err := rows.Err(); err != nil { // MariaDB's 1690 comes after the columns
		return errorText(err)
	}
	rows.Close()
	warnings, err := warningKinds(ctx, conn)
	if err != nil {
		return "SHOW WARNINGS: " + err.Error()
	}
	return fmt.Sprintf("columns %q decimals %v cells %v warnings %v", cols, shown, out, warnings)
}

// runPrepared runs q with args as a prepared statement on conn and
// describes its one row: each cell's database type and text.
func runPrepared(t *testing.T, conn *sql.Conn, q string, args ...any) string {
	rows, err := conn.QueryContext(t.Context(), q, args...)
	if err != nil {
		return errorText(err)
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	if !rows.Next() {
		return fmt.Sprintf("no row: %v", rows.Err())
	}
	cells, err := scanCells(rows, len(types))
	if err != nil {
		t.Fatal(err)
	}
	var out string
	for i, c := range types {
		out += fmt.Sprintf("%s %q; ", c.DatabaseTypeName(), cells[i].String)
	}
	return out
}
