package histogram

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// FuzzSynopsisDecoder feeds arbitrary bytes to Synopsis.UnmarshalJSON, the
// decoder of synopses stored with the ledger: it must never panic, and a
// synopsis it accepts must answer every range and marshal back to an
// equivalent synopsis. Run longer with
//
//	go test -run '^$' -fuzz FuzzSynopsisDecoder -fuzztime 10m ./internal/mech/histogram
func FuzzSynopsisDecoder(f *testing.F) {
	for _, n := range []int{1, 5, 16} {
		s, err := Identity(rand.NewChaCha8([32]byte{byte(n)}), make([]int64, n), 0.5)
		if err != nil {
			f.Fatal(err)
		}
		b, err := json.Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"version":1,"mechanism":"dawa","epsilon":0.5,"n":10,"starts":[0,2,3,7],"totals":[6.3,7.1,3.6,8.4]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s Synopsis
		if err := json.Unmarshal(data, &s); err != nil {
			return
		}
		if s.N() > 1<<12 {
			return // valid, but too large to query exhaustively here
		}
		for lo := 0; lo < s.N(); lo++ {
			_ = s.Answer(lo, s.N()-1)
			_ = s.RangeSum(0, lo)
		}
		_ = s.Estimate()
		again, err := json.Marshal(&s)
		if err != nil {
			t.Fatalf("an accepted synopsis does not marshal: %v", err)
		}
		var twice Synopsis
		if err := json.Unmarshal(again, &twice); err != nil {
			t.Fatalf("an accepted synopsis re-marshals to one that is refused: %v", err)
		}
		if again2, _ := json.Marshal(&twice); !bytes.Equal(again, again2) {
			t.Fatalf("round trip changed the synopsis: %s vs %s", again, again2)
		}
	})
}

// FuzzSynopsisBinaryDecoder is FuzzSynopsisDecoder for the binary form:
// never a panic, and an accepted synopsis answers every range and
// marshals back to the same bytes. Run longer with
//
//	go test -run '^$' -fuzz FuzzSynopsisBinaryDecoder -fuzztime 10m ./internal/mech/histogram
func FuzzSynopsisBinaryDecoder(f *testing.F) {
	for _, s := range []*Synopsis{exampleSynopsis(), newSynopsis("identity", 1, 3, identityStarts(3), []float64{1, 2, 3})} {
		b, err := s.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var s Synopsis
		if err := s.UnmarshalBinary(data); err != nil {
			return
		}
		if s.N() > 1<<12 {
			return // valid, but too large to query exhaustively here
		}
		for lo := 0; lo < s.N(); lo++ {
			_ = s.Answer(lo, s.N()-1)
			_ = s.RangeSum(0, lo)
		}
		again, err := s.MarshalBinary()
		if err != nil {
			t.Fatalf("an accepted synopsis does not marshal: %v", err)
		}
		if !bytes.Equal(again, data) {
			t.Fatalf("round trip changed the synopsis: %x vs %x", again, data)
		}
	})
}
