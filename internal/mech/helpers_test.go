package mech

import (
	"math/rand/v2"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// z6 is the two-sided 1-10⁻⁶ quantile of the standard normal: a correct
// sampler lands farther than z6 standard errors from its mean with
// probability 10⁻⁶ (scipy: norm.isf(0.5e-6) = 4.8916).
const z6 = 4.891638

// seeded returns a ChaCha8 source for a statistical test, from the test's
// default seed or DPPROXY_TEST_SEED, logging the seed.
func seeded(t *testing.T, def uint64) *rand.ChaCha8 {
	t.Helper()
	return privtest.NewSource(privtest.Seed(t, def), 0)
}
