package mm

import (
	"bytes"
	"crypto/sha256"
	"math/rand/v2"
	"testing"
)

// FuzzStateDecoder feeds arbitrary state bodies to UnmarshalBinary with a
// valid checksum appended (so the fuzzer gets past the integrity check to
// the parser and the consistency checks): it must never panic, and a state
// it accepts must marshal back to the same bytes. Seeds: states of a small
// instance after a few answers. Run longer with
//
//	go test -run '^$' -fuzz FuzzStateDecoder -fuzztime 10m ./internal/mech/mm
func FuzzStateDecoder(f *testing.F) {
	hist := []int64{5000, 0, 2000, 3000, 0, 0, 10000, 1000}
	src := rand.NewChaCha8([32]byte{9})
	m, err := NewMedianMechanism(src, len(hist), 21000, Config{Epsilon: 1, Alpha: 0.1, PoolSize: 16})
	if err != nil {
		f.Fatal(err)
	}
	for i := range 4 {
		if state, err := m.MarshalBinary(); err == nil {
			f.Add(state[:len(state)-sha256.Size])
		}
		q := MmRangePredicate(len(hist), i, len(hist)-1)
		if _, err := m.Answer(src, q, mmCount(hist, q), nil); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		sum := sha256.Sum256(body)
		state := append(bytes.Clone(body), sum[:]...)
		var restored MedianMechanism
		if err := restored.UnmarshalBinary(state); err != nil {
			return
		}
		again, err := restored.MarshalBinary()
		if err != nil {
			t.Fatalf("an accepted state does not marshal: %v", err)
		}
		if !bytes.Equal(again, state) {
			var twice MedianMechanism
			if err := twice.UnmarshalBinary(again); err != nil {
				t.Fatalf("an accepted state re-marshals to one that is refused: %v", err)
			}
		}
	})
}
