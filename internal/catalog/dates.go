package catalog

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Date and Timestamp are the column types of calendar dates and of
// date-times (wall-clock times without a time zone). Their bounds are
// written as dates (lower: 2015-01-01) or timestamps
// (2015-01-01 08:00:00) and kept as numbers: a date as its day number,
// a timestamp as its second, both counted from 1970-01-01 00:00:00
// (negative before), so that a bound is exact in a float64. Bounds lie
// in [1000-01-01, 9999-12-31 23:59:59], the range every backend's date
// type and SQLite's date functions hold.
//
// Such a column is neither numeric nor text: it may be a GROUP BY key
// through its calendar parts (YEAR(col), DATE_FORMAT(col, '%Y-%m'), …;
// the domain, every year, month or day within the bounds, follows from
// them), be restricted in WHERE by comparisons with date literals, be
// counted (COUNT(col)), and have its order statistics released (MIN, MAX,
// MEDIAN, PERCENTILE_CONT: quantiles of the day or second number). How the backends' values are read is the rule of
// sqlrewrite's dates.go.
const (
	Date      ColumnType = "date"
	Timestamp ColumnType = "timestamp"
)

// SecondsPerDay converts day numbers to seconds.
const SecondsPerDay = 86400

// The range of date and timestamp bounds: MariaDB's DATE range, within
// which SQLite's date functions and PostgreSQL's types are exact.
var (
	minDate = time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC)
	maxDate = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
)

// Temporal reports whether the column holds dates or timestamps.
func (c *Column) Temporal() bool { return c.Type == Date || c.Type == Timestamp }

// DateBounds returns a date or timestamp column's bounds as UTC times
// (the wall-clock times they name); ok is false for other columns.
func (c *Column) DateBounds() (lower, upper time.Time, ok bool) {
	if !c.Temporal() || c.Lower == nil || c.Upper == nil {
		return time.Time{}, time.Time{}, false
	}
	return c.TimeOf(*c.Lower), c.TimeOf(*c.Upper), true
}

// TimeOf is the time a bound (or any value in the column's numbering) of
// a date or timestamp column names, in UTC.
func (c *Column) TimeOf(x float64) time.Time {
	if c.Type == Date {
		return time.Unix(int64(x)*SecondsPerDay, 0).UTC()
	}
	return time.Unix(int64(x), 0).UTC()
}

// MonthsBetween is MySQL's TIMESTAMPDIFF(MONTH, a, b) of two wall-clock
// times: with the two ordered so that the earlier comes first, 12·(years
// between) + (months between), less one when the later one's day of the
// month and time of day come before the earlier one's, negated when b is
// before a. It never decreases as b grows or as a shrinks.
func MonthsBetween(a, b time.Time) int64 {
	neg := b.Before(a)
	if neg {
		a, b = b, a
	}
	m := int64(12*(b.Year()-a.Year()) + int(b.Month()) - int(a.Month()))
	inMonth := func(t time.Time) int { return t.Day()*SecondsPerDay + t.Hour()*3600 + t.Minute()*60 + t.Second() }
	if inMonth(b) < inMonth(a) {
		m--
	}
	if neg {
		return -m
	}
	return m
}

// FormatTemporal writes a value of a date column as YYYY-MM-DD and of a
// timestamp column as YYYY-MM-DD HH:MM:SS.
func (c *Column) FormatTemporal(x float64) string {
	if c.Type == Date {
		return c.TimeOf(x).Format(time.DateOnly)
	}
	return c.TimeOf(x).Format(time.DateTime)
}

// FormatTemporalMicros is FormatTemporal of x, then, on a timestamp
// column with micros (microseconds past the second x, in [0, 10^6)) not
// zero, the fraction of a second to six digits: YYYY-MM-DD
// HH:MM:SS.ffffff, as MySQL, MariaDB, PostgreSQL and SQLite's text order
// read it.
func (c *Column) FormatTemporalMicros(x float64, micros int32) string {
	if c.Type == Date || micros == 0 {
		return c.FormatTemporal(x)
	}
	return fmt.Sprintf("%s.%06d", c.FormatTemporal(x), micros)
}

// ParseTemporal reads a date literal for a date column ('YYYY-MM-DD') or a
// date or timestamp literal for a timestamp column ('YYYY-MM-DD', which is
// midnight, or 'YYYY-MM-DD HH:MM:SS', the T separator allowed) as the
// column's number: a day or a second from 1970-01-01. The date must exist
// (2021-02-29 does not) and lie in [1000-01-01, 9999-12-31]; a time zone
// or fractional seconds are refused, since the column's values have none.
func (c *Column) ParseTemporal(s string) (float64, error) {
	layout := time.DateTime
	s = strings.TrimSpace(s)
	if c.Type == Date || len(s) == len(time.DateOnly) {
		layout = time.DateOnly
	} else {
		s = strings.Replace(s, "T", " ", 1)
	}
	t, err := time.Parse(layout, s)
	if err == nil && t.Format(layout) != s { // fractional seconds
		err = errors.New("not canonical")
	}
	if err != nil {
		if c.Type == Date {
			return 0, fmt.Errorf("%q is not a date YYYY-MM-DD", s)
		}
		return 0, fmt.Errorf("%q is not a timestamp YYYY-MM-DD HH:MM:SS (or a date YYYY-MM-DD)", s)
	}
	if t.Before(minDate) || t.After(maxDate) {
		return 0, fmt.Errorf("%q is outside [1000-01-01, 9999-12-31]", s)
	}
	if c.Type == Date {
		return float64(t.Unix() / SecondsPerDay), nil
	}
	return float64(t.Unix()), nil
}

