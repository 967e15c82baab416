package mm

import (
	"crypto/sha256"
	"encoding/json"
	"math"
	"strconv"
)

// Stored size. A caller that persists the state (MarshalBinary) writes it
// whole after every test, to a store that may cap the size of a value (a
// MySQL/MariaDB ledger: max_allowed_packet). The state's size is bounded
// by public quantities alone: the pool (8·PoolSize·|X| bytes), at most
// MaxCachedAnswers cache entries, one cut per hard answer (at most H) and
// a fixed part. StateBound gives that bound, so that a caller can refuse,
// before reading any data, an instance whose state could not be stored,
// and cap H (Config.MaxHardCap, from HardCapWithin) so that the state
// stays within its store's limit for the instance's whole life. Whether a
// commit fails for its size then never depends on the data, nor on which
// answers were hard (which a size that grew with the hard answers' cuts
// alone would tell).

// MaxCachedAnswers bounds the answer cache: once it holds this many
// answers, later answers are released as before but not cached, so asking
// such a query again runs a new test. The cache is post-processing (a
// repeat of a released answer), so what it keeps changes no guarantee; the
// bound keeps the state, and what every test writes, bounded (about 290
// bytes an entry at most).
const MaxCachedAnswers = 4096

// stateOverhead bounds the state's fixed part: the magic, the record's
// length and checksum, and the record's configuration, plan, counters, ρ
// and pool stream with every number at its longest (state_test.go's
// TestMMStateBound checks it).
const stateOverhead = 4096

// cacheEntryBound bounds the JSON of one cache entry: the quoted hex key,
// the colon, the answer with every number at its longest, and a comma.
var cacheEntryBound = func() int64 {
	worst := -2.2250738585072014e-308 // 17 digits and a three-digit exponent
	js, err := json.Marshal(Answer{Count: math.MinInt64, Alpha: math.MinInt64, AlphaFraction: worst,
		Confidence: worst, HardUsed: math.MinInt, HardCap: math.MinInt})
	if err != nil {
		panic(err)
	}
	return int64(len(js)) + 2*sha256.Size + 4
}()

// cutBound bounds the JSON of one cut over cells cells: a predicate has at
// most ⌈cells/2⌉ runs (they are maximal, so separated by a cell), each
// written [lo,hi], with lo and hi at most cells, and two numbers at their
// longest.
func cutBound(cells int) int64 {
	digits := int64(len(strconv.Itoa(cells)))
	return 80 + int64(cells+1)/2*(2*digits+4)
}

// StateBound returns an upper bound, in bytes, of the state (MarshalBinary)
// of an instance over cells cells configured by cfg whose cap on hard
// answers is hardCap, for the instance's whole life.
func StateBound(cfg Config, cells, hardCap int) int64 {
	cfg = cfg.withDefaults()
	return stateOverhead + 8*int64(cfg.PoolSize)*int64(cells) + MaxCachedAnswers*cacheEntryBound + int64(hardCap)*cutBound(cells)
}

// HardCapWithin returns the largest H for which StateBound(cfg, cells, H)
// is at most limit bytes, or 0 when not even H = 1 fits.
func HardCapWithin(cfg Config, cells int, limit int64) int {
	rest := limit - StateBound(cfg, cells, 0)
	if rest < cutBound(cells) {
		return 0
	}
	return int(min(rest/cutBound(cells), math.MaxInt32))
}
