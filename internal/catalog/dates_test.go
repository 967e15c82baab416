package catalog

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

const datesConfig = `
backend: {driver: sqlite, dsn: "x.db"}
users:
  - {name: alice, password_hash: "*0123456789ABCDEF0123456789ABCDEF01234567", epsilon: 5}
tables:
  - name: visits
    columns:
      - {name: spend, type: real, lower: 0, upper: 1.0e3}
      - {name: day, type: date, lower: 2015-01-01, upper: 2024-12-31}
      - {name: at, type: timestamp, lower: "2015-01-01 00:00:00", upper: 2024-12-31T23:59:59}
`

// TestDateBoundsAreReadAsDayAndSecondNumbers: date bounds become day
// numbers, timestamp bounds seconds, both from 1970-01-01; numeric bounds
// still read YAML's numbers.
func TestDateBoundsAreReadAsDayAndSecondNumbers(t *testing.T) {
	c, err := ParseConfig(strings.NewReader(datesConfig))
	if err != nil {
		t.Fatal(err)
	}
	tbl, _ := c.Table("visits")
	spend, _ := tbl.Column("spend")
	day, _ := tbl.Column("day")
	at, _ := tbl.Column("at")
	if lo, hi, ok := spend.Bounds(); !ok || lo != 0 || hi != 1000 {
		t.Errorf("spend bounds %v %v %v", lo, hi, ok)
	}
	// 2015-01-01 is day 16436; 2024-12-31 is day 20088.
	if *day.Lower != 16436 || *day.Upper != 20088 || day.Numeric() || !day.Temporal() {
		t.Errorf("day bounds [%v, %v]", *day.Lower, *day.Upper)
	}
	if *at.Lower != 16436*86400 || *at.Upper != 20089*86400-1 {
		t.Errorf("at bounds [%v, %v]", *at.Lower, *at.Upper)
	}
	if lo, hi, ok := day.DateBounds(); !ok || lo.Format("2006-01-02") != "2015-01-01" || hi.Format("2006-01-02") != "2024-12-31" {
		t.Errorf("day DateBounds %v %v", lo, hi)
	}
	if s := at.FormatTemporal(*at.Upper); s != "2024-12-31 23:59:59" {
		t.Errorf("at upper formats as %q", s)
	}
	if _, _, ok := day.Bounds(); ok {
		t.Error("a date column has no numeric bounds")
	}
}

// TestDateColumnValidationNamesTheField: each bad date declaration is
// refused at load, naming the field.
func TestDateColumnValidationNamesTheField(t *testing.T) {
	for _, tc := range []struct{ from, to, field string }{
		{"lower: 2015-01-01, upper: 2024-12-31}", "upper: 2024-12-31}", "tables[0].columns[1]"},
		{"lower: 2015-01-01", "lower: 2015-02-30", "tables[0].columns[1].lower"},
		{"lower: 2015-01-01", "lower: 15-01-01", "tables[0].columns[1].lower"},
		{"lower: 2015-01-01", "lower: 2015", "tables[0].columns[1].lower"},
		{"lower: 2015-01-01", "lower: 0999-12-31", "tables[0].columns[1].lower"},
		{"lower: 2015-01-01", "lower: \"2015-01-01 10:00:00\"", "tables[0].columns[1].lower"},
		{"lower: 2015-01-01", "lower: 2025-01-01", "tables[0].columns[1]"},
		{"upper: 2024-12-31}", "upper: 2024-12-31, values: [2015-01-01]}", "tables[0].columns[1].values"},
		{"upper: 2024-12-31}", "upper: 2024-12-31, partition_selection: true}", "tables[0].columns[1].partition_selection"},
		{"upper: 2024-12-31}", "upper: 2024-12-31, histogram: {epsilon: 1}}", "tables[0].columns[1].histogram"},
		{"upper: 2024-12-31T23:59:59", "upper: 2024-12-31T23:59:59+02:00", "tables[0].columns[2].upper"},
		{"upper: 2024-12-31T23:59:59", "upper: \"2024-12-31 23:59:59.5\"", "tables[0].columns[2].upper"},
		{"upper: 1.0e3", "upper: 2024-12-31", "tables[0].columns[0].upper"},
		{"type: date", "type: datetime", "tables[0].columns[1].type"},
	} {
		cfg := strings.Replace(datesConfig, tc.from, tc.to, 1)
		if cfg == datesConfig {
			t.Fatalf("replacement %q not found", tc.from)
		}
		if strings.Contains(tc.to, "histogram") {
			cfg = strings.Replace(cfg, "  - name: visits\n", "  - name: visits\n    epsilon: 5\n", 1)
		}
		_, err := ParseConfig(strings.NewReader(cfg))
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != tc.field {
			t.Errorf("%s: got %v, want an error naming %s", tc.to, err, tc.field)
		}
	}
	// Unknown fields in a column are still refused.
	if _, err := ParseConfig(strings.NewReader(strings.Replace(datesConfig, "type: date,", "type: date, lowr: 1,", 1))); err == nil {
		t.Error("an unknown column field was accepted")
	}
}

