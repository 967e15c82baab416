package main

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestExactArithmeticAsMariaDB runs exact arithmetic of released values
// through the proxy and the same statements on MariaDB over the same five
// rows (besideMariaDB), and compares each answer's text cell for cell, its
// columns' kinds (an integer, BIGINT UNSIGNED, DECIMAL with its scale, or
// DOUBLE), SHOW WARNINGS' levels and codes and the error code
// (runExact). Each released value appears where its noise cannot matter
// (COUNT(*) * 0 is 0). Before, the proxy computed these in float64: CAST(…
// AS DECIMAL(p, s)) ignored s; 0.1 + 0.2 = 0.3 was false and (… + 3000) /
// 7 = 428.5714 too (MySQL's quotient of integers is a DECIMAL with 4 more
// decimals), MOD(3000, 0.7) was 0.5000000000001903; 3000 ·
// 3074457345618258 came out as 9223372036854773760; and
// CAST(… AS UNSIGNED) - 6 was -1, where MariaDB raises 1690.
func TestExactArithmeticAsMariaDB(t *testing.T) {
	conn, refConn := besideMariaDB(t)
	if _, err := conn.ExecContext(t.Context(), "SET @dp_epsilon = 1"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		// CAST to DECIMAL(p, s): rounded half away from zero (a DOUBLE as
		// its shortest decimal), clipped with warning 1264.
		"SELECT CAST(AVG(y) * 0 + 2.25e0 AS DECIMAL(10,2)), CAST(COUNT(*) * 0 + 2.345 AS DECIMAL(10,2)), CAST(COUNT(*) * 0 - 2.345 AS DECIMAL(10,2)), CAST(AVG(y) * 0 + 0.15e0 AS DECIMAL(3,1)) FROM t",
		"SELECT CAST(COUNT(*) * 0 + 99.96 AS DECIMAL(3,1)), CAST(COUNT(*) * 0 - 1000 AS DECIMAL(3,1)), CAST(AVG(y) * 0 + 99.95e0 AS DECIMAL(3,1)) FROM t",
		"SELECT CAST(COUNT(*) * 0 + 7 AS DECIMAL), CAST((COUNT(*) * 0 + 5) / 3 AS DECIMAL(10,4)) = 1.6667, CONCAT(CAST(COUNT(*) * 0 + 5 AS DECIMAL(5,2))) FROM t",
		// Decimal literals and quotients, exact.
		"SELECT 0.1 + 0.2 = 0.3 + COUNT(*) * 0, 0.1 + 0.2 + COUNT(*) * 0, (COUNT(*) * 0 + 3000) / 7 = 428.5714, (COUNT(*) * 0 + 3000) / 7, MOD(COUNT(*) * 0 + 3000, 0.7) FROM t",
		"SELECT (COUNT(*) * 0 + 5) / 3, CONCAT((COUNT(*) * 0 + 5) / 3), ((COUNT(*) * 0 + 5) / 3) * 3, (COUNT(*) * 0 + 5) / 3 / 3, (COUNT(*) * 0 + 5) / 3 = 1.66666667 FROM t",
		"SELECT (COUNT(*) * 0 + 5) / 6 * 100000000000000000000, (COUNT(*) * 0 + 5.0) / 3.0 * 1000000000000000000000000, (COUNT(*) * 0 + 1.0000000001) / 3 * 1000000000000000000000000000000 FROM t",
		"SELECT (COUNT(*) * 0 + 1.50) * 2, ROUND((COUNT(*) * 0 + 5) / 3, 6), ROUND(COUNT(*) * 0 + 1.2, 3), TRUNCATE((COUNT(*) * 0 + 5) / 3, 2), ROUND((COUNT(*) * 0 + 5) / 3) FROM t",
		"SELECT FLOOR((COUNT(*) * 0 + 5) / 3), CEIL(COUNT(*) * 0 - 1.5), ABS(COUNT(*) * 0 - 2.50), ROUND(COUNT(*) * 0 + 15, -1), ROUND(COUNT(*) * 0 + 1.25, 1), ROUND(COUNT(*) * 0 - 1.25, 1) FROM t",
		"SELECT (COUNT(*) * 0 + 7.5) DIV 2.5, (COUNT(*) * 0 - 7) % 2.5, (COUNT(*) * 0 + 1.000000000000000000001) * 1.000000000000000000001, (COUNT(*) * 0 + 5) / 3 + 0e0 FROM t",
		"SELECT IF(COUNT(*) * 0 = 0, COUNT(*) * 0 + 1, 1.5), GREATEST((COUNT(*) * 0 + 5) / 3, 2), COUNT(*) * 0 + 2.5 > COUNT(*) * 0 + 2.49 FROM t",
		"SELECT ((COUNT(*) * 0 + 99999999999999999999999999999999999.0) * 99999999999999999999999999999999999.0) * 9999999999999999999999.0 FROM t",
		"SELECT (COUNT(*) * 0 + 1) / 0, MOD(COUNT(*) * 0 + 1.5, 0) FROM t",
		// A float literal is a DOUBLE, in an aggregate too (SUM(1e300) was
		// a DECIMAL beyond MySQL's digits, 1690; SUM(1.5e2) a BIGINT).
		"SELECT SUM(1e300) * 0, SUM(1.5e2) * 0, SUM(1.5) * 0, MIN(2.5e0), MAX(1.5e2), AVG(-2e0), SUM(y + 1e300) * 0, AVG(y) * 0 * 1e300 FROM t",
		"SELECT COUNT(*) * 0 + 1e308 * 10 FROM t",
		// What post-processing aggregates: a window's SUM and AVG, an outer query's.
		"SELECT i, SUM((COUNT(*) * 0 + 1) / 3) OVER (ORDER BY i), SUM(COUNT(*) * 0 + 0.25) OVER (ORDER BY i) FROM t GROUP BY i",
		"SELECT AVG(c), SUM(c / 4), MAX(c / 4) FROM (SELECT i, COUNT(*) * 0 + 2 AS c FROM t GROUP BY i) AS s",
		// Integers beyond 2^53, exact; beyond BIGINT, 1690.
		"SELECT (COUNT(*) * 0 + 3000) * 3074457345618258, COUNT(*) * 0 + 9223372036854775807 - 1, (COUNT(*) * 0 + 9007199254740993) + 2, COUNT(*) * 0 + 9007199254740993 = 9007199254740992 FROM t",
		"SELECT (COUNT(*) * 0 + 3001) * 3074457345618258 FROM t",
		"SELECT COUNT(*) * 0 - 9223372036854775807 - 2 FROM t",
		"SELECT -(COUNT(*) * 0 - 9223372036854775807 - 1) FROM t",
		"SELECT (COUNT(*) * 0 - 9223372036854775807 - 1) DIV -1 FROM t",
		"SELECT (COUNT(*) * 0 - 9223372036854775807 - 1) % -1, COUNT(*) * 0 + 18446744073709551615 FROM t",
		// BIGINT UNSIGNED.
		"SELECT CAST(COUNT(*) * 0 + 5 AS UNSIGNED) - 6 FROM t",
		"SELECT CAST(COUNT(*) * 0 + 5 AS UNSIGNED) + -6 FROM t",
		"SELECT CAST(COUNT(*) * 0 + 5 AS UNSIGNED) * 3689348814741910324 FROM t",
		"SELECT CAST(COUNT(*) * 0 + 5 AS UNSIGNED) - 5, -CAST(COUNT(*) * 0 + 5 AS UNSIGNED), CAST(COUNT(*) * 0 + 5 AS UNSIGNED) % -3, -6 % CAST(COUNT(*) * 0 + 5 AS UNSIGNED) FROM t",
		"SELECT CAST(COUNT(*) * 0 + 5 AS UNSIGNED) * 3689348814741910323, CAST(COUNT(*) * 0 + 5 AS UNSIGNED) DIV 2, CAST(COUNT(*) * 0 + 5 AS UNSIGNED) / -1 FROM t",
		"SELECT CAST(COUNT(*) * 0 - 1 AS UNSIGNED), CAST(COUNT(*) * 0 - 1 AS UNSIGNED) = -1, CAST(CAST(COUNT(*) * 0 - 1 AS UNSIGNED) AS SIGNED) FROM t",
		"SELECT CAST(COUNT(*) * 0 - 2.5 AS UNSIGNED), CAST(AVG(y) * 0 - 1.5e0 AS UNSIGNED), CAST(AVG(y) * 0 + 1e30 AS UNSIGNED), CAST(COUNT(*) * 0 - 0.4 AS UNSIGNED) FROM t",
		// CAST of text AS SIGNED or UNSIGNED reads its integer prefix,
		// with 1292 for the rest (not rounded as a DOUBLE), wrapping or
		// saturating as MariaDB does.
		"SELECT CAST('1.5' AS SIGNED), CAST('1e5' AS UNSIGNED), CAST(' 12 ' AS SIGNED), COUNT(*) * 0 FROM t",
		"SELECT CAST(CONCAT(COUNT(*) * 0 - 5, '.5') AS UNSIGNED), CAST(CONCAT(COUNT(*) * 0 - 5) AS UNSIGNED) FROM t",
		"SELECT CAST('99999999999999999999' AS SIGNED), CAST('-99999999999999999999' AS UNSIGNED), CAST('18446744073709551615' AS SIGNED), COUNT(*) * 0 FROM t",
		"SELECT CAST(AVG(y) * 0 + 2.5e0 AS SIGNED), CAST(AVG(y) * 0 + 3.5e0 AS SIGNED), CAST(COUNT(*) * 0 + 2.5 AS SIGNED), CAST(COUNT(*) * 0 + 100000000000000000000.5 AS SIGNED), CAST(AVG(y) * 0 - 1e20 AS SIGNED) FROM t",
	} {
		got, want := runExact(t.Context(), conn, q), runExact(t.Context(), refConn, q)
		if got != want {
			t.Errorf("%s:\n proxy   %s\n MariaDB %s", q, got, want)
		}
	}
}

