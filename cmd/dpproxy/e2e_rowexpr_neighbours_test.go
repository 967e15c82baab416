package main

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// The row-expression neighbour test (TestRowExpressionNeighbours) runs
// rowExprStatements generated statements, from the seed rowExprSeed;
// DPPROXY_ROWEXPR_SEED and DPPROXY_ROWEXPR_STATEMENTS override them (a
// failure prints the seed and the statement's number, so that it
// reproduces).
const (
	rowExprSeed       = 20261127
	rowExprStatements = 200
)

// neighbourRow is one row of the neighbour tables, each value an SQL
// literal of the backend's dialect for the columns x, y (real), a, b
// (integer), s (text), d (date) and ts (timestamp).
type neighbourRow struct {
	name                 string
	x, y, a, b, s, d, ts string
}

// neighbourBackend is a backend, the types of the columns x, y, a, b, s,
// d and ts there, the statements its loading session runs first, and the
// hostile rows it can store.
type neighbourBackend struct {
	name, driver string
	dsn          func(testing.TB) string
	types        [7]string
	setup        []string
	hostile      []neighbourRow
}

// The rows every backend stores: values at and beyond the declared
// bounds (clamped), the zeros and minus ones of divisions and
// logarithms, and NULL, alone and mixed with ordinary values.
var commonHostile = []neighbourRow{
	{"zero", "0", "0", "0", "0", "''", "'1970-01-01'", "'1970-01-01 00:00:00'"},
	{"minus-one", "-1", "-1", "-1", "-1", "'-1'", "'1969-12-31'", "'1969-12-31 23:59:59'"},
	{"one", "1", "1", "1", "1", "'1'", "'2000-01-01'", "'2000-01-01 00:00:00'"},
	{"null", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL"},
	{"null-and-zero", "NULL", "0", "0", "NULL", "'abc'", "NULL", "'2021-05-06 10:11:12'"},
	{"zero-and-null", "0", "NULL", "NULL", "0", "NULL", "'2021-05-06'", "NULL"},
	{"upper-bounds", "100", "1000", "50", "10", "'ALPHA'", "'2030-12-31'", "'2030-12-31 23:59:59'"},
	{"beyond-bounds", "1e6", "-5", "1000", "-3", "'alpha '", "'2099-01-01'", "'1999-12-31 23:59:59'"},
}

var neighbourBackends = []neighbourBackend{
	{"sqlite", "sqlite", testdb.SQLiteDSN, [7]string{"REAL", "REAL", "INTEGER", "INTEGER", "TEXT", "DATE", "TIMESTAMP"}, nil, []neighbourRow{
		{"huge", "1e300", "-1e300", "9223372036854775807", "-9223372036854775808", "'" + strings.Repeat("x", 20000) + "'", "'9999-12-31'", "'9999-12-31 23:59:59'"},
		{"tiny", "1e-200", "-5e-324", "1e-200", "-1e-200", "'%_!'", "'0001-01-01'", "'0001-01-01 00:00:00'"},
		{"infinite", "9e999", "-9e999", "9e999", "-9e999", "'NaN'", "'0000-00-00'", "'0000-00-00 00:00:00'"},
		{"text", "'abc'", "x'00ff'", "'abc'", "'12'", "x'00ff'", "'garbage'", "'2021-02-30 25:61:61'"},
		{"numeric-text", "'1e-200'", "'12.5'", "'-0'", "'7'", "123", "12345", "1.5"},
		{"odd-dates", "5", "5", "5", "5", "'😀'", "'2021-13-45'", "'now'"},
		{"iso-dates", "5", "5", "5", "5", "' '", "'2021-05-06T10:11:12Z'", "'2021-05-06 10:11:12.999999'"},
	}},
	{"postgres", "postgres", testdb.PostgresDSN, [7]string{"DOUBLE PRECISION", "DOUBLE PRECISION", "BIGINT", "BIGINT", "TEXT", "DATE", "TIMESTAMP"}, nil, []neighbourRow{
		{"huge", "1e300", "-1e300", "9223372036854775807", "-9223372036854775808", "repeat('x', 100000)", "'5874897-12-31'", "'294276-12-31 23:59:59'"},
		{"tiny", "1e-200", "-4.9e-324", "1", "-1", "'%_!'", "'4713-01-01 BC'", "'4713-01-01 00:00:00 BC'"},
		{"nan", "'NaN'", "'NaN'", "0", "0", "'NaN'", "'infinity'", "'-infinity'"},
		{"infinite", "'Infinity'", "'-Infinity'", "9223372036854775807", "-9223372036854775808", "'😀'", "'-infinity'", "'infinity'"},
		{"max", "1.7976931348623157e308", "-1.7976931348623157e308", "-9223372036854775808", "9223372036854775807", "'1e400'", "'0001-01-01'", "'0001-01-01 00:00:00'"},
		{"fraction", "-0.5", "0.5", "2", "3", "' '", "'9999-12-31'", "'2021-05-06 10:11:12.999999'"},
	}},
	{"mariadb", "mysql", testdb.MySQLDSN, [7]string{"DOUBLE", "DOUBLE", "BIGINT", "BIGINT", "TEXT", "DATE", "DATETIME(6)"}, []string{"SET SESSION sql_mode = 'ALLOW_INVALID_DATES'"}, []neighbourRow{
		{"huge", "1e300", "-1e300", "9223372036854775807", "-9223372036854775808", "REPEAT('x', 60000)", "'9999-12-31'", "'9999-12-31 23:59:59.999999'"},
		{"tiny", "1e-200", "2.2250738585072014e-308", "1", "-1", "'%_!'", "'0001-01-01'", "'0001-01-01 00:00:00'"},
		{"zero-dates", "5", "5", "5", "5", "'NaN'", "'0000-00-00'", "'0000-00-00 00:00:00'"},
		{"zero-in-dates", "5", "5", "5", "5", "'😀'", "'2021-00-15'", "'2021-05-00 10:00:00'"},
		{"invalid-dates", "5", "5", "5", "5", "' '", "'2021-02-30'", "'2021-02-31 23:59:59.5'"},
		{"max", "1.7976931348623157e308", "-1.7976931348623157e308", "-9223372036854775808", "9223372036854775807", "'1e400'", "'1000-01-01'", "'1000-01-01 00:00:00'"},
	}},
}

// TestRowExpressionNeighbours checks dpproxy's rule that whether a
// statement answers, errs or answers NULL never depends on the data
// except through released noise, for row expressions: it generates
// statements from the grammar of row expressions (arithmetic, the numeric
// functions, LEAST/GREATEST, COALESCE, NULLIF, IF and CASE, numeric
// casts, date differences and parts, text and date conditions) in
// WHERE, inside SUM, AVG, MEDIAN, PERCENTILE_CONT, VARIANCE, MIN and MAX,
// in counts of a condition and as GROUP BY keys, and runs each through
// the real proxy at ε = 100 on SQLite, PostgreSQL and MariaDB, on a table
// of ordinary rows and on neighbours of it that hold one more row each:
// zeros, minus ones, NULLs, values at and beyond the bounds, huge, tiny
// and non-finite numbers, text in numeric columns, dates at the ends of
// each backend's range and dates that are none. The outcome (an error's code, or the
// number of rows and which values are NULL) must be the same on every
// neighbour: a difference tells the analyst what the row holds, without
// noise. Every other statement reads tables with a privacy unit (the
// extra row a unit of its own), whose fetches bound each unit's rows. A
// refusal is fine (it depends on the statement alone), but the ordinary
// rows must answer a good share of the statements, so that the generator
// keeps testing what the proxy runs.
func TestRowExpressionNeighbours(t *testing.T) {
	seed, n := uint64(rowExprSeed), rowExprStatements
	if s := os.Getenv("DPPROXY_ROWEXPR_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("DPPROXY_ROWEXPR_SEED: %v", err)
		}
		seed = v
	}
	if s := os.Getenv("DPPROXY_ROWEXPR_STATEMENTS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("DPPROXY_ROWEXPR_STATEMENTS: %v", err)
		}
		n = v
	}
	statements := generateRowExprStatements(seed, n)
	for _, b := range neighbourBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			runNeighbours(t, b, seed, statements)
		})
	}
}