// readBounds reads every column's bounds as written (RawLower, RawUpper)
// into Lower and Upper, and clears the raw ones: dates or timestamps for a
// date or timestamp column, numbers for the others (YAML's own number
// syntax).
func (c *Config) readBounds() error {
	for i := range c.Tables {
		for j := range c.Tables[i].Columns {
			col := &c.Tables[i].Columns[j]
			switch col.Type {
			case Integer, Real, Text, Date, Timestamp:
			default:
				continue // Validate names the type
			}
			f := fmt.Sprintf("tables[%d].columns[%d]", i, j)
			var err error
			if col.Lower, err = col.readBound(f+".lower", col.RawLower); err != nil {
				return err
			}
			if col.Upper, err = col.readBound(f+".upper", col.RawUpper); err != nil {
				return err
			}
			// Read once: the parsed Config holds the numbers only, so that
			// the file's layout (the nodes' lines) is no part of a column.
			col.RawLower, col.RawUpper = nil, nil
		}
	}
	return nil
}

// RawBound is a bound as the file writes it: a YAML scalar read by the
// column's type.
type RawBound struct{ node yaml.Node }

// UnmarshalYAML keeps the node.
func (b *RawBound) UnmarshalYAML(n *yaml.Node) error {
	b.node = *n
	return nil
}

func (c *Column) readBound(f string, raw *RawBound) (*float64, error) {
	if raw == nil || raw.node.ShortTag() == "!!null" {
		return nil, nil
	}
	n := &raw.node
	if n.Kind != yaml.ScalarNode {
		return nil, invalid(f, "must be a number or a date, got a %s", map[yaml.Kind]string{yaml.SequenceNode: "list", yaml.MappingNode: "mapping"}[n.Kind])
	}
	if c.Temporal() {
		x, err := c.ParseTemporal(n.Value)
		if err != nil {
			return nil, invalid(f, "%s column %q: %v", c.Type, c.Name, err)
		}
		return &x, nil
	}
	var x float64
	if err := n.Decode(&x); err != nil {
		return nil, invalid(f, "must be a number, got %q", n.Value)
	}
	if !boundHeld(n.Value, x) {
		return nil, invalid(f, "must be a number a double holds exactly, got %s, which reads as %s (beyond 2^53 not every integer is a double): write %s or a wider bound",
			n.Value, strconv.FormatFloat(x, 'f', -1, 64), strconv.FormatFloat(x, 'f', -1, 64))
	}
	return &x, nil
}

// plainNumber is a decimal number as a bound is written: digits, a point,
// an exponent.
var plainNumber = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// boundHeld reports whether the bound written text, read as the double x,
// is x as written (0.1 is, as its shortest digits are what was written;
// 9007199254740993 is not: it reads as 2^53), so that the bounds the
// proxy clamps and reasons with are the ones declared. Text other than a
// plain decimal number (YAML's other spellings) is not checked.
func boundHeld(text string, x float64) bool {
	if !plainNumber.MatchString(text) {
		return true
	}
	written, ok := new(big.Rat).SetString(strings.TrimPrefix(text, "+"))
	if !ok {
		return true
	}
	shortest, _ := new(big.Rat).SetString(strconv.FormatFloat(x, 'g', -1, 64))
	return written.Cmp(shortest) == 0 || written.Cmp(new(big.Rat).SetFloat64(x)) == 0
}

// validateDates checks a date or timestamp column: both bounds, lower ≤
// upper, within [1000-01-01, 9999-12-31 23:59:59], whole days or
// seconds; no declared values (its groups follow from the bounds).
func (c *Column) validateDates(f string) error {
	if c.Lower == nil || c.Upper == nil {
		return invalid(f, "%s column %q needs public bounds lower and upper (dates YYYY-MM-DD)", c.Type, c.Name)
	}
	lo, hi := *c.Lower, *c.Upper
	scale := 1.0
	if c.Type == Date {
		scale = SecondsPerDay
	}
	first, last := float64(minDate.Unix())/scale, math.Floor(float64(maxDate.Unix())/scale)
	if !(lo >= first && hi <= last) || lo != float64(int64(lo)) || hi != float64(int64(hi)) {
		return invalid(f, "bounds of %s column %q must be whole days or seconds in [1000-01-01, 9999-12-31 23:59:59]", c.Type, c.Name)
	}
	if !(lo <= hi) {
		return invalid(f, "bounds must have lower ≤ upper, got [%s, %s]", c.FormatTemporal(lo), c.FormatTemporal(hi))
	}
	if c.Values != nil {
		return invalid(f+".values", "%s column %q declares no values: its groups (YEAR(%s), DATE_FORMAT(%s, '%%Y-%%m'), DATE(%s), ...) follow from its bounds", c.Type, c.Name, c.Name, c.Name, c.Name)
	}
	return nil
}
