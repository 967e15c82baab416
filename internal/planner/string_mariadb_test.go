package planner

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestCaseMappingAsMariaDB checks UPPER and LOWER of every code point
// (U+0000 to U+10FFFF, surrogates left out) against the server's in
// utf8mb4_general_ci and in utf8mb4_bin: upperRune and lowerRune map
// each character as MariaDB 10.11 does (Go's unicode tables alone mapped
// 1,482 characters that MariaDB keeps, and U+03F2 to U+03F9).
func TestCaseMappingAsMariaDB(t *testing.T) {
	db := testdb.MySQL(t)
	if _, err := db.Exec("SET SESSION max_recursive_iterations = 2000000"); err != nil {
		t.Fatal(err)
	}
	for _, coll := range []string{"utf8mb4_general_ci", "utf8mb4_bin"} {
		rows, err := db.Query(`WITH RECURSIVE s(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM s WHERE n < 1114111)
			SELECT n, UPPER(c), LOWER(c) FROM (SELECT n, CONVERT(CHAR(n USING utf32) USING utf8mb4) COLLATE ` + coll + ` AS c FROM s
			WHERE n < 55296 OR n > 57343) AS t`)
		if err != nil {
			t.Fatal(err)
		}
		count, bad := 0, 0
		for rows.Next() {
			var (
				r            rune
				upper, lower string
			)
			if err := rows.Scan(&r, &upper, &lower); err != nil {
				t.Fatal(err)
			}
			count++
			if got := string(upperRune(r)); got != upper && bad < 20 {
				t.Errorf("%s: UPPER(%U) is %q, MariaDB's %q", coll, r, got, upper)
				bad++
			}
			if got := string(lowerRune(r)); got != lower && bad < 20 {
				t.Errorf("%s: LOWER(%U) is %q, MariaDB's %q", coll, r, got, lower)
				bad++
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		if count != 0x110000-0x800 {
			t.Fatalf("%d code points, want %d", count, 0x110000-0x800)
		}
	}
}

// TestFormatLocalesAsMariaDB: FORMAT in each of MariaDB 10.11's locales
// (the locales table; names in any case) writes a number as MariaDB does
// (grouping, its separator, the point), a long and a short one, of
// either sign; and the table holds every locale the server has (it names
// them by number in lc_time_names), and sr_YU, which it deprecates.
func TestFormatLocalesAsMariaDB(t *testing.T) {
	db := testdb.MySQL(t)
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var server []string
	for id := 0; ; id++ {
		if _, err := conn.ExecContext(t.Context(), fmt.Sprintf("SET lc_time_names = %d", id)); err != nil {
			break
		}
		var name string
		if err := conn.QueryRowContext(t.Context(), "SELECT @@lc_time_names").Scan(&name); err != nil {
			t.Fatal(err)
		}
		server = append(server, strings.ToLower(name))
	}
	names := make([]string, 0, len(locales))
	for name := range locales {
		if name != "sr_yu" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	slices.Sort(server)
	if !slices.Equal(names, server) {
		t.Errorf("locales %v, MariaDB's %v", names, server)
	}
	names = append(names, "sr_yu")
	values := []struct{ x, dec string }{{"-1234567890123.456", "2"}, {"123.5", "1"}, {"1234567", "0"}, {"-1234.5e0", "3"}, {"0.5", "2"}}
	for _, name := range names {
		var cols []string
		for _, v := range values {
			cols = append(cols, fmt.Sprintf("FORMAT(%s, %s, '%s')", v.x, v.dec, strings.ToUpper(name)))
		}
		row := make([]string, len(cols))
		ptrs := make([]any, len(cols))
		for i := range row {
			ptrs[i] = &row[i]
		}
		if err := db.QueryRow("SELECT " + strings.Join(cols, ", ")).Scan(ptrs...); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i, v := range values {
			x, ok := literalDatum(v.x)
			if !ok {
				f, _ := strconv.ParseFloat(v.x, 64)
				x = numberOf(f, false, true)
			}
			dec, _ := literalDatum(v.dec)
			w := &Warnings{}
			got := formatFunc([]Datum{x, dec, {Str: strings.ToUpper(name), IsText: true}}, false, w)
			if got.Str != row[i] || len(w.Casts) != btoi(name == "sr_yu") {
				t.Errorf("%s: %q (warnings %v), MariaDB %q", cols[i], got.Str, w.Casts, row[i])
			}
		}
	}
}

// TestFormatFloatAsMariaDB: FormatFloat writes single-precision values
// as MariaDB writes CAST(x AS FLOAT) in text: six significant digits, in
// plain notation or with an exponent where MariaDB uses one, over
// powers of ten, their neighbours and random floats of every exponent,
// subnormals included.
func TestFormatFloatAsMariaDB(t *testing.T) {
	db := testdb.MySQL(t)
	var xs []float32
	for e := -45; e <= 38; e++ {
		p := math.Pow(10, float64(e))
		for _, m := range []float64{1, 1.5, 9.99999, 9.999995, 1.234567, 123456.7 / 100000} {
			if x := m * p; x < math.MaxFloat32 {
				xs = append(xs, float32(x), -float32(x))
			}
		}
	}
	src := rand.New(rand.NewChaCha8([32]byte{7}))
	for range 2000 {
		x := math.Float32frombits(src.Uint32())
		if !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0) {
			xs = append(xs, x)
		}
	}
	xs = append(xs, 0, math.MaxFloat32, math.SmallestNonzeroFloat32, 16777217, 123456789)
	for start := 0; start < len(xs); start += 200 {
		batch := xs[start:min(start+200, len(xs))]
		var cols []string
		for _, x := range batch {
			cols = append(cols, "CONCAT(CAST("+strconv.FormatFloat(float64(x), 'e', -1, 64)+" AS FLOAT))")
		}
		row := make([]string, len(batch))
		ptrs := make([]any, len(batch))
		for i := range row {
			ptrs[i] = &row[i]
		}
		if err := db.QueryRow("SELECT " + strings.Join(cols, ", ")).Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for i, x := range batch {
			if got := FormatFloat(x); got != row[i] {
				t.Errorf("FormatFloat(%g) = %q, MariaDB %q", x, got, row[i])
			}
		}
	}
}

// TestStringFunctionsPacketLimit: a string function whose result would
// exceed the session's max_allowed_packet is NULL with warning 1301, as
// MariaDB checks it (LPAD and RPAD against 4 bytes a character of the
// count, REPEAT the repeated text, CONCAT_WS the text as it grows,
// REPLACE after each replacement), and one within it is computed. The
// bound is 1 KiB, the least max_allowed_packet a configuration sets.
func TestStringFunctionsPacketLimit(t *testing.T) {
	text := func(s string) Datum { return Datum{Str: s, IsText: true} }
	n := func(x int) Datum { return num(float64(x), true) }
	long := strings.Repeat("ab", 300) // 600 bytes
	for _, c := range []struct {
		fn   string
		args []Datum
		want string // "NULL" for the warning
	}{
		{"lpad", []Datum{text("x"), n(256), text("0")}, strings.Repeat("0", 255) + "x"},
		{"lpad", []Datum{text("x"), n(257), text("0")}, "NULL"},
		{"rpad", []Datum{text("é"), n(300), text("-")}, "NULL"},
		{"lpad", []Datum{text(strings.Repeat("é", 300)), n(300), text("-")}, strings.Repeat("é", 300)}, // no padding: no check
		{"repeat", []Datum{text("ab"), n(512)}, strings.Repeat("ab", 512)},
		{"repeat", []Datum{text("ab"), n(513)}, "NULL"},
		{"concat_ws", []Datum{text(","), text(long), text(long)}, "NULL"},
		{"concat_ws", []Datum{text(","), text(long), {Null: true}}, long},
		{"replace", []Datum{text(long), text("b"), text("bb")}, strings.Repeat("abb", 300)},
		{"replace", []Datum{text(long), text("a"), text("aaaa")}, "NULL"},
		{"replace", []Datum{text(long), text("ab"), text("")}, ""},
	} {
		w := &Warnings{packet: 1024}
		d, err := evalFunc(c.fn, c.args, w)
		got := d.Str
		if d.Null {
			got = "NULL"
		}
		switch {
		case err != nil:
			t.Errorf("%s: %v", c.fn, err)
		case got != c.want:
			t.Errorf("%s(%d arguments) = %.40q…, want %.40q…", c.fn, len(c.args), got, c.want)
		case c.want == "NULL" && (len(w.Casts) != 1 || w.Casts[0].Code != packetWarning ||
			w.Casts[0].Message != fmt.Sprintf("Result of %s() was larger than max_allowed_packet (1024) - truncated", c.fn)):
			t.Errorf("%s: warnings %v, want one 1301", c.fn, w.Casts)
		case c.want != "NULL" && len(w.Casts) != 0:
			t.Errorf("%s: warnings %v, want none", c.fn, w.Casts)
		case !d.Null && !utf8.ValidString(d.Str):
			t.Errorf("%s: invalid UTF-8", c.fn)
		}
	}
}
