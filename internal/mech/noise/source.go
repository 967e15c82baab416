package noise

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
)

// Source is a source of uniformly distributed 64-bit values: the method set
// of math/rand/v2.Source, so a seeded *rand.ChaCha8 can stand in for tests.
type Source interface {
	Uint64() uint64
}

// cryptoBufferSize is how many bytes of crypto/rand output the crypto Source
// fetches at once.
const cryptoBufferSize = 4096

// cryptoSource draws from crypto/rand through a buffer guarded by a mutex.
type cryptoSource struct {
	mu  sync.Mutex
	buf [cryptoBufferSize]byte
	pos int
}

// NewCryptoSource returns a Source backed by crypto/rand, safe for concurrent
// use. It is the only Source production code may use: it cannot be seeded.
func NewCryptoSource() Source {
	return &cryptoSource{pos: cryptoBufferSize}
}

// Uint64 returns 64 uniformly random bits from crypto/rand.
func (c *cryptoSource) Uint64() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pos+8 > len(c.buf) {
		// crypto/rand.Read never returns an error since Go 1.24 (it
		// crashes the program instead of returning predictable bytes).
		_, _ = rand.Read(c.buf[:])
		c.pos = 0
	}
	v := binary.LittleEndian.Uint64(c.buf[c.pos:])
	c.pos += 8
	return v
}
