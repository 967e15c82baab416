package budget

import "testing"

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
