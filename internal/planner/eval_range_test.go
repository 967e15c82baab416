package planner

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/dperr"
)

// TestRoundToTensAndBigintRange: ROUND and TRUNCATE to negative digits
// give whole numbers (multiplying by 10^−5 rounded ROUND(100500, −5) to
// 99999.99999999999, which a BIGINT column refused after the charge: an
// independent review), an integer's ROUND a DECIMAL and its TRUNCATE an
// integer, as MariaDB types them; integer operators beyond BIGINT's range
// fail with MySQL's 1690 instead of an internal error; CAST(… AS SIGNED)
// saturates at BIGINT's ends with note 1916, as MariaDB.
func TestRoundToTensAndBigintRange(t *testing.T) {
	count := Datum{Num: 100500, Int: true}
	for _, c := range []struct {
		name   string
		x      Datum
		digits float64
		want   float64
	}{
		{"round", count, -5, 100000},
		{"round", Datum{Num: 150000, Int: true}, -5, 200000},
		{"truncate", count, -4, 100000},
		{"round", Datum{Num: 31499999.7}, -5, 31500000},
		{"round", Datum{Num: 2.345}, 2, 2.35},
		{"round", Datum{Num: 2.5}, 0, 3},
		{"round", Datum{Num: 1.25}, 400, 1.25},
		{"round", Datum{Num: 1e300}, -400, 0},
		{"truncate", Datum{Num: -2.789}, 1, -2.7},
	} {
		d, err := evalFunc(c.name, []Datum{c.x, {Num: c.digits, Int: true}}, new(Warnings))
		if err != nil || d.Num != c.want {
			t.Errorf("%s(%g, %g) = %v, %v; want %g", c.name, c.x.Num, c.digits, d.Num, err, c.want)
		}
		if c.digits <= 0 && c.x.Int && (d.Num != math.Trunc(d.Num) || d.Int != (c.name == "truncate")) {
			t.Errorf("%s(%g, %g) = %+v: want a whole number, a BIGINT truncated and a DECIMAL rounded", c.name, c.x.Num, c.digits, d)
		}
	}
	big := Datum{Num: 1 << 52, Int: true}
	d, err := evalOp("*", []Datum{count, {Num: 1 << 40, Int: true}}, new(Warnings))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		op   string
		args []Datum
	}{
		{"*", []Datum{d, big}},
		{"div", []Datum{count, {Num: 1e-16}}},
		{"+", []Datum{{Num: maxBigint, Int: true}, {Num: 1 << 20, Int: true}}},
	} {
		if _, err := evalOp(c.op, c.args, new(Warnings)); dperr.KindOf(err) != dperr.OutOfRange {
			t.Errorf("%s beyond BIGINT: %v, want 1690", c.op, err)
		}
	}
	for x, want := range map[float64]int64{1.005e20: math.MaxInt64, -1e30: math.MinInt64} {
		w := new(Warnings)
		d, err := evalFunc("cast-int", []Datum{{Num: x, Double: true}}, w)
		if err != nil || d.Value() != want || !d.Int || len(w.Casts) != 1 || w.Casts[0].Code != 1916 || !w.Casts[0].Note {
			t.Errorf("CAST(%g AS SIGNED) = %v, %v, %+v; want %d and note 1916", x, d.Value(), err, w.Casts, want)
		}
		if _, err := ResultBigint.Cell(d.Value()); err != nil {
			t.Errorf("the saturated value does not fit a BIGINT column: %v", err)
		}
	}
	// FLOOR, CEIL and ROUND of a DOUBLE are DOUBLEs, as in MySQL and as
	// their columns are typed: their products may pass BIGINT's range.
	for _, f := range []string{"floor", "ceil", "round"} {
		d, err := evalFunc(f, []Datum{{Num: 65500.5, Double: true}}, new(Warnings))
		if err != nil || d.Int {
			t.Fatalf("%s(65500.5) = %v, %v; want a DOUBLE", f, d, err)
		}
		if p, err := evalOp("*", []Datum{d, {Num: 1e15, Int: true}}, new(Warnings)); err != nil || p.Num < 6.55e19 {
			t.Errorf("%s(65500.5) * 1e15 = %v, %v; want 6.55e19 as a DOUBLE", f, p, err)
		}
	}
	if s, _ := evalFunc("cast-char", []Datum{{Num: 6.5500375e19, Int: true}}, new(Warnings)); s.Str != "6.5500375e19" {
		t.Errorf("CAST(6.5500375e19 AS CHAR) = %q, want the number, not a wrapped BIGINT", s.Str)
	}
}

