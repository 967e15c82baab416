package catalog

import (
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
