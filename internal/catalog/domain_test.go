package catalog

import (
	"strings"
	"testing"
)

// TestDistinctValues: the most distinct non-NULL values a declaration
// allows (Column.DistinctValues), the limit of a released COUNT(DISTINCT
// col): the declared values without null, an integer column's integers
// within its bounds (none within [0.2, 0.8]), a date column's days, the
// smaller where both apply; no limit for a real column without values, a
// text column without values and a timestamp column (fractions of a
// second).
func TestDistinctValues(t *testing.T) {
	cfg := strings.Replace(validConfig, "{name: state, type: text}", `{name: state, type: text}
      - {name: cat, type: integer, lower: 1, upper: 3, values: [1, 2, 3, null]}
      - {name: few, type: integer, lower: 0, upper: 100, values: [0, 50]}
      - {name: frac, type: integer, lower: 0.5, upper: 10.5}
      - {name: none, type: integer, lower: 0.2, upper: 0.8}
      - {name: share, type: real, lower: 0, upper: 1}
      - {name: level, type: real, lower: 0, upper: 1, values: [0, 0.5, 1]}
      - {name: sex, type: text, values: [f, m, null]}
      - {name: day, type: date, lower: 2018-01-01, upper: 2018-12-31}
      - {name: at, type: timestamp, lower: 2018-01-01, upper: 2018-01-02}`, 1)
	c, err := ParseConfig(strings.NewReader(cfg))
	if err != nil {
		t.Fatal(err)
	}
	tb, _ := c.Table("pums")
	for name, want := range map[string]float64{"age": 101, "cat": 3, "few": 2, "frac": 10, "none": 0, "level": 3, "sex": 2, "day": 365,
		"state": -1, "share": -1, "at": -1} {
		col, _ := tb.Column(name)
		d, ok := col.DistinctValues()
		if want < 0 && ok || want >= 0 && (!ok || d != want) {
			t.Errorf("%s: %v, %v; want %v (-1: no limit)", name, d, ok, want)
		}
	}
}
