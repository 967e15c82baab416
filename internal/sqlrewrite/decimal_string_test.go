package sqlrewrite

import "testing"

// TestDecimalString: a string compared with a numeric column is a number
// only in MySQL's decimal syntax; Go's own forms, which MySQL reads as
// another number ('0x1p3' as 0, '1_0' as 1), are not numbers.
func TestDecimalString(t *testing.T) {
	for s, want := range map[string]float64{
		"8": 8, " 8 ": 8, "\t-3.5\n": -3.5, "+2": 2, ".5": 0.5, "5.": 5, "1e1": 10, "1.5E-1": 0.15, "007": 7,
	} {
		if got, ok := decimalString(s); !ok || got != want {
			t.Errorf("%q: %g, %v; want %g", s, got, ok, want)
		}
	}
	for _, s := range []string{
		"0x1p3", "0x10", "1_0", "\u00a08", "8\u2003", "Inf", "NaN", "infinity", "1e400", "", " ", ".", "e5", "1e", "--1", "1 2", "0b1",
	} {
		if got, ok := decimalString(s); ok {
			t.Errorf("%q read as %g; want no number", s, got)
		}
	}
}