// runNeighbours loads the neighbour tables on b, starts the proxy on them
// and compares every statement's outcome on each neighbour with that on
// the ordinary rows.
func runNeighbours(t *testing.T, b neighbourBackend, seed uint64, statements []string) {
	dsn := b.dsn(t)
	db := testdb.Open(t, b.driver, dsn)
	db.SetMaxOpenConns(1) // the setup's session settings hold for the loading
	for _, s := range b.setup {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	// The tables n0 (the ordinary rows) and n1, n2, … (and one hostile
	// row each), and the same with a privacy unit u0, u1, …
	rows := append(append([]neighbourRow{}, commonHostile...), b.hostile...)
	var decl strings.Builder
	for i := range len(rows) + 1 {
		var extra *neighbourRow
		if i > 0 {
			extra = &rows[i-1]
		}
		for _, unit := range []bool{false, true} {
			name := fmt.Sprintf("n%d", i)
			bound := ""
			if unit {
				name = fmt.Sprintf("u%d", i)
				bound = "\n    privacy_unit: u\n    max_rows_per_unit: 3\n    max_groups_per_unit: 2"
			}
			loadNeighbour(t, db, b, name, extra)
			fmt.Fprintf(&decl, `  - name: %s%s
    epsilon: 1.0e+12
    delta: 0.5
    columns:
      - {name: x, type: real, lower: -100, upper: 100}
      - {name: y, type: real, lower: 0, upper: 1000}
      - {name: a, type: integer, lower: -50, upper: 50}
      - {name: b, type: integer, lower: 0, upper: 10}
      - {name: s, type: text}
      - {name: d, type: date, lower: '2000-01-01', upper: '2030-12-31'}
      - {name: ts, type: timestamp, lower: '2000-01-01 00:00:00', upper: '2030-12-31 23:59:59'}
`, name, bound)
		}
	}
	conn := connectAtHighEpsilon(t, b.driver, dsn, decl.String())
	if _, err := conn.Exec("SET @dp_delta = 1e-5"); err != nil {
		t.Fatal(err)
	}
	start, answered, refused, failures := time.Now(), 0, 0, 0
	for i, s := range statements {
		prefix := "n"
		if i%2 == 1 {
			prefix = "u"
		}
		on := func(k int) string { return strings.ReplaceAll(s, "{T}", prefix+strconv.Itoa(k)) }
		base, baseDetail := neighbourOutcome(conn, on(0))
		switch {
		case base == "error 1235", base == "error 1231":
			// Not supported, or (1231) no mechanism takes the expression's
			// derived bounds (a constant one): the statement's own.
			refused++
		case strings.HasPrefix(base, "error"):
			failures++
			t.Errorf("seed %d, statement %d: %s\n  on the ordinary rows: %s", seed, i, on(0), baseDetail)
		default:
			answered++
		}
		for j, r := range rows {
			got, detail := neighbourOutcome(conn, on(j+1))
			if got == base {
				continue
			}
			failures++
			if failures <= 30 {
				t.Errorf("seed %d, statement %d: %s\n  on the ordinary rows: %s\n  with the row %s (x=%s, y=%s, a=%s, b=%s, s=%.40s, d=%s, ts=%s): %s",
					seed, i, on(j+1), baseDetail, r.name, r.x, r.y, r.a, r.b, r.s, r.d, r.ts, detail)
			}
		}
	}
	t.Logf("%d statements on the ordinary rows and %d neighbours in %v: %d answered, %d refused on the ordinary rows", len(statements), len(rows), time.Since(start).Round(time.Millisecond), answered, refused)
	if answered < len(statements)/3 {
		t.Errorf("only %d of %d generated statements answered on the ordinary rows: the generator no longer tests what the proxy runs", answered, len(statements))
	}
}

// loadNeighbour creates the table name(u, x, y, a, b, s, d, ts) with the
// ordinary rows, three of each unit u, and, if extra is set, that row too,
// a unit of its own.
func loadNeighbour(t *testing.T, db *sql.DB, b neighbourBackend, name string, extra *neighbourRow) {
	t.Helper()
	ty := b.types
	stmts := []string{
		"DROP TABLE IF EXISTS " + name,
		fmt.Sprintf("CREATE TABLE %s (u %s, x %s, y %s, a %s, b %s, s %s, d %s, ts %s)", name, ty[2], ty[0], ty[1], ty[2], ty[3], ty[4], ty[5], ty[6]),
	}
	var sb strings.Builder
	sb.WriteString("INSERT INTO " + name + " (u, x, y, a, b, s, d, ts) VALUES ")
	texts := []string{"alpha", "Beta", "gamma", "delta x", "épsilon", "zeta_1"}
	day := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 30 {
		if i > 0 {
			sb.WriteString(", ")
		}
		a := (i*17)%81 - 40
		if a >= -1 && a <= 1 {
			a = 7
		}
		d := day.AddDate(0, 0, i*211)
		ts := d.Add(time.Duration(i*3671) * time.Second)
		fmt.Fprintf(&sb, "(%d, %g, %g, %d, %d, '%s', '%s', '%s')", i/3, float64((i*37)%181-90)+0.37, float64((i*53)%997)+0.5, a, 2+i%8,
			texts[i%len(texts)], d.Format(time.DateOnly), ts.Format(time.DateTime))
	}
	stmts = append(stmts, sb.String())
	if r := extra; r != nil {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO %s (u, x, y, a, b, s, d, ts) VALUES (1000, %s, %s, %s, %s, %s, %s, %s)", name, r.x, r.y, r.a, r.b, r.s, r.d, r.ts))
	}
	execAll(t, db, stmts)
}

// neighbourOutcome runs q and returns what an analyst sees of it without
// the numbers: "error N", or the number of rows and where a value is NULL
// ("3 rows, NULL at 2.1": the second row's first value); and, for
// messages, the same with the error's text or the first values.
func neighbourOutcome(db *sql.DB, q string) (class, detail string) {
	rows, err := db.Query(q)
	if err != nil {
		return fmt.Sprintf("error %d", mysqlCode(err)), err.Error()
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return fmt.Sprintf("error %d", mysqlCode(err)), err.Error()
	}
	var nulls, values []string
	n := 0
	for rows.Next() {
		raw := make([]sql.NullString, len(cols))
		dest := make([]any, len(cols))
		for i := range raw {
			dest[i] = &raw[i]
		}
		if err := rows.Scan(dest...); err != nil {
			return fmt.Sprintf("error %d", mysqlCode(err)), err.Error()
		}
		n++
		vals := make([]string, len(raw))
		for i, r := range raw {
			vals[i] = r.String
			if !r.Valid {
				vals[i] = "NULL"
				nulls = append(nulls, fmt.Sprintf("%d.%d", n, i+1))
			}
		}
		if len(values) < 5 {
			values = append(values, "("+strings.Join(vals, ", ")+")")
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Sprintf("error %d", mysqlCode(err)), err.Error()
	}
	class = fmt.Sprintf("%d rows", n)
	if len(nulls) > 0 {
		class += ", NULL at " + strings.Join(nulls, " ")
	}
	return class, class + ": " + strings.Join(values, " ")
}

// rowExprGen generates statements of row expressions over the neighbour
// tables' columns (rowExprGen.statement), from the grammar dpproxy reads
// and a little beyond it (a refusal is an outcome too).
type rowExprGen struct{ rng *rand.Rand }

// generateRowExprStatements returns n statements from the seed, each
// with {T} for its table.
func generateRowExprStatements(seed uint64, n int) []string {
	g := rowExprGen{rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	out := make([]string, n)
	for i := range out {
		out[i] = g.statement()
	}
	return out
}

func (g rowExprGen) pick(xs ...string) string { return xs[g.rng.IntN(len(xs))] }

// statement is one SELECT on {T}: aggregates of row expressions, counts
// of conditions, a WHERE of conditions, or a GROUP BY of a row expression
// or a date.
func (g rowExprGen) statement() string {
	e := func() string { return g.column(2 + g.rng.IntN(2)) }
	c := func() string { return g.cond(2) }
	switch g.rng.IntN(14) {
	case 0, 1:
		return "SELECT SUM(" + e() + ") FROM {T}"
	case 2, 3:
		return "SELECT AVG(" + e() + ") FROM {T}"
	case 4:
		return "SELECT SUM(" + e() + "), AVG(" + e() + ") FROM {T} WHERE " + c()
	case 5, 6:
		return "SELECT COUNT(*) FROM {T} WHERE " + c()
	case 7:
		return "SELECT SUM(CASE WHEN " + c() + " THEN 1 ELSE 0 END) FROM {T}"
	case 8:
		return "SELECT COUNT(CASE WHEN " + c() + " THEN 1 END), SUM(IF(" + c() + ", 1, 0)) FROM {T}"
	case 9:
		return "SELECT AVG(" + g.cond(1) + ") FROM {T}"
	case 10:
		if g.rng.IntN(5) == 0 {
			return "SELECT PERCENTILE_CONT(" + e() + ", 0.9) FROM {T}"
		}
		return "SELECT " + g.pick("MEDIAN", "VARIANCE", "STDDEV", "MIN", "MAX") + "(" + e() + ") FROM {T}"
	case 11:
		key := g.pick("SIGN(%s)", "FLOOR(%s / 10) * 10", "ROUND(%s, -1)", "CASE WHEN %s < 0 THEN 'neg' ELSE 'pos' END", "FLOOR(LOG10(ABS(%s) + 1))")
		return "SELECT " + fmt.Sprintf(key, e()) + " AS g, COUNT(*) FROM {T} GROUP BY g"
	case 12:
		key := g.pick("YEAR(d)", "MONTH(ts)", "DATE_FORMAT(d, '%Y-%m')", "HOUR(ts)", "DAYOFWEEK(d)", "QUARTER(ts)", "UNIX_TIMESTAMP(ts) DIV 86400 * 86400")
		return "SELECT " + key + " AS g, COUNT(*) FROM {T} WHERE d >= '2021-01-01' AND d < '2021-04-01' AND ts >= '2021-01-01 00:00:00' AND ts < '2021-01-05 00:00:00' GROUP BY g"
	}
	return "SELECT SUM(" + e() + ") FROM {T} WHERE " + c()
}

// column is num with at least one column in it: an aggregate of
// constants alone is post-processing of a released count, whose outcome
// (1e6 * COUNT(*) past the largest DECIMAL) may depend on its noise.
func (g rowExprGen) column(depth int) string {
	for {
		s := g.num(depth)
		if strings.ContainsAny(s, "xyabdt") {
			return s
		}
	}
}

// num is a numeric row expression of at most depth nested operations.
func (g rowExprGen) num(depth int) string {
	if depth <= 0 || g.rng.IntN(5) == 0 {
		return g.atom()
	}
	sub := func() string { return g.num(depth - 1) }
	switch g.rng.IntN(9) {
	case 0, 1, 2:
		return "(" + sub() + " " + g.pick("+", "-", "*", "/", "+", "*") + " " + sub() + ")"
	case 3, 4:
		return fmt.Sprintf(g.unary(), sub())
	case 5:
		if g.rng.IntN(3) == 0 {
			return g.pick("GREATEST", "LEAST") + "(" + sub() + ", " + sub() + ", " + sub() + ")"
		}
		return g.pick("GREATEST", "LEAST") + "(" + sub() + ", " + sub() + ")"
	case 6:
		return "IF(" + g.when() + ", " + sub() + ", " + sub() + ")"
	case 7:
		s := "CASE WHEN " + g.when() + " THEN " + sub()
		if g.rng.IntN(2) == 0 {
			s += " WHEN " + g.when() + " THEN " + g.pick(sub(), "NULL")
		}
		if g.rng.IntN(3) > 0 {
			s += " ELSE " + sub()
		}
		return s + " END"
	}
	return "CASE " + g.pick("a", "b") + " WHEN " + g.pick("0", "1", "3") + " THEN " + sub() + " ELSE " + sub() + " END"
}

// unary is a function of one row expression, %s its argument.
func (g rowExprGen) unary() string {
	return g.pick(
		"-%s", "ABS(%s)", "SIGN(%s)", "FLOOR(%s)", "CEIL(%s)", "CEILING(%s)", "ROUND(%s)",
		"ROUND(%s, "+g.pick("-2", "-1", "1", "2", "16")+")", "TRUNCATE(%s, "+g.pick("-1", "0", "2")+")",
		"SQRT(%s)", "SQRT(ABS(%s))", "SQRT(GREATEST(%s, 0))", "POW(%s, 0.5)",
		"LN(%s)", "LN(ABS(%s) + 1)", "LOG(%s)", "LOG(2, ABS(%s) + 1)", "LOG2(GREATEST(%s, 1))", "LOG10(ABS(%s) + 1)",
		"EXP(%s)", "EXP(LEAST(GREATEST(%s, -10), 10))", "EXP(%s / 100)",
		"POW(%s, "+g.pick("2", "3", "4", "5", "-1")+")", "POWER(%s, 2)",
		"%s DIV "+g.pick("1", "3", "7", "0", "-2"), "%s %% "+g.pick("2", "3", "0.5", "-4", "0"), "MOD(%s, "+g.pick("3", "7")+")", "%s MOD 5",
		"CAST(%s AS SIGNED)", "CAST(%s AS UNSIGNED)", "CAST(%s AS DOUBLE)", "CAST(%s AS DECIMAL(10, 2))", "CAST(%s AS DECIMAL(4, 1))", "CONVERT(%s, SIGNED)",
		"NULLIF(%s, "+g.pick("0", "1")+")",
	)
}

// atom is a column, a number, or a number of a date, a timestamp or a
// missing value.
func (g rowExprGen) atom() string {
	switch g.rng.IntN(3) {
	case 0:
		return g.pick("x", "y", "a", "b", "x", "a")
	case 1:
		return g.pick("0", "1", "2", "-1", "0.5", "2.5", "10", "100", "1000", "1e-3", "3.75", "1e6", "-7")
	}
	return g.pick(
		"DATEDIFF(d, '2020-01-01')", "DATEDIFF('2030-06-30', d)", "DATEDIFF(ts, d)", "DATEDIFF(NOW(), ts)",
		"TIMESTAMPDIFF("+g.pick("SECOND", "MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "QUARTER", "YEAR")+", ts, '2024-06-30 12:00:00')",
		"TIMESTAMPDIFF(MONTH, d, ts)", "TIMESTAMPDIFF(YEAR, d, CURDATE())", "TIMESTAMPDIFF(MICROSECOND, d, ts)",
		"YEAR(d)", "MONTH(ts)", "DAY(d)", "DAYOFMONTH(ts)", "HOUR(ts)", "MINUTE(ts)", "SECOND(ts)", "QUARTER(d)",
		"DAYOFWEEK(d)", "WEEKDAY(ts)", "DAYOFYEAR(d)", "EXTRACT(MONTH FROM ts)", "EXTRACT(YEAR FROM d)",
		"UNIX_TIMESTAMP(ts)", "UNIX_TIMESTAMP(d)", "COALESCE(x, 0)", "IFNULL(a, -1)", "COALESCE(b, 5)",
	)
}

// when is a condition of a CASE or IF inside a row expression: mostly an
// AND of conditions on one column each (what dpproxy reads there), else
// any condition.
func (g rowExprGen) when() string {
	if g.rng.IntN(5) == 0 {
		return g.cond(1)
	}
	s := g.simple()
	if g.rng.IntN(3) == 0 {
		s += " AND " + g.simple()
	}
	return s
}

// simple is a condition on one column.
func (g rowExprGen) simple() string {
	switch g.rng.IntN(4) {
	case 0:
		return g.pick("x", "y", "a", "b") + " " + g.pick("<", "<=", ">", ">=", "=") + " " + g.pick("0", "1", "-1", "2.5", "10", "100")
	case 1:
		return g.pick("x", "y", "a", "b") + " " + g.pick("IN (1, 2, 3)", "IS NULL", "IS NOT NULL", "BETWEEN 0 AND 5", "BETWEEN -10 AND 10.5")
	case 2:
		return g.pick("s LIKE 'a%'", "LOCATE('a', s) > 0", "LEFT(s, 2) = 'ab'", "s = 'gamma'", "s IN ('alpha', 'Beta')", "s IS NULL", "LOWER(s) = 'beta'")
	}
	return g.pick("d >= '2021-01-01'", "d < '2025-01-01'", "ts BETWEEN '2021-01-01 00:00:00' AND '2022-06-30 12:00:00'", "d IS NULL", "ts >= '2010-01-01'")
}

// cond is a condition of at most depth nested AND, OR and NOT.
func (g rowExprGen) cond(depth int) string {
	if depth > 0 && g.rng.IntN(3) == 0 {
		switch g.rng.IntN(3) {
		case 0:
			return "(" + g.cond(depth-1) + " AND " + g.cond(depth-1) + ")"
		case 1:
			return "(" + g.cond(depth-1) + " OR " + g.cond(depth-1) + ")"
		}
		return "NOT (" + g.cond(depth-1) + ")"
	}
	e := func() string { return g.column(1 + g.rng.IntN(2)) }
	cmp := func() string { return g.pick("<", "<=", ">", ">=", "=", "<>") }
	switch g.rng.IntN(9) {
	case 0, 1:
		return e() + " " + cmp() + " " + g.pick("0", "1", "-1", "2.5", "10", "100")
	case 2:
		return e() + " " + cmp() + " " + e()
	case 3:
		return e() + " BETWEEN " + g.pick("-1 AND 1", "0 AND 10", "10 AND 100")
	case 4:
		return g.pick("x", "y", "a", "b") + " " + g.pick("IN (1, 2, 3)", "NOT IN (0, 5)", "IS NULL", "IS NOT NULL", "IS TRUE", "IS NOT FALSE", "BETWEEN 0 AND 5")
	case 5:
		return g.pick("b", "NOT a", "s IS NULL", "d IS NOT NULL", "ts IS NULL")
	case 6:
		return g.pick("s LIKE 'a%'", "s NOT LIKE '%b_'", "LOWER(s) LIKE '%x%'", "LOCATE('a', s) > 0", "INSTR(s, 'z') = 0",
			"LEFT(s, 2) = 'ab'", "RIGHT(s, 1) <> 'a'", "SUBSTRING(s, 1, 3) = 'alp'", "UPPER(s) = 'BETA'", "s = 'gamma'",
			"s IN ('alpha', 'Beta')", "s > 'm'", "CHAR_LENGTH(s) > 3", "s LIKE '%!%%' ESCAPE '!'")
	}
	return g.pick("d >= '2021-01-01'", "d < DATE '2025-01-01'", "ts BETWEEN '2021-01-01 00:00:00' AND '2022-06-30 12:00:00'",
		"d > CURDATE() - INTERVAL 5 YEAR", "ts >= DATE_SUB(NOW(), INTERVAL 3 MONTH)", "d >= DATE_ADD('2020-01-01', INTERVAL 1 MONTH)",
		"YEAR(d) = 2021", "MONTH(ts) IN (1, 12)", "HOUR(ts) BETWEEN 9 AND 17", "DAYOFWEEK(d) IN (1, 7)", "DATE(ts) = '2021-05-06'",
		"DATE_FORMAT(d, '%Y-%m') = '2021-05'", "ts < NOW()", "DATEDIFF(ts, d) > 1", "TIMESTAMPDIFF(HOUR, d, ts) < 12")
}
