package planner_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestExactPostProcessing evaluates post-processing over one released row
// (COUNT(*) = 3000, an integer; AVG(income) = 2.5, a DOUBLE) and checks
// each cell as the client receives it (Value, then Cell into the column's
// static type), the column types and the CAST warnings against what
// MariaDB 10.11 answers for the same expressions (checked by hand there,
// and end to end by TestExactArithmeticAsMariaDB): integers and decimal
// literals are exact, a quotient is a DECIMAL with four more decimals than
// its dividend, truncated after whole words of nine digits and compared
// at its type's decimals; integers beyond BIGINT (or BIGINT UNSIGNED) are
// 1690. In float64, 0.1 + 0.2 = 0.3 was 0, COUNT(*) / 7 = 428.5714 was 0,
// MOD(COUNT(*), 0.7) was 0.5000000000001903, COUNT(*) * 3074457345618258
// was 9223372036854773760, CAST(… AS DECIMAL(10, 2)) kept every digit of
// a DOUBLE and CAST(COUNT(*) AS UNSIGNED) - 3001 was -1.
func TestExactPostProcessing(t *testing.T) {
	parser := sqlrewrite.NewParser(testCatalog())
	p := planner.New(testCatalog())
	for _, c := range []struct{ sql, types, want, warnings string }{
		{"SELECT 0.1 + 0.2 = 0.3 + COUNT(*) * 0, 0.1 + 0.2 + COUNT(*) * 0, COUNT(*) / 7 = 428.5714, COUNT(*) / 7, MOD(COUNT(*), 0.7), CONCAT(COUNT(*) / 7)",
			"BIGINT DECIMAL(21,1) BIGINT DECIMAL(23,4) DECIMAL(20,1) VARCHAR(25)", "1 0.3 1 428.5714 0.5 428.5714", ""},
		{"SELECT COUNT(*) / 9 * 9, COUNT(*) / 9 / 9, COUNT(*) / 9 = 333.33333333, COUNT(*) / 9 = 333.3333, COUNT(*) * 1.50, -COUNT(*) / 7 * 1000000000",
			"DECIMAL(42,4) DECIMAL(27,8) BIGINT BIGINT DECIMAL(22,2) DECIMAL(42,4)", "3000.0000 37.03703704 0 1 4500.00 -428571428571.0000", ""},
		{"SELECT COUNT(*) * 3074457345618258, COUNT(*) * 0 + 9007199254740993, COUNT(*) * 0 + 9007199254740993 > 9007199254740992, COUNT(*) DIV 0.7, COUNT(*) % 7",
			"BIGINT BIGINT BIGINT BIGINT BIGINT", "9223372036854774000 9007199254740993 1 4285 4", ""},
		{"SELECT CAST(AVG(income) AS DECIMAL(10, 2)), CAST(AVG(income) * 0 + 2.345e0 AS DECIMAL(10, 2)), CAST(COUNT(*) / 7 AS DECIMAL(5, 1)), CAST(COUNT(*) AS DECIMAL(3, 1)), CAST(COUNT(*) AS DECIMAL)",
			"DECIMAL(10,2) DECIMAL(10,2) DECIMAL(5,1) DECIMAL(3,1) DECIMAL(10,0)", "2.50 2.35 428.6 99.9 3000", "Warning 1264"},
		{"SELECT ROUND(COUNT(*) / 7, 2), ROUND(COUNT(*) * 0 + 2.5), ROUND(AVG(income)), TRUNCATE(COUNT(*) / 7, 1), ROUND(COUNT(*) + 5, -1), FLOOR(COUNT(*) / 7), CEIL(-COUNT(*) / 7), ABS(-COUNT(*) / 7)",
			"DECIMAL(22,2) DECIMAL(21,0) DOUBLE(decimals=0) DECIMAL(21,1) DECIMAL(20,0) DECIMAL(20,0) DECIMAL(20,0) DECIMAL(23,4)", "428.57 3 2 428.5 3010 428 -428 428.5714", ""},
		{"SELECT CAST(COUNT(*) AS UNSIGNED) - 3000, -CAST(COUNT(*) AS UNSIGNED), CAST(COUNT(*) - 3001 AS UNSIGNED), CAST(AVG(income) * 0 - 2.5e0 AS UNSIGNED), CAST(AVG(income) * 0 + 1e20 AS SIGNED)",
			"BIGINT UNSIGNED BIGINT BIGINT UNSIGNED BIGINT UNSIGNED BIGINT", "0 -3000 18446744073709551615 0 9223372036854775807", "Note 1105, Note 1916, Note 1916"},
		{"SELECT IF(COUNT(*) > 0, COUNT(*), 1.5), IF(COUNT(*) > 0, CAST(COUNT(*) AS UNSIGNED), -1), GREATEST(COUNT(*) / 7, 500), COALESCE(COUNT(*) / 7, AVG(income))",
			"DECIMAL(20,1) DECIMAL(20,0) DECIMAL(23,4) DOUBLE", "3000.0 3000 500.0000 428.5714", ""},
		// ROUND, TRUNCATE, FLOOR and CEIL of a DOUBLE fix its decimals
		// (DoubleType), which its text shows, as arithmetic's do.
		{"SELECT CONCAT(ROUND(AVG(income), 2)), IF(COUNT(*) < 0, 'none', FLOOR(AVG(income) * 1e15)), ROUND(AVG(income), 2) / 3, CONCAT(ROUND(AVG(income), 2) / 3), CAST(TRUNCATE(AVG(income), 3) AS CHAR)",
			"VARCHAR(19) VARCHAR(17) DOUBLE(decimals=6) VARCHAR(23) VARCHAR(20)", "2.50 2500000000000000 0.8333333333333334 0.833333 2.500", ""},
	} {
		types, cells, casts := postProcessedCells(t, parser, p, c.sql, 0)
		var warnings []string
		for _, cw := range casts {
			warnings = append(warnings, map[bool]string{false: "Warning", true: "Note"}[cw.Note]+fmt.Sprintf(" %d", cw.Code))
		}
		if got := strings.Join(types, " "); got != c.types {
			t.Errorf("%s: types %s, want %s", c.sql, got, c.types)
		}
		if got := strings.Join(cells, " "); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.sql, got, c.want)
		}
		if got := strings.Join(warnings, ", "); got != c.warnings {
			t.Errorf("%s: warnings %q, want %q", c.sql, got, c.warnings)
		}
	}

	// Beyond BIGINT, BIGINT UNSIGNED and DECIMAL: MySQL's 1690.
	for _, sql := range []string{
		"SELECT COUNT(*) * 3074457345618259",
		"SELECT COUNT(*) * 0 - 9223372036854775807 - 2",
		"SELECT -(COUNT(*) * 0 - 9223372036854775807 - 1)",
		"SELECT (COUNT(*) * 0 - 9223372036854775807 - 1) DIV -1",
		"SELECT CAST(COUNT(*) AS UNSIGNED) - 3001",
		"SELECT CAST(COUNT(*) AS UNSIGNED) * -1",
		"SELECT (COUNT(*) * 99999999999999999999999999999999999.0 * 99999999999999999999999999999999999.0) * 9999999999999999.0",
	} {
		st, err := parser.Parse(sql + " FROM pums")
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		q := st.(*sqlrewrite.Query)
		_, _, err = planner.PostProcess(q, []planner.Row{{Aggs: []planner.Datum{{Num: 3000, Int: true}}}})
		if dperr.KindOf(err) != dperr.OutOfRange {
			t.Errorf("%s: %v, want 1690", sql, err)
		}
	}
}

