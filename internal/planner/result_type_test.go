package planner_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestJoinFollowsMySQL: the type of IF, CASE and COALESCE of two types
// (MariaDB's: IF(c, CAST(x AS UNSIGNED), -1) is a DECIMAL(20, 0)).
func TestJoinFollowsMySQL(t *testing.T) {
	const (
		n  = planner.ResultNull
		i  = planner.ResultBigint
		f  = planner.ResultDouble
		s  = planner.ResultText
		d  = planner.ResultDate
		dt = planner.ResultDateTime
		in = planner.ResultInt
		u  = planner.ResultUnsigned
	)
	dec := planner.DecimalType(5, 2)
	for _, c := range []struct{ a, b, want planner.ResultType }{
		{n, n, n}, {n, i, i}, {d, n, d}, {i, i, i}, {i, f, f}, {f, i, f}, {d, d, d}, {d, dt, dt}, {dt, d, dt},
		{d, i, planner.TextType(21)}, {f, dt, planner.TextType(23)}, {s, i, s}, {d, s, s}, {s, s, s},
		{planner.TextType(3), planner.TextType(300), planner.TextType(300)}, {planner.TextType(3), i, planner.TextType(21)},
		{planner.ResultFloat, planner.ResultFloat, planner.ResultFloat}, {planner.ResultFloat, i, f}, {dec, planner.ResultFloat, f},
		{in, i, i}, {in, in, in}, {u, u, u}, {u, i, planner.DecimalType(20, 0)}, {i, dec, planner.DecimalType(21, 2)},
		{dec, planner.DecimalType(30, 5), planner.DecimalType(30, 5)}, {dec, f, f}, {dec, s, s}, {n, dec, dec},
	} {
		if got := c.a.Join(c.b); got != c.want {
			t.Errorf("%v ⊔ %v = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestCellConvertsToTheColumnType: values become their column's Go type,
// and a value the type cannot hold is an error.
func TestCellConvertsToTheColumnType(t *testing.T) {
	for _, c := range []struct {
		t    planner.ResultType
		v    any
		want string // "%T %v", or "error"
	}{
		{planner.ResultDouble, int64(3), "float64 3"},
		{planner.ResultDouble, 2.5, "float64 2.5"},
		{planner.ResultBigint, 4.0, "int64 4"},
		{planner.ResultBigint, 4.5, "error"},
		{planner.ResultBigint, 1e300, "error"},
		{planner.ResultText, 2.5, "string 2.5"},
		{planner.ResultText, int64(7), "string 7"},
		{planner.ResultText, planner.Date("2024-01-02"), "string 2024-01-02"},
		{planner.ResultDateTime, planner.Date("2024-01-02"), "planner.DateTime 2024-01-02 00:00:00"},
		{planner.ResultDate, planner.DateTime("2024-01-02 10:00:00"), "error"},
		{planner.ResultDouble, "x", "error"},
		{planner.ResultNull, int64(1), "error"},
		{planner.ResultDate, nil, "<nil> <nil>"},
		{planner.ResultInt, int64(2024), "int64 2024"},
		{planner.ResultInt, int64(1 << 40), "error"},
		{planner.ResultUnsigned, int64(5), "uint64 5"},
		{planner.ResultUnsigned, uint64(1<<64 - 1), "uint64 18446744073709551615"},
		{planner.ResultUnsigned, int64(-1), "error"},
		{planner.ResultBigint, uint64(1 << 63), "error"},
		{planner.DecimalType(10, 2), planner.Decimal("1.6"), "planner.Decimal 1.60"},
		{planner.DecimalType(10, 2), planner.Decimal("-1.005"), "planner.Decimal -1.01"},
		{planner.DecimalType(10, 0), int64(-7), "planner.Decimal -7"},
		{planner.DecimalType(10, 1), 0.15, "planner.Decimal 0.2"},
		{planner.DecimalType(10, 1), "x", "error"},
		{planner.ResultDouble, planner.Decimal("1.25"), "float64 1.25"},
		{planner.ResultText, planner.Decimal("1.25"), "string 1.25"},
	} {
		got, err := c.t.Cell(c.v)
		s := fmt.Sprintf("%T %v", got, got)
		if err != nil {
			s = "error"
		}
		if s != c.want {
			t.Errorf("%v.Cell(%#v) = %s (%v), want %s", c.t, c.v, s, err, c.want)
		}
	}
}

// TestColumnTypesAreStatic plans statements and checks their column
// types, which follow from the statement and the catalog alone; then, on
// many random released rows (NULLs, integers, fractions and dates as the
// aggregates' types allow), every value PostProcess computes fits its
// column's type (ResultType.Cell), so that no answer ever needs another
// type than the one declared.
func TestColumnTypesAreStatic(t *testing.T) {
	cat := testCatalog()
	parser := sqlrewrite.NewParser(cat)
	p := planner.New(cat)
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct{ sql, want string }{
		{"SELECT state, COUNT(*), AVG(income), SUM(age), MIN(day) FROM pums GROUP BY state", "VARCHAR BIGINT DOUBLE DOUBLE DATE"},
		{"SELECT sex, IQR(income), IQR(income) + 1, MEDIAN(LEAST(age, income)) FROM pums GROUP BY sex", "BIGINT DOUBLE DOUBLE DOUBLE"},
		{"SELECT MEDIAN(LEAST(age, income)), IQR(income) FROM pums", "DOUBLE DOUBLE"},
		// GREATEST and LEAST of text and a number compare and return DOUBLEs.
		{"SELECT LEAST(COUNT(*), 'abc'), GREATEST('07', COUNT(*)), GREATEST(COUNT(*), NULL, 2), LEAST('a', MIN(day)) FROM pums", "DOUBLE DOUBLE BIGINT VARCHAR(10)"},
		{"SELECT sex, IF(AVG(income) > 30000, COUNT(*), 1.5), IF(AVG(income) > 30000, COUNT(*), 2) FROM pums GROUP BY sex", "BIGINT DECIMAL(20,1) BIGINT"},
		{"SELECT sex, IF(AVG(income) > 30000, MIN(day), AVG(income)), IF(AVG(income) > 30000, MIN(day), 'none'), COALESCE(MIN(day), MAX(day)) FROM pums GROUP BY sex",
			"BIGINT VARCHAR(23) VARCHAR(10) DATE"},
		{"SELECT sex, CASE WHEN COUNT(*) > 5 THEN 'many' ELSE COUNT(*) END, CASE WHEN COUNT(*) > 5 THEN AVG(age) END FROM pums GROUP BY sex", "BIGINT VARCHAR(21) DOUBLE"},
		{"SELECT sex, state, COUNT(*), SUM(income), AVG(income) FROM pums GROUP BY sex, state WITH ROLLUP", "BIGINT VARCHAR BIGINT DOUBLE DOUBLE"},
		{"SELECT state, RANK() OVER (ORDER BY COUNT(*)), SUM(COUNT(*)) OVER (), AVG(COUNT(*)) OVER (), MAX(AVG(income)) OVER (), SUM(AVG(income)) OVER () FROM pums GROUP BY state",
			"VARCHAR BIGINT BIGINT DECIMAL(23,4) DOUBLE DOUBLE"},
		{"SELECT COUNT(*), AVG(n), MAX(s), SUM(n), MIN(m) FROM (SELECT state AS s, COUNT(*) AS n, MIN(day) AS m FROM pums GROUP BY state) AS t", "BIGINT DECIMAL(23,4) VARCHAR BIGINT DATE"},
		{"SELECT name, COUNT(*) FROM pums GROUP BY name", "VARCHAR BIGINT"},
		// Buckets of an integer column are MariaDB's DECIMALs (checked
		// there over a BIGINT), of a real one DOUBLEs of the literals'
		// decimals.
		{"SELECT FLOOR(age / 2.5) * 2.5 AS b, COUNT(*) FROM pums GROUP BY b", "DECIMAL(23,1) BIGINT"},
		{"SELECT FLOOR(income / 2.5) * 2.5 AS b, COUNT(*) FROM pums WHERE income < 1000 GROUP BY b", "DOUBLE(decimals=1) BIGINT"},
		// Histograms from a synopsis: the bucket keys' type is MariaDB's
		// too.
		{"SELECT FLOOR(age / 10) * 10 AS b, COUNT(*) FROM people GROUP BY b", "DECIMAL(22,0) BIGINT"},
		{"SELECT FLOOR(age / 2.5) * 2.5 AS b, COUNT(*) FROM people GROUP BY b", "DECIMAL(23,1) BIGINT"},
		{"SELECT COUNT(*) * 2, AVG(income) / 2, FLOOR(AVG(income)), FLOOR(COUNT(*)), ROUND(COUNT(*)), ROUND(AVG(income), 1), ROUND(COUNT(*), 1), " +
			"DATEDIFF(MAX(day), MIN(day)), CONCAT(COUNT(*), 'x'), CAST(AVG(income) AS SIGNED), COUNT(*) > 3, -AVG(age), ABS(COUNT(*)) FROM pums",
			"BIGINT DOUBLE DOUBLE(decimals=0) BIGINT BIGINT DOUBLE(decimals=1) BIGINT BIGINT VARCHAR(22) BIGINT BIGINT DOUBLE BIGINT"},
		// Exact arithmetic as MySQL types it: quotients, decimal literals
		// and what is computed from them are DECIMALs; CAST(… AS
		// UNSIGNED) is a BIGINT UNSIGNED until it is negated.
		{"SELECT COUNT(*) / 3, 0.1 + COUNT(*) * 0, COUNT(*) * 1.50, MOD(COUNT(*), 0.7), COUNT(*) DIV 0.7, CAST(AVG(income) AS DECIMAL(10,2)), " +
			"CAST(COUNT(*) AS UNSIGNED) + 1, -CAST(COUNT(*) AS UNSIGNED), ROUND(COUNT(*) / 3, 2), ROUND(COUNT(*), -1), FLOOR(COUNT(*) / 7), " +
			"IF(COUNT(*) > 5, CAST(COUNT(*) AS UNSIGNED), -1), AVG(income) + 0.5, CONCAT(COUNT(*) / 3), CAST(COUNT(*) - 50000 AS UNSIGNED) FROM pums",
			"DECIMAL(23,4) DECIMAL(21,1) DECIMAL(22,2) DECIMAL(20,1) BIGINT DECIMAL(10,2) BIGINT UNSIGNED BIGINT DECIMAL(22,2) DECIMAL(20,0) DECIMAL(20,0) " +
				"DECIMAL(20,0) DOUBLE VARCHAR(25) BIGINT UNSIGNED"},
		// MIN and MAX of an integer column are integers, as in MySQL (other
		// quantiles and a real column's stay DOUBLE); a date part key is an
		// INT.
		{"SELECT MIN(age), MAX(age), MIN(income), MAX(age) - MIN(age), MEDIAN(age), MIN(100 - age) FROM pums", "BIGINT BIGINT DOUBLE BIGINT DOUBLE BIGINT"},
		{"SELECT YEAR(day), MONTH(day), COUNT(*), YEAR(day) + 1 FROM pums GROUP BY YEAR(day), MONTH(day)", "INT INT BIGINT BIGINT"},
		{"SELECT state, SUM(COUNT(*) / 4) OVER (), AVG(COUNT(*) * 0.5) OVER (), MIN(COUNT(*) / 4) OVER () FROM pums GROUP BY state",
			"VARCHAR DECIMAL(65,4) DECIMAL(25,5) DECIMAL(23,4)"},
		// ROUND, TRUNCATE, FLOOR and CEIL of a DOUBLE fix its decimals, and
		// what is computed from them keeps them as MariaDB does: the most
		// of the operands or arguments, 4 more for /, AVG and the
		// variances, none fixed past 30.
		{"SELECT ROUND(AVG(income), 2) + 1, FLOOR(AVG(income)) / 2, ROUND(AVG(income), 2) + SQRT(AVG(income)), IF(COUNT(*) > 3, ROUND(AVG(income), 2), 1.555), " +
			"IF(COUNT(*) > 3, ROUND(AVG(income), 2), AVG(income)), ABS(ROUND(AVG(income), 3)), ROUND(AVG(income), 40), ROUND(AVG(income), -2), ROUND(AVG(income), COUNT(*)), " +
			"ROUND(AVG(income), 1 + 1), ROUND(AVG(income), NULL), CEIL(AVG(income)) * 1.5, ROUND(COUNT(*) / 3, '1') FROM pums",
			"DOUBLE(decimals=2) DOUBLE(decimals=4) DOUBLE DOUBLE(decimals=3) DOUBLE DOUBLE(decimals=3) DOUBLE DOUBLE(decimals=0) DOUBLE " +
				"DOUBLE(decimals=2) DOUBLE DOUBLE(decimals=1) DECIMAL(21,1)"},
		{"SELECT state, SUM(ROUND(AVG(income), 2)) OVER (), AVG(ROUND(AVG(income), 2)) OVER (), MAX(FLOOR(AVG(income))) OVER () FROM pums GROUP BY state",
			"VARCHAR DOUBLE(decimals=2) DOUBLE(decimals=6) DOUBLE(decimals=0)"},
		{"SELECT SUM(a), AVG(a), MIN(a), VAR_POP(a), STDDEV_SAMP(n), VAR_SAMP(f) FROM (SELECT state, ROUND(AVG(income), 2) AS a, COUNT(*) AS n, FLOOR(AVG(income)) AS f FROM pums GROUP BY state) AS t",
			"DOUBLE(decimals=2) DOUBLE(decimals=6) DOUBLE(decimals=2) DOUBLE(decimals=6) DOUBLE(decimals=4) DOUBLE(decimals=4)"},
	} {
		st, err := parser.Parse(c.sql)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		var types []planner.ResultType
		var q *sqlrewrite.Query
		var qp *planner.QueryPlan
		switch st := st.(type) {
		case *sqlrewrite.Query:
			if qp, err = p.PlanQuery(st, planner.Settings{Epsilon: 1, Delta: 1e-6, Mechanism: "auto"}); err != nil {
				t.Errorf("%s: %v", c.sql, err)
				continue
			}
			q, types = st, qp.ColumnTypes()
		case *sqlrewrite.Select:
			plan, err := p.Plan(st, planner.Settings{Epsilon: 1, Delta: 1e-6, Mechanism: "auto"})
			if err != nil {
				t.Errorf("%s: %v", c.sql, err)
				continue
			}
			if plan.Synopsis == nil || plan.Synopsis.Buckets == nil {
				t.Errorf("%s: not a histogram", c.sql)
			}
			types = plan.ColumnTypes()
		}
		var names []string
		for _, ty := range types {
			names = append(names, ty.String())
		}
		if got := strings.Join(names, " "); got != c.want {
			t.Errorf("%s: types %s, want %s", c.sql, got, c.want)
		}
		if q == nil {
			continue
		}
		aggTypes := make([]planner.ResultType, len(q.Base.Items))
		if qp.Base != nil {
			for i := range qp.Base.Outputs {
				aggTypes[i] = qp.Base.Outputs[i].ResultType()
			}
		}
		for range 200 {
			rows := randomReleased(r, qp, aggTypes)
			out, _, err := planner.PostProcess(q, rows)
			if err != nil {
				t.Fatalf("%s: %v", c.sql, err)
			}
			for _, row := range out {
				for j, d := range row {
					if _, err := types[j].Cell(d.Value()); err != nil {
						t.Fatalf("%s: column %d: %v", c.sql, j, err)
					}
				}
			}
		}
	}
}

// randomReleased is one released row per group of qp (a partition-selected
// key takes one of two values), each aggregate NULL, an integer or, where
// its type allows, a fraction or a date.
func randomReleased(r *rand.Rand, qp *planner.QueryPlan, aggTypes []planner.ResultType) []planner.Row {
	var rows []planner.Row
	for _, g := range qp.Groups {
		keys := [][]sqlrewrite.Value{g}
		if qp.Selection != nil {
			keys = nil
			for _, v := range []string{"ann", "bob"} {
				k := append([]sqlrewrite.Value{}, g[:qp.SelectedKey]...)
				k = append(k, sqlrewrite.Value{Str: v, IsText: true})
				keys = append(keys, append(k, g[qp.SelectedKey:]...))
			}
		}
		for _, k := range keys {
			row := planner.Row{Keys: k}
			for _, ty := range aggTypes {
				var d planner.Datum
				switch {
				case r.IntN(4) == 0:
					d.Null = true
				case ty == planner.ResultDate:
					d = planner.Datum{Str: fmt.Sprintf("2024-%02d-%02d", 1+r.IntN(12), 1+r.IntN(28)), IsText: true, Temporal: catalog.Date}
				case ty == planner.ResultBigint || r.IntN(2) == 0:
					d = planner.Datum{Num: float64(r.IntN(100000) - 10), Int: ty == planner.ResultBigint}
				default:
					d = planner.Datum{Num: r.Float64()*1e5 - 10, Double: true} // as exec reads a released DOUBLE
				}
				row.Aggs = append(row.Aggs, d)
			}
			rows = append(rows, row)
		}
	}
	return rows
}
