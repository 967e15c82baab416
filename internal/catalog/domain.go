package catalog

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ValidText reports whether s may be a text value sent to a backend: valid
// UTF-8 without a NUL byte. PostgreSQL rejects both in a text value, and
// MySQL and MariaDB may reject or mangle them, so a statement or a
// configuration that holds one is refused before anything is read.
func ValidText(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}

// MaxGroups is the public cap on the number of groups of one GROUP BY: the
// size of the cross product of the keys' declared domains. It is a
// property of the query and the configuration, never of the data.
const MaxGroups = 10000

// MaxResultBytes bounds the result of one statement that the proxy builds
// in its own memory: the cells of a statement over the catalog (package
// catalogdb), and the cells post-processing computes from a private
// answer's released values (package planner). A result is held whole
// before it is sent, so without it one short statement could grow the
// process for every analyst at once (REPEAT('x', 1000000) beside 5,001
// buckets built 15 GB and killed the proxy).
const MaxResultBytes = 64 << 20

// HasDomain reports whether the column declares its domain (values), so
// that it may be a GROUP BY key and its values may be listed.
func (c *Column) HasDomain() bool { return len(c.Values) > 0 }

// validateDomain checks a column's declared values: at most MaxGroups,
// distinct, numbers (within the bounds) for a numeric column, valid text
// (ValidText) for a text column. Numbers are
// stored in their canonical spelling (strconv 'g').
func (c *Column) validateDomain(f string) error {
	if c.PartitionSelection && (c.Values != nil || c.Type == Real || c.Temporal()) {
		return invalid(f+".partition_selection", "applies to integer and text columns without declared values (column %q)", c.Name)
	}
	if c.Values == nil {
		return nil
	}
	if len(c.Values) == 0 || len(c.Values) > MaxGroups {
		return invalid(f+".values", "must list between 1 and %d values, got %d", MaxGroups, len(c.Values))
	}
	seen := map[string]bool{}
	for j, v := range c.Values {
		if v != NullValue && !ValidText(v) {
			return invalid(fmt.Sprintf("%s.values[%d]", f, j), "values must be valid UTF-8 without NUL bytes, got %q", v)
		}
		if c.Numeric() && v != NullValue {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
				return invalid(fmt.Sprintf("%s.values[%d]", f, j), "numeric column %q needs finite numbers, got %q", c.Name, v)
			}
			if x < *c.Lower || x > *c.Upper {
				return invalid(fmt.Sprintf("%s.values[%d]", f, j), "value %g is outside the bounds [%g, %g] of column %q", x, *c.Lower, *c.Upper, c.Name)
			}
			v = canonicalNumber(x)
			c.Values[j] = v
		}
		if seen[v] {
			return invalid(fmt.Sprintf("%s.values[%d]", f, j), "duplicate value %q", v)
		}
		seen[v] = true
	}
	return nil
}

// canonicalNumber spells a declared number as its shortest round-trip
// digits, -0 as 0, so that two spellings of one number (1 and 1.0, 0 and
// -0) are one value: as two they would both take its rows.
func canonicalNumber(x float64) string {
	if x == 0 {
		x = 0
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// DistinctValues returns D, the most distinct non-NULL values the column
// can hold by its declaration alone: its declared values without null;
// an integer column's integers within its bounds, ⌊upper⌋ − ⌈lower⌉ + 1
// (0 when they hold none); a date column's days within its bounds; the
// smaller of the two where both apply. ok is false where the declaration
// sets no finite limit: a text column without values, a real column
// without values, and a timestamp column, whose values may hold
// fractions of a second. COUNT(DISTINCT col) of values that keep to the
// declaration is at most D, so a released one is clamped to [0, D]
// (planner.Output.Evaluate); rows holding values outside the declaration
// are then undercounted, as clamped sums are.
func (c *Column) DistinctValues() (d float64, ok bool) {
	d = math.Inf(1)
	if c.Values != nil {
		n := 0
		for _, v := range c.Values {
			if v != NullValue {
				n++
			}
		}
		d = float64(n)
	}
	if (c.Type == Integer || c.Type == Date) && c.Lower != nil && c.Upper != nil {
		d = math.Min(d, math.Max(0, math.Floor(*c.Upper)-math.Ceil(*c.Lower)+1))
	}
	return d, !math.IsInf(d, 1)
}