// TestFloatLiteralsOfAggregatesAreDoubles evaluates aggregates of float
// literals over one released row (each count 1000, an integer; every
// other aggregate 2.5, a DOUBLE) and checks each cell, its column's type
// (a DECIMAL's scale) and MySQL's 1690 against what MariaDB 10.11 answers over 1000 rows: a
// number written with an exponent is a DOUBLE, so SUM(1e300) is the
// DOUBLE 1e303 and SUM(1.5e2), MIN(1.5e2) DOUBLEs, where a decimal
// literal's SUM(1.5) stays a DECIMAL. SUM(1e300) and SUM(age + 1e300)
// were 1e300 read as an exact 301-digit DECIMAL times the count, MySQL's
// 1690 'DECIMAL value is out of range'; SUM(1.5e2) and MIN(1.5e2) were
// BIGINTs.
func TestFloatLiteralsOfAggregatesAreDoubles(t *testing.T) {
	parser := sqlrewrite.NewParser(testCatalog())
	p := planner.New(testCatalog())
	eval := func(sql string) (types, cells []string, err error) {
		t.Helper()
		st, err := parser.Parse(sql + " FROM pums")
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		q := st.(*sqlrewrite.Query)
		qp, err := p.PlanQuery(q, planner.Settings{Epsilon: 1, Delta: 1e-6, Mechanism: "auto"})
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		row := planner.Row{}
		for _, it := range q.Base.Items {
			d := planner.Datum{Num: 2.5, Double: true}
			if it.Agg.Func == sqlrewrite.CountRows || it.Agg.Func == sqlrewrite.CountColumn {
				d = planner.Datum{Num: 1000, Int: true}
			}
			row.Aggs = append(row.Aggs, d)
		}
		out, _, err := planner.PostProcess(q, []planner.Row{row})
		if err != nil {
			return nil, nil, err
		}
		for j, ty := range qp.ColumnTypes() {
			kind := ty.String()
			if _, scale, ok := strings.Cut(kind, ","); ok { // a DECIMAL's scale only
				kind = "DECIMAL(" + scale
			}
			types = append(types, kind)
			v, err := ty.Cell(out[0][j].Value())
			if err != nil {
				t.Errorf("%s: column %d: %v", sql, j+1, err)
			}
			cells = append(cells, fmt.Sprint(v))
		}
		return types, cells, nil
	}
	for _, c := range []struct{ sql, types, want string }{
		{"SELECT SUM(1e300), SUM(1.5e2), SUM(-2e0), SUM(1.5)", "DOUBLE DOUBLE DOUBLE DECIMAL(1)", "1e+303 150000 -2000 1500.0"},
		{"SELECT AVG(1e300), MIN(1.5e2), MAX(-2.5e0)", "DOUBLE DOUBLE DOUBLE", "1e+300 150 -2.5"},
		{"SELECT AVG(age) * 1e300, SUM(age + 1e300), SUM(age * 1e300), SUM(age + 1), AVG(age + 1e300)",
			"DOUBLE DOUBLE DOUBLE DOUBLE DOUBLE", "2.5e+300 1e+303 2.5e+300 1002.5 1e+300"},
	} {
		types, cells, err := eval(c.sql)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		if got := strings.Join(types, " "); got != c.types {
			t.Errorf("%s: types %s, want %s", c.sql, got, c.types)
		}
		if got := strings.Join(cells, " "); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.sql, got, c.want)
		}
	}
	// Beyond DOUBLE's range: MySQL's 1690 for a DOUBLE.
	for _, sql := range []string{"SELECT COUNT(*) * 0 + 1e308 * 10", "SELECT SUM(1e308)", "SELECT SUM(age + 1e308)"} {
		_, _, err := eval(sql)
		if dperr.KindOf(err) != dperr.OutOfRange || !strings.HasPrefix(err.Error(), "DOUBLE value is out of range") {
			t.Errorf("%s: %v, want 1690 DOUBLE value is out of range", sql, err)
		}
	}
}

