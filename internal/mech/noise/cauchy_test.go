package noise

import (
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestGridCauchyFarBlocksAccepted checks the acceptance step on proposals
// far enough out that d² overflows a float64. Just past the inner edge of
// block m (|j| ≈ J·2^(m−1), J = ⌈σ⌉) the exact acceptance probability
// σ²/((σ² + d²)·4/4^m) is about σ²/J², at least ¼ here, so a block that
// accepts none of 2000 draws fails by chance with probability below (¾)^2000.
// The float short-cut once rejected every one of them (block m ≥ 510).
func TestGridCauchyFarBlocksAccepted(t *testing.T) {
	g := NewGridCauchy(big.NewRat(1, 3), 10)
	src := rand.NewChaCha8([32]byte{1})
	for _, m := range []uint{1, 100, 509, 520, 700, 1100} {
		j := new(big.Int).Add(new(big.Int).Lsh(big.NewInt(g.j0), m-1), big.NewInt(1))
		accepted := 0
		for range 2000 {
			if g.accept(src, j, m) {
				accepted++
			}
		}
		if accepted == 0 {
			t.Errorf("block %d: no proposal accepted in 2000; the exact probability is at least ¼", m)
		}
	}
}
