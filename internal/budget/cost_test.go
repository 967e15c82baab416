package budget

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestFitsWithinTolerance(t *testing.T) {
	tests := []struct {
		name              string
		used, cost, limit float64
		want              bool
	}{
		{"exact", 0.9, 0.1, 1, true},
		{"rounding below the limit", 0.9999999999999999, 0, 1, true},
		{"ten tenths", 0.1 + 0.1 + 0.1 + 0.1 + 0.1 + 0.1 + 0.1 + 0.1 + 0.1, 0.1, 1, true},
		{"within 1e-9 relative", 1, 1e-10, 1, true},
		{"beyond 1e-9 relative", 1, 2e-9, 1, false},
		{"eleventh tenth", 0.9999999999999999, 0.1, 1, false},
		{"positive cost against a zero limit", 0, 1e-12, 0, false},
		{"zero cost always fits", 5, 0, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fitsAmount(tt.used, tt.cost, tt.limit); got != tt.want {
				t.Errorf("fitsAmount(%v, %v, %v): got %v, want %v", tt.used, tt.cost, tt.limit, got, tt.want)
			}
		})
	}
}

func TestRemainingAmount(t *testing.T) {
	tests := []struct {
		name        string
		used, limit float64
		want        float64
	}{
		{"unused", 0, 2, 2},
		{"half", 1, 2, 1},
		{"float noise is zero", 0.9999999999999999, 1, 0},
		{"overspent by a lowered limit", 3, 1, 0},
		{"negative noise after cancels", -1e-17, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := remainingAmount(tt.used, tt.limit); got != tt.want {
				t.Errorf("remainingAmount(%v, %v): got %v, want %v", tt.used, tt.limit, got, tt.want)
			}
		})
	}
}

func TestDisplayName(t *testing.T) {
	tests := []struct{ account, want string }{
		{"user:alice", "user alice"},
		{"table:pums", "table pums"},
		{"global", "account global"},
		{":x", "account :x"},
	}
	for _, tt := range tests {
		if got := displayName(tt.account); got != tt.want {
			t.Errorf("displayName(%q): got %v, want %v", tt.account, got, tt.want)
		}
	}
}

// TestDisplayedRemainder: a remaining amount is reported with ten
// significant digits, without float residue (it was 3.6999999999999997
// and 9.950000000000001e-06), and a cost of exactly the reported amount
// fits, for remainders of sums of configured amounts and of arbitrary
// floats alike.
func TestDisplayedRemainder(t *testing.T) {
	tenth := addUp(addUp(0.1, 0.1), 0.1)
	for _, c := range []struct {
		used, limit, want float64
	}{
		{tenth, 4, 3.7},
		{5e-8, 1e-5, 9.95e-6},
		{0.45, 1.55, 1.1},
		{0, 2.0 / 3, 0.666666666666667},
		{1e-6, 1e5, 99999.999999},
	} {
		r := remainingAmount(c.used, c.limit)
		if got := displayed(r); got != c.want {
			t.Errorf("displayed(%v − %v = %v): got %v, want %v", c.limit, c.used, r, got, c.want)
		}
	}
	src := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		limit := math.Pow(10, src.Float64()*12-8) * (1 + src.Float64())
		used := 0.0
		if src.IntN(2) == 0 {
			used = limit * src.Float64()
		} else {
			step := math.Pow(10, -float64(src.IntN(4))) * limit
			for n := src.IntN(20); n > 0; n-- {
				used = addUp(used, step*0.1)
			}
		}
		d := displayed(remainingAmount(used, limit))
		if d > 0 && !fitsAmount(used, d, limit) {
			t.Fatalf("limit %v, used %v: displayed remainder %v does not fit", limit, used, d)
		}
	}
}
