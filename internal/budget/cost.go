package budget

import (
	"math"
	"strconv"
)

// Tolerance is the relative slack allowed for float rounding when checking
// that a cost fits a limit (see the package documentation).
const Tolerance = 1e-9

// Cost is an amount of privacy budget: an (ε, δ) pair, both finite and ≥ 0.
type Cost struct {
	Epsilon float64
	Delta   float64
}

// String formats the cost as "epsilon=…, delta=…" for messages.
func (c Cost) String() string {
	return "epsilon=" + formatAmount(c.Epsilon) + ", delta=" + formatAmount(c.Delta)
}

// validate reports an error when either component is negative, NaN or infinite.
func (c Cost) validate(what string) error {
	for _, v := range [...]struct {
		name  string
		value float64
	}{{"epsilon", c.Epsilon}, {"delta", c.Delta}} {
		if v.value < 0 || math.IsNaN(v.value) || math.IsInf(v.value, 0) {
			return invalid("%s %s must be finite and >= 0, got %v", what, v.name, v.value)
		}
	}
	return nil
}

// usage is an account's limit and what it has used (reserved or committed).
type usage struct {
	limit Cost
	used  Cost
}

// fits reports whether cost can be added to the usage without exceeding the
// limit by more than Tolerance; a component with zero cost always fits.
func (u usage) fits(cost Cost) bool {
	return fitsAmount(u.used.Epsilon, cost.Epsilon, u.limit.Epsilon) &&
		fitsAmount(u.used.Delta, cost.Delta, u.limit.Delta)
}

func fitsAmount(used, cost, limit float64) bool {
	return cost == 0 || addUp(used, cost) <= limit*(1+Tolerance)
}

// addUp returns a + b rounded up: the smallest float64 at least the exact
// sum. Usage is kept as such an upper bound of the exact sum of what it
// holds (adding a cost, or taking a cancelled one back with b < 0), so a
// cost below half an ulp of the usage still counts, where a rounded sum
// would drop it (an independent review: at ε_used = 20, statements of
// ε = 2^-50 were committed and the total did not move). The error of the
// rounded sum is exact by Knuth's TwoSum (round to nearest, no overflow).
func addUp(a, b float64) float64 {
	s := a + b
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return s
	}
	bb := s - a
	if e := (a - (s - bb)) + (b - bb); e > 0 {
		return math.Nextafter(s, math.Inf(1))
	}
	return s
}

// plus returns u's usage with cost added (negative to take it back),
// rounded up (addUp).
func (u usage) plus(cost Cost) usage {
	u.used = Cost{Epsilon: addUp(u.used.Epsilon, cost.Epsilon), Delta: addUp(u.used.Delta, cost.Delta)}
	return u
}

// remaining returns limit − used per component, clamped to [0, limit] and
// reported as 0 within Tolerance of zero.
func (u usage) remaining() Cost {
	return Cost{
		Epsilon: remainingAmount(u.used.Epsilon, u.limit.Epsilon),
		Delta:   remainingAmount(u.used.Delta, u.limit.Delta),
	}
}

func remainingAmount(used, limit float64) float64 {
	r := limit - used
	if r <= limit*Tolerance {
		return 0
	}
	return min(r, limit)
}

// displayed returns a remaining amount r rounded to fifteen significant
// digits (to nearest), which hides float residue (3.6999999999999997 is
// 3.7) and keeps every real spend visible: a statement of ε = 10⁻⁶
// against a budget of 10⁵ still moves the value (ten digits, as
// formatAmount prints amounts in messages, would hide it, and rounding
// down would keep the residue, 3.69999999999999). It is never more than a
// statement can spend: rounding moves r by at most half a unit of its
// fifteenth digit, 5e-15·r, and r ≤ limit, so the amount is below r +
// limit·Tolerance, the most a cost may be and still fit (fitsAmount); a
// cost of exactly that amount fits.
func displayed(r float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(r, 'g', 15, 64), 64) // always parses
	return v
}

// formatAmount prints an amount with ten significant digits, enough to tell
// budgets apart and few enough to hide float noise such as 0.050000000000000044.
func formatAmount(v float64) string {
	return strconv.FormatFloat(v, 'g', 10, 64)
}