// runExact runs q on conn and describes what it answered: the error
// code, or each column's kind (integer, unsigned, decimal(s) or double:
// INT and BIGINT alike) and the rows' cells as text (a DOUBLE's as %g,
// the others exactly), then the distinct levels and codes of SHOW
// WARNINGS other than the proxy's notes (exec.NoteCode).
func runExact(ctx context.Context, conn *sql.Conn, q string) string {
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return errorText(err)
	}
	cts, err := rows.ColumnTypes()
	if err != nil {
		return errorText(err)
	}
	var kinds []string
	for _, ct := range cts {
		kind := strings.ToLower(ct.DatabaseTypeName())
		switch kind {
		case "int", "bigint":
			kind = "integer"
		case "unsigned int", "unsigned bigint":
			kind = "unsigned"
		case "decimal":
			_, scale, _ := ct.DecimalSize()
			kind = fmt.Sprintf("decimal(%d)", scale)
		}
		kinds = append(kinds, kind)
	}
	out := []string{strings.Join(kinds, " "), ":"}
	for rows.Next() {
		cells, err := scanCells(rows, len(cts))
		if err != nil {
			return "scan: " + err.Error()
		}
		for i, c := range cells {
			x, err := strconv.ParseFloat(c.String, 64)
			switch {
			case !c.Valid:
				out = append(out, "NULL")
			case kinds[i] == "double" && err == nil:
				out = append(out, fmt.Sprintf("%g", x+0))
			default:
				out = append(out, c.String)
			}
		}
		out = append(out, ";")
	}
	if err := rows.Err(); err != nil { // MariaDB's 1690 comes after the columns
		return errorText(err)
	}
	rows.Close()
	warnings, err := warningKinds(ctx, conn)
	if err != nil {
		return "SHOW WARNINGS: " + err.Error()
	}
	slices.Sort(warnings)
	return fmt.Sprintf("%v warnings %v", out, warnings)
}

