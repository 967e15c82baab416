package noise

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Stream is a deterministic generator for choices that need no secrecy and
// are not noise: a public workload drawn from a configured seed, or the
// Median Mechanism's candidate pool, whose privacy rests on the released
// answers alone (its seed is drawn from the crypto Source, and any pool
// would be private). It is SplitMix64 (Steele, Lea and Flood 2014): 64 bits
// of state, serialisable as 8 bytes, so a stored mechanism resumes the same
// stream after a restart. Never use it for a release's noise: that comes
// from a Source backed by crypto/rand.
type Stream struct{ state uint64 }

// NewStream returns the stream keyed by seed.
func NewStream(seed uint64) *Stream { return &Stream{state: seed} }

// Uint64 returns the next 64 bits of the stream.
func (s *Stream) Uint64() uint64 {
	s.state += 0x9e3779b97f4a7c15
	z := s.state
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// IntN returns a uniform integer in [0, n) for n > 0 (exact, by rejection).
func (s *Stream) IntN(n int) int { return int(Uniform(s, uint64(n))) }

// Float64 returns a uniform multiple of 2^-53 in [0, 1).
func (s *Stream) Float64() float64 { return float64(s.Uint64()>>11) * 0x1p-53 }

// ExpFloat64 returns an Exp(1) draw, −ln(1 − U). The float inverse CDF is
// fine here: the stream's draws are public choices, never noise.
func (s *Stream) ExpFloat64() float64 { return -math.Log1p(-s.Float64()) }

// MarshalBinary returns the stream's state.
func (s *Stream) MarshalBinary() ([]byte, error) {
	return binary.LittleEndian.AppendUint64([]byte("splitmix64:"), s.state), nil
}

// UnmarshalBinary restores a state written by MarshalBinary.
func (s *Stream) UnmarshalBinary(b []byte) error {
	const tag = "splitmix64:"
	if len(b) != len(tag)+8 || string(b[:len(tag)]) != tag {
		return fmt.Errorf("noise: not a stream state (%d bytes)", len(b))
	}
	s.state = binary.LittleEndian.Uint64(b[len(tag):])
	return nil
}
