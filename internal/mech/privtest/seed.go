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