// TestMonthsBetween checks MySQL's TIMESTAMPDIFF(MONTH, a, b) rule on
// hand-checked pairs (ends of months, leap days, equal day and time,
// negative differences) and, on random pairs, that the count never
// decreases as b grows or as a shrinks, which the derived bounds of a
// month difference rely on (sqlrewrite's monthDiffBounds).
func TestMonthsBetween(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.DateTime, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		a, b string
		want int64
	}{
		{"2024-01-31 10:00:00", "2024-02-29 23:00:00", 0},
		{"2024-01-31 10:00:00", "2024-03-31 10:00:00", 2},
		{"2024-01-31 10:00:00", "2024-03-31 09:59:59", 1},
		{"2024-01-15 10:00:00", "2024-02-15 10:00:00", 1},
		{"2024-02-15 10:00:00", "2023-11-15 10:00:01", -2},
		{"2024-02-15 10:00:00", "2023-11-15 10:00:00", -3},
		{"1980-02-29 00:00:00", "2024-02-28 23:59:59", 527},
		{"1980-02-29 00:00:00", "2024-02-29 00:00:00", 528},
		{"2024-06-30 00:00:00", "1980-07-01 00:00:00", -527},
		{"2024-06-30 00:00:00", "2024-06-30 00:00:00", 0},
	} {
		if got := MonthsBetween(at(c.a), at(c.b)); got != c.want {
			t.Errorf("MonthsBetween(%s, %s) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	random := func() time.Time {
		return time.Unix(rng.Int64N(40*365*86400), 0).UTC().AddDate(1990-1970, 0, 0)
	}
	for range 100000 {
		a, b, c := random(), random(), random()
		if rng.IntN(2) == 0 { // near b, across ends of months
			c = b.Add(time.Duration(rng.Int64N(40*86400)) * time.Second)
		}
		if c.Before(b) {
			b, c = c, b
		}
		if MonthsBetween(a, b) > MonthsBetween(a, c) || MonthsBetween(b, a) < MonthsBetween(c, a) {
			t.Fatalf("not monotone: a %s, b %s ≤ c %s: %d, %d; %d, %d", a, b, c,
				MonthsBetween(a, b), MonthsBetween(a, c), MonthsBetween(b, a), MonthsBetween(c, a))
		}
	}
}

// TestNumericBoundsADoubleDoesNotHoldAreRefused: a bound written as a
// number that reads as another double (9007199254740993 is 2^53) is
// refused at load, naming the field and the double; bounds a double
// holds (2^53 + 2, 0.1 by its shortest digits, 1e100) load.
func TestNumericBoundsADoubleDoesNotHoldAreRefused(t *testing.T) {
	config := func(lower, upper string) string {
		return strings.Split(datesConfig, "tables:")[0] + "tables:\n  - name: t\n    columns:\n      - {name: big, type: integer, lower: " + lower + ", upper: " + upper + "}\n"
	}
	for _, ok := range [][2]string{{"0", "9007199254740994"}, {"0.1", "0.30"}, {"-1e100", "+1e100"}, {"-9007199254740992", "9007199254740992.0"}} {
		if _, err := ParseConfig(strings.NewReader(config(ok[0], ok[1]))); err != nil {
			t.Errorf("[%s, %s]: %v", ok[0], ok[1], err)
		}
	}
	for _, bad := range [][2]string{{"0", "9007199254740993"}, {"-9007199254740993", "0"}, {"0", "0.30000000000000001"}} {
		_, err := ParseConfig(strings.NewReader(config(bad[0], bad[1])))
		if err == nil || !strings.Contains(err.Error(), "tables[0].columns[0]") || !strings.Contains(err.Error(), "a double holds exactly") {
			t.Errorf("[%s, %s]: %v, want refused", bad[0], bad[1], err)
		}
	}
}
