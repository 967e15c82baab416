package privtest

import "gonum.org/v1/gonum/stat/distuv"

// ClopperPearsonLower returns the exact one-sided lower confidence bound on
// a binomial proportion after k successes in n trials: P[p < bound] ≤ alpha.
func ClopperPearsonLower(k, n int, alpha float64) float64 {
	if k == 0 {
		return 0
	}
	return distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(alpha)
}

// ClopperPearsonUpper returns the exact one-sided upper confidence bound on
// a binomial proportion after k successes in n trials: P[p > bound] ≤ alpha.
func ClopperPearsonUpper(k, n int, alpha float64) float64 {
	if k == n {
		return 1
	}
	return distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(1 - alpha)
}
