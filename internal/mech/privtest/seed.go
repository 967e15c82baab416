package privtest

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"strconv"
)

// SeedEnv is the environment variable that overrides every test seed.
const SeedEnv = "DPPROXY_TEST_SEED"

// Reporter is the part of *testing.T the helpers use.
type Reporter interface {
	Helper()
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
}

// Seed returns def, or the value of DPPROXY_TEST_SEED when it is set (any
// integer syntax strconv.ParseUint accepts with base 0), and logs the seed
// so a failure can be replayed.
func Seed(t Reporter, def uint64) uint64 {
	t.Helper()
	seed := def
	if s, ok := os.LookupEnv(SeedEnv); ok {
		v, err := strconv.ParseUint(s, 0, 64)
		if err != nil {
			t.Errorf("%s=%q: %v", SeedEnv, s, err)
		} else {
			seed = v
		}
	}
	t.Logf("seed=%#x (override with %s)", seed, SeedEnv)
	return seed
}

// NewSource returns a ChaCha8 generator keyed by seed and stream, so one seed
// gives independent streams (for example one per dataset of an audit).
func NewSource(seed, stream uint64) *rand.ChaCha8 {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[0:], seed)
	binary.LittleEndian.PutUint64(key[8:], stream)
	return rand.NewChaCha8(key)
}

// Z6 is the two-sided 1-10⁻⁶ quantile of the standard normal: a correct
// sampler lands farther than Z6 standard errors from its mean with
// probability 10⁻⁶ (scipy: norm.isf(0.5e-6) = 4.8916).
const Z6 = 4.891638

// Seeded returns a ChaCha8 source for a statistical test, from the test's
// default seed or DPPROXY_TEST_SEED, logging the seed.
func Seeded(t Reporter, def uint64) *rand.ChaCha8 {
	t.Helper()
	return NewSource(Seed(t, def), 0)
}

// SeqSource replays fixed values, to drive samplers deterministically; it
// panics when they run out.
type SeqSource struct{ Vals []uint64 }

// Uint64 returns the next value.
func (s *SeqSource) Uint64() uint64 {
	v := s.Vals[0]
	s.Vals = s.Vals[1:]
	return v
}
