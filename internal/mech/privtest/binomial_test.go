package privtest

import (
	"math"
	"testing"
)

func TestClopperPearson(t *testing.T) {
	// Reference values: the two-sided 95% Clopper–Pearson interval for 5 of
	// 10 is [0.187086, 0.812914]; for k = 0 the upper bound is 1 - α^(1/n),
	// for k = n the lower bound is α^(1/n).
	for _, tc := range []struct {
		name      string
		k, n      int
		alpha     float64
		lower, up float64
	}{
		{name: "half", k: 5, n: 10, alpha: 0.025, lower: 0.187086, up: 0.812914},
		{name: "none", k: 0, n: 10, alpha: 0.05, lower: 0, up: 1 - math.Pow(0.05, 0.1)},
		{name: "all", k: 10, n: 10, alpha: 0.05, lower: math.Pow(0.05, 0.1), up: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ClopperPearsonLower(tc.k, tc.n, tc.alpha); math.Abs(got-tc.lower) > 1e-6 {
				t.Errorf("lower: got %v, want %v", got, tc.lower)
			}
			if got := ClopperPearsonUpper(tc.k, tc.n, tc.alpha); math.Abs(got-tc.up) > 1e-6 {
				t.Errorf("upper: got %v, want %v", got, tc.up)
			}
		})
	}
}
