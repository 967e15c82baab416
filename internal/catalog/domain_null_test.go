package catalog

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestDomainNullEntry: null in a declared domain is NullValue, in its
// declared place, for numeric and text columns; "null" in quotes is the
// string; a NUL character in a value and a second null are refused.
func TestDomainNullEntry(t *testing.T) {
	cfg := strings.Replace(validConfig, "{name: state, type: text}",
		"{name: state, type: text, values: [CA, 'null', ~]}\n      - {name: smoker, type: integer, lower: 0, upper: 1, values: [0, null, 1]}", 1)
	c, err := ParseConfig(strings.NewReader(cfg))
	if err != nil {
		t.Fatal(err)
	}
	tb, _ := c.Table("pums")
	state, _ := tb.Column("state")
	smoker, _ := tb.Column("smoker")
	if want := []string{"CA", "null", NullValue}; !slices.Equal(state.Values, want) {
		t.Errorf("state values %q, want %q", state.Values, want)
	}
	if want := []string{"0", NullValue, "1"}; !slices.Equal(smoker.Values, want) {
		t.Errorf("smoker values %q, want %q", smoker.Values, want)
	}
	for _, bad := range []string{"[0, null, null]", `["a\0b"]`, "[[1]]"} {
		cfg := strings.Replace(validConfig, "{name: state, type: text}", "{name: state, type: text, values: "+bad+"}", 1)
		if _, err := ParseConfig(strings.NewReader(cfg)); err == nil {
			t.Errorf("values: %s was accepted", bad)
		}
	}
}

// TestDeclaredNumbersAreCanonical: two spellings of one number in a
// declared domain (0 and -0, 1 and 1.0) are refused as duplicates, in
// group domains and interactive domains alike: as two values both would
// take the number's rows, a row in two groups.
func TestDeclaredNumbersAreCanonical(t *testing.T) {
	for _, bad := range []string{"[0, -0]", "['-0', '0']", "[1, 1.0]", "[1e0, 1]"} {
		cfg := strings.Replace(validConfig, "{name: state, type: text}",
			"{name: state, type: text}\n      - {name: smoker, type: integer, lower: -1, upper: 1, values: "+bad+"}", 1)
		if _, err := ParseConfig(strings.NewReader(cfg)); err == nil || !strings.Contains(err.Error(), "duplicate") {
			t.Errorf("values: %s: %v, want a duplicate", bad, err)
		}
	}
	cfg := strings.Replace(validConfig, "{name: state, type: text}",
		"{name: state, type: text}\n      - {name: smoker, type: integer, lower: -1, upper: 1, values: ['-0', 1]}", 1)
	c, err := ParseConfig(strings.NewReader(cfg))
	if err != nil {
		t.Fatal(err)
	}
	tb, _ := c.Table("pums")
	smoker, _ := tb.Column("smoker")
	if want := []string{"0", "1"}; !slices.Equal(smoker.Values, want) {
		t.Errorf("values %q, want %q", smoker.Values, want)
	}
	interactive := strings.Replace(interactiveConfig, "{name: sex, values: [0, 1.0]}", "{name: sex, values: [0, -0]}", 1)
	if _, err := ParseConfig(strings.NewReader(interactive)); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("interactive values [0, -0]: %v, want a duplicate", err)
	}
}

// TestDomainValuesAreValidText: declared text values (a GROUP BY domain,
// an interactive domain's categories) become bind arguments, so one that
// holds a NUL byte or is not valid UTF-8 is refused at validation, naming
// the field. YAML cannot spell bytes that are not UTF-8, but a
// configuration built in code can.
func TestDomainValuesAreValidText(t *testing.T) {
	for _, bad := range []string{"C\xffA", "\xc3", "a\x00b"} {
		c, err := ParseConfig(strings.NewReader(strings.Replace(validConfig, "{name: state, type: text}", "{name: state, type: text, values: [CA, NY]}", 1)))
		if err != nil {
			t.Fatal(err)
		}
		for j, col := range c.Tables[0].Columns {
			if col.Name == "state" {
				c.Tables[0].Columns[j].Values[1] = bad
				var ve *ValidationError
				if err := c.Validate(); !errors.As(err, &ve) || ve.Field != fmt.Sprintf("tables[0].columns[%d].values[1]", j) {
					t.Errorf("value %q: got %v, want an error naming tables[0].columns[%d].values[1]", bad, err, j)
				}
			}
		}
		c, err = ParseConfig(strings.NewReader(interactiveConfig))
		if err != nil {
			t.Fatal(err)
		}
		c.Tables[0].Interactive.Columns[2].Values[0] = bad
		var ve *ValidationError
		if err := c.Validate(); !errors.As(err, &ve) || ve.Field != "tables[0].interactive.columns[2].values[0]" {
			t.Errorf("interactive value %q: got %v, want an error naming tables[0].interactive.columns[2].values[0]", bad, err)
		}
	}
}