// TestCastTextToInteger: CAST of text AS SIGNED or UNSIGNED reads the
// text's integer prefix, as MariaDB 10.11 does (each case checked against
// it, with SHOW WARNINGS): '1.5' and '1e5' are 1 with 1292 for INTEGER,
// a negative one wraps to UNSIGNED with note 1105, and one beyond 2^64
// saturates (ULLONG_MAX, -1 as SIGNED). Before, text was read as a DOUBLE
// and rounded to even: '1.5' was 2 with no warning and '1e5' 100000.
func TestCastTextToInteger(t *testing.T) {
	for _, c := range []struct {
		text     string
		unsigned bool
		want     any
		warnings string
	}{
		{"1.5", false, int64(1), "Warning 1292 Truncated incorrect INTEGER value: '1.5'"},
		{"1e5", true, int64(1), "Warning 1292 Truncated incorrect INTEGER value: '1e5'"},
		{"-5", false, int64(-5), ""},
		{"-5", true, uint64(18446744073709551611), "Note 1105 Cast to unsigned converted negative integer to it's positive complement"},
		{"-5.5", true, uint64(18446744073709551611), "Warning 1292 Truncated incorrect INTEGER value: '-5.5'; Note 1105 Cast to unsigned converted negative integer to it's positive complement"},
		{"-0", true, int64(0), "Note 1105 Cast to unsigned converted negative integer to it's positive complement"},
		{"99999999999999999999", false, int64(-1), "Warning 1292 Truncated incorrect INTEGER value: '99999999999999999999'"},
		{"99999999999999999999", true, uint64(math.MaxUint64), "Warning 1292 Truncated incorrect INTEGER value: '99999999999999999999'"},
		{"-99999999999999999999", true, uint64(1 << 63), "Warning 1292 Truncated incorrect INTEGER value: '-99999999999999999999'"},
		{"18446744073709551615", false, int64(-1), "Note 1105 Cast to signed converted positive out-of-range integer to it's negative complement"},
		{" +12 ", false, int64(12), "Note 1292 Truncated incorrect INTEGER value: ' +12 '"},
		{"\t12abc", false, int64(12), "Warning 1292 Truncated incorrect INTEGER value: '\t12abc'"},
		{"- 5", true, int64(0), "Warning 1292 Truncated incorrect INTEGER value: '- 5'"},
		{"", false, int64(0), "Warning 1292 Truncated incorrect INTEGER value: ''"},
	} {
		op := map[bool]string{false: "cast-int", true: "cast-unsigned"}[c.unsigned]
		w := new(Warnings)
		d, err := evalFunc(op, []Datum{{Str: c.text, IsText: true}}, w)
		var got []string
		for _, tr := range w.Truncations {
			got = append(got, fmt.Sprintf("%s 1292 Truncated incorrect %s value: '%s'", map[bool]string{false: "Warning", true: "Note"}[tr.Note], tr.Type, tr.Value))
		}
		for _, cw := range w.Casts {
			got = append(got, fmt.Sprintf("%s %d %s", map[bool]string{false: "Warning", true: "Note"}[cw.Note], cw.Code, cw.Message))
		}
		if err != nil || d.Value() != c.want || strings.Join(got, "; ") != c.warnings {
			t.Errorf("%s(%q) = %v (%T), %v, warnings %q; want %v (%T), %q", op, c.text, d.Value(), d.Value(), err, got, c.want, c.want, c.warnings)
		}
	}
}