// TestMinMaxOfIntegersAreIntegers: MIN and MAX of an integer column are
// released as the nearest integer within its bounds, a BIGINT, where they
// were DOUBLEs (a quantile's grid midpoint, 41.6); the median, and MIN of
// a real column, are not rounded.
func TestMinMaxOfIntegersAreIntegers(t *testing.T) {
	parser := sqlrewrite.NewParser(testCatalog())
	st, err := parser.Parse("SELECT MIN(age), MAX(age), MEDIAN(age), MIN(income) FROM pums")
	if err != nil {
		t.Fatal(err)
	}
	qp, err := planner.New(testCatalog()).PlanQuery(st.(*sqlrewrite.Query), planner.Settings{Epsilon: 1, Mechanism: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	plan := qp.Base
	for i, c := range []struct {
		released, want float64
		typ            planner.ResultType
	}{{41.6, 42, planner.ResultBigint}, {100.4, 100, planner.ResultBigint}, {41.6, 41.6, planner.ResultDouble}, {0.25, 0.25, planner.ResultDouble}} {
		o := &plan.Outputs[i]
		released := make([]planner.Estimate, len(plan.Releases))
		for _, a := range o.Args {
			released[a] = planner.Estimate{Value: c.released}
		}
		v, err := o.Evaluate(released)
		if err != nil || v.Value != c.want || o.ResultType() != c.typ {
			t.Errorf("%s of %g: %g (%v), %v; want %g, %v", o.Label, c.released, v.Value, err, o.ResultType(), c.want, c.typ)
		}
	}
}

// postProcessedCells plans sql + " FROM pums" (under max_allowed_packet
// packet, 0 for the default) and post-processes one row whose COUNT(*)
// is 3000 and every other aggregate 2.5: the columns' types, the cells
// as they would be sent, and the cast warnings.
func postProcessedCells(t *testing.T, parser *sqlrewrite.Parser, p *planner.Planner, sql string, packet int64) (types, cells []string, casts []planner.CastWarning) {
	t.Helper()
	st, err := parser.Parse(sql + " FROM pums")
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	q := st.(*sqlrewrite.Query)
	if packet > 0 {
		q.MaxAllowedPacket = packet
	}
	qp, err := p.PlanQuery(q, planner.Settings{Epsilon: 1, Delta: 1e-6, Mechanism: "auto"})
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	row := planner.Row{}
	for _, it := range q.Base.Items {
		d := planner.Datum{Num: 2.5, Double: true}
		if it.Agg.Func == sqlrewrite.CountRows {
			d = planner.Datum{Num: 3000, Int: true}
		}
		row.Aggs = append(row.Aggs, d)
	}
	out, w, err := planner.PostProcess(q, []planner.Row{row})
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	for j, ty := range qp.ColumnTypes() {
		types = append(types, ty.String())
		v, err := ty.Cell(out[0][j].Value())
		if err != nil {
			t.Errorf("%s: column %d: %v", sql, j+1, err)
		}
		cells = append(cells, fmt.Sprint(v))
	}
	return types, cells, w.Casts
}