// TestDoubleTextAsMariaDB compares, character for character, DOUBLEs as
// the proxy and MariaDB write them as text (CONCAT, CAST AS CHAR, LIKE).
// Before, the proxy wrote Go's %g (1e+21, 1e-07, so 1e-7 LIKE '0.0%' was
// 0). The driver reads DOUBLE result cells as numbers, so their text on
// the wire (1e300, not its 301 digits) is checked by the proxy's
// TestDoubleAnswerAsMariaDB.
func TestDoubleTextAsMariaDB(t *testing.T) {
	conn, refConn := besideMariaDB(t)
	if _, err := conn.ExecContext(t.Context(), "SET @dp_epsilon = 1"); err != nil {
		t.Fatal(err)
	}
	run := func(c *sql.Conn, q string) string {
		rows, err := c.QueryContext(t.Context(), q)
		if err != nil {
			return "error " + err.Error()
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		var out []string
		for rows.Next() {
			cells := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cells))
			for i := range cells {
				ptrs[i] = &cells[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				return "scan: " + err.Error()
			}
			for _, cell := range cells {
				out = append(out, strconv.Quote(cell.String))
			}
		}
		if err := rows.Err(); err != nil {
			return "error " + err.Error()
		}
		return strings.Join(out, " ")
	}
	for _, q := range []string{
		"SELECT CONCAT(AVG(y) * 0 + 1e21), CONCAT(COUNT(*) * 0 + 1e-7), CONCAT(AVG(y) * 0 - 1e15), CAST(AVG(y) * 0 + 1e-16 AS CHAR) FROM t",
		"SELECT COUNT(*) * 0 + 1e-7 LIKE '0.0%', COUNT(*) * 0 + 0.00001e0 LIKE '1e%', AVG(y) * 0 + 1e21 LIKE '1e21' FROM t",
	} {
		if got, want := run(conn, q), run(refConn, q); got != want {
			t.Errorf("%s:\n proxy   %s\n MariaDB %s", q, got, want)
		}
	}
}
