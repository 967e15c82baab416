package bind

import (
	"math"
	"testing"
)

// TestLimitIntegers: strings and DECIMALs read as MariaDB 10.11 reads
// them in LIMIT ? (checked there through the binary protocol).
func TestLimitIntegers(t *testing.T) {
	for _, tc := range []struct {
		text   string
		n      Integer
		binary uint64
	}{
		{"2", Integer{Mag: 2}, 2},
		{"abc", Integer{}, 0},
		{"", Integer{}, 0},
		{"2.9", Integer{Mag: 2}, 2},
		{"1e1", Integer{Mag: 1}, 1},
		{" \t\n-1", Integer{Neg: true, Mag: 1}, math.MaxUint64},
		{"-0", Integer{}, 0},
		{"+3x", Integer{Mag: 3}, 3},
		{"18446744073709551616", Integer{Over: true}, math.MaxUint64},
		{"-18446744073709551615", Integer{Neg: true, Mag: math.MaxUint64}, 1 << 63},
	} {
		if got := LeadingInteger(tc.text); got.Neg != tc.n.Neg || got.Mag != tc.n.Mag && !got.Over || got.Over != tc.n.Over || got.Unsigned() != tc.binary {
			t.Errorf("LeadingInteger(%q): got %+v (%d), want %+v (%d)", tc.text, got, got.Unsigned(), tc.n, tc.binary)
		}
	}
	for text, want := range map[string]uint64{
		"2.5": 3, "2.4": 2, "3.5": 4, "-0.4": 0, "-0.5": math.MaxUint64, "25e-1": 3, "2.5e-1": 0, "1e1": 10, "0.05e2": 5,
		".5": 1, "1e-1048577": 0, "99999999999999999999": math.MaxUint64, "-99999999999999999999": 1 << 63, "1e400": math.MaxUint64,
	} {
		if got := RoundDecimal(text).Unsigned(); got != want {
			t.Errorf("RoundDecimal(%q): got %d, want %d", text, got, want)
		}
	}
}
