package planner_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestBucketLabelsAsMariaDB types and writes GROUP BY bucket labels as
// MariaDB 10.11 does (checked there over a BIGINT i and a DOUBLE d, and
// a BIGINT n and a DOUBLE e for DIV, holding the values below; the
// column types, decimals and texts): of an integer column and integer or
// decimal literals a DECIMAL whose precision and scale follow MariaDB's
// rules (FLOOR(i / 0.3) * 0.3 is DECIMAL(23,1), 3.0), of a real column a
// DOUBLE of the literals' decimals (FLOOR(d / 0.3) * 0.3 is a DOUBLE of 1
// decimal: -7.199999999999999 written -7.2), with a float literal a
// DOUBLE of none fixed, x DIV w a BIGINT. Before, every integer label was
// a BIGINT and every other a DOUBLE written with its shortest digits.
func TestBucketLabelsAsMariaDB(t *testing.T) {
	num := func(name string, typ catalog.ColumnType, lo, hi float64) catalog.Column {
		return catalog.Column{Name: name, Source: name, Type: typ, Lower: &lo, Upper: &hi}
	}
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "t", Source: "t", Columns: []catalog.Column{
		num("i", catalog.Integer, -30, 120), num("d", catalog.Real, -10, 120),
		num("n", catalog.Integer, 0, 120), num("e", catalog.Real, 0, 120),
	}}}}
	parser := sqlrewrite.NewParser(cat)
	p := planner.New(cat)
	integers, doubles := []float64{-22, 7, 100, 3}, []float64{-7.2, 2.1, 100.5, 0.3}
	for _, c := range []struct {
		key, typ, want string
		of             []float64
	}{
		{"FLOOR(i / 5)", "DECIMAL(20,0)", "-5 1 20 0", integers},
		{"FLOOR(i / 5) * 5", "DECIMAL(21,0)", "-25 5 100 0", integers},
		{"5 * FLOOR(i / 5)", "DECIMAL(21,0)", "-25 5 100 0", integers},
		{"FLOOR(i / 0.25) * 0.25", "DECIMAL(25,2)", "-22.00 7.00 100.00 3.00", integers},
		{"FLOOR(i / 0.3) * 0.3", "DECIMAL(23,1)", "-22.2 6.9 99.9 3.0", integers},
		{"FLOOR(i / 2.5)", "DECIMAL(21,0)", "-9 2 40 1", integers},
		{"FLOOR((i - 1) / 2.5) * 2.5 + 1", "DECIMAL(25,1)", "-24.0 6.0 98.5 1.0", integers},
		{"FLOOR((i - 0.5) / 2) * 2 + 0.5", "DECIMAL(24,1)", "-23.5 6.5 98.5 2.5", integers},
		{"FLOOR((i - 10) / 5) * 5 + 10", "DECIMAL(23,0)", "-25 5 100 0", integers},
		{"FLOOR(i / 5e0) * 5e0", "DOUBLE", "-25 5 100 0", integers},
		{"FLOOR(i / 12.5) * 12.5", "DECIMAL(24,1)", "-25.0 0.0 100.0 0.0", integers},
		{"FLOOR(i / 100) * 100", "DECIMAL(23,0)", "-100 0 100 0", integers},
		{"n DIV 10", "BIGINT", "0 10 0", integers[1:]},
		{"n DIV 10 * 10", "BIGINT", "0 100 0", integers[1:]},
		{"n DIV 2.5 * 2.5", "DECIMAL(20,1)", "5.0 100.0 2.5", integers[1:]},
		{"FLOOR(d / 5)", "DOUBLE(decimals=0)", "-2 0 20 0", doubles},
		{"FLOOR(d / 5) * 5", "DOUBLE(decimals=0)", "-10 0 100 0", doubles},
		{"5 * FLOOR(d / 5)", "DOUBLE(decimals=0)", "-10 0 100 0", doubles},
		{"FLOOR(d / 0.25) * 0.25", "DOUBLE(decimals=2)", "-7.25 2.00 100.50 0.25", doubles},
		{"FLOOR(d / 0.3) * 0.3", "DOUBLE(decimals=1)", "-7.2 2.1 100.5 0.3", doubles},
		{"FLOOR(d / 2.5)", "DOUBLE(decimals=0)", "-3 0 40 0", doubles},
		{"FLOOR((d - 1) / 2.5) * 2.5 + 1", "DOUBLE(decimals=1)", "-9.0 1.0 98.5 -1.5", doubles},
		{"FLOOR((d - 0.5) / 2) * 2 + 0.5", "DOUBLE(decimals=1)", "-7.5 0.5 100.5 -1.5", doubles},
		{"FLOOR((d - 10) / 5) * 5 + 10", "DOUBLE(decimals=0)", "-10 0 100 0", doubles},
		{"FLOOR(d / 5e0) * 5e0", "DOUBLE", "-10 0 100 0", doubles},
		{"FLOOR(d / 12.5) * 12.5", "DOUBLE(decimals=1)", "-12.5 0.0 100.0 0.0", doubles},
		{"FLOOR(d / 100) * 100", "DOUBLE(decimals=0)", "-100 0 100 0", doubles},
		{"e DIV 10", "BIGINT", "0 10 0", doubles[1:]},
		{"e DIV 10 * 10", "BIGINT", "0 100 0", doubles[1:]},
		{"e DIV 2.5 * 2.5", "DECIMAL(22,1)", "0.0 100.0 0.0", doubles[1:]},
		// Rounded keys, by their rounded values (MariaDB's labels).
		{"ROUND(i, -1)", "DECIMAL(20,0)", "-20 0 10 100", []float64{-20, 0, 10, 100}},
		{"TRUNCATE(i, -1)", "BIGINT", "-20 0 100", []float64{-20, 0, 100}},
		{"FLOOR(i)", "BIGINT", "-22 7 100 3", integers},
		{"ROUND(d, -1)", "DOUBLE(decimals=0)", "-10 0 100", []float64{-10, 0, 100}},
		{"TRUNCATE(d, -1)", "DOUBLE(decimals=0)", "0 100", []float64{0, 100}},
		{"FLOOR(d)", "DOUBLE(decimals=0)", "-8 0 2 100", []float64{-8, 0, 2, 100}},
		{"CEIL(d)", "DOUBLE(decimals=0)", "-7 1 3 101", []float64{-7, 1, 3, 101}},
	} {
		sql := "SELECT " + c.key + " AS b, COUNT(*) FROM t GROUP BY b"
		st, err := parser.Parse(sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		q := st.(*sqlrewrite.Query)
		qp, err := p.PlanQuery(q, planner.Settings{Epsilon: 1, Delta: 1e-6, Mechanism: "auto"})
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		key := q.Keys[0]
		var rows []planner.Row
		for _, x := range c.of {
			i := int(key.Bucket.Of(x) - key.First)
			if i < 0 || i >= len(key.Values) {
				t.Fatalf("%s: %g in no bucket", c.key, x)
			}
			rows = append(rows, planner.Row{Keys: []sqlrewrite.Value{key.Values[i]}, Aggs: []planner.Datum{{Num: 1, Int: true}}})
		}
		out, _, err := planner.PostProcess(q, rows)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		typ := qp.ColumnTypes()[0]
		var texts []string
		for _, r := range out {
			v, err := typ.Cell(r[0].Value())
			if err != nil {
				t.Errorf("%s: %v", c.key, err)
			}
			switch f, ok := v.(float64); {
			case ok && typ.Decimals() < planner.NotFixedDecimals:
				texts = append(texts, planner.FormatFixedDouble(f, typ.Decimals()))
			case ok:
				texts = append(texts, planner.FormatDouble(f))
			default:
				texts = append(texts, fmt.Sprint(v))
			}
		}
		if typ.String() != c.typ {
			t.Errorf("%s: type %s, MariaDB's %s", c.key, typ, c.typ)
		}
		if got := strings.Join(texts, " "); got != c.want {
			t.Errorf("%s: %s, MariaDB's %s", c.key, got, c.want)
		}
	}
}
