package mm

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// mmClone returns an independent copy of a ChaCha8 stream at its position.
func mmClone(t *testing.T, src *rand.ChaCha8) *rand.ChaCha8 {
	t.Helper()
	b, err := src.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	c := &rand.ChaCha8{}
	if err := c.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestMMStateRoundTrip: an instance restored from its state behaves
// exactly like the original given the same noise (same answers, same hard
// queries, same pool), so a restart resumes the same run with the same ρ.
func TestMMStateRoundTrip(t *testing.T) {
	hist := mmSpread(64, 40, 100000)
	m, src := mmNew(t, hist, mmDefault, 0x3c01)
	work := rand.New(rand.NewPCG(1, 2))
	queries := func(r *rand.Rand) Predicate {
		a, b := r.IntN(64), r.IntN(64)
		return MmRangePredicate(64, min(a, b), max(a, b))
	}
	ask := func(m *MedianMechanism, src noise.Source, qs []Predicate) []Answer {
		var out []Answer
		for _, q := range qs {
			a, err := m.Answer(src, q, mmCount(hist, q), nil)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, a)
		}
		return out
	}
	var first, second []Predicate
	for i := range 40 {
		if i < 3 {
			first = append(first, queries(work))
		}
		second = append(second, queries(work))
	}
	ask(m, src, first)
	state, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var restored MedianMechanism
	if err := restored.UnmarshalBinary(state); err != nil {
		t.Fatal(err)
	}
	again, err := restored.MarshalBinary()
	if err != nil || !bytes.Equal(again, state) {
		t.Fatalf("re-marshalled state: got equal %v (err %v), want equal", bytes.Equal(again, state), err)
	}
	hardBefore := m.HardUsed()
	got, want := ask(&restored, mmClone(t, src), second), ask(m, src, second)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("answer %d after restoring: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if m.HardUsed() == hardBefore {
		t.Errorf("hard queries after the restore: got none, want some (the test must cover a pool refresh)")
	}
	a, _ := m.MarshalBinary()
	b, _ := restored.MarshalBinary()
	if !bytes.Equal(a, b) {
		t.Errorf("final states: got different, want equal")
	}
}

// mmReseal returns state with its JSON record replaced by edit's output
// and a valid checksum: a consistent-looking but altered state.
func mmReseal(t *testing.T, state []byte, edit func(*mmRecord)) []byte {
	t.Helper()
	head := len(mmStateMagic) + 8
	n := int(binary.LittleEndian.Uint64(state[len(mmStateMagic):head]))
	var rec mmRecord
	if err := json.Unmarshal(state[head:head+n], &rec); err != nil {
		t.Fatal(err)
	}
	edit(&rec)
	js, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	out := append([]byte(mmStateMagic), binary.LittleEndian.AppendUint64(nil, uint64(len(js)))...)
	out = append(append(out, js...), state[head+n:len(state)-sha256.Size]...)
	sum := sha256.Sum256(out)
	return append(out, sum[:]...)
}

func TestMMStateRejects(t *testing.T) {
	hist := mmSpread(64, 4, 100000)
	m, src := mmNew(t, hist, mmDefault, 0x3c02)
	q, _ := NewPredicate(64, []int{0})
	if a, err := m.Answer(src, q, mmCount(hist, q), nil); err != nil || !a.Hard {
		t.Fatalf("got %+v, %v, want a hard answer", a, err)
	}
	state, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(state)
	flipped[len(flipped)/2] ^= 1
	for _, tc := range []struct {
		name  string
		state []byte
	}{
		{"empty", nil},
		{"other magic", append([]byte("DPMMSVT1"), state[8:]...)},
		{"truncated", state[:len(state)-1]},
		{"corrupted", flipped},
		{"hard count beyond cap", mmReseal(t, state, func(r *mmRecord) { r.Hard = r.Plan.HardCap + 1 })},
		{"cuts and hard count disagree", mmReseal(t, state, func(r *mmRecord) { r.Cuts = nil })},
		{"pool outside a cut", mmReseal(t, state, func(r *mmRecord) { r.Cuts[0].Center += 20000 })},
		{"cut run out of the domain", mmReseal(t, state, func(r *mmRecord) { r.Cuts[0].Runs = [][2]int{{0, 65}} })},
		{"invalid config", mmReseal(t, state, func(r *mmRecord) { r.Config.Alpha = 2 })},
		{"bad cache key", mmReseal(t, state, func(r *mmRecord) { r.Cache["zz"] = Answer{} })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r MedianMechanism
			if err := r.UnmarshalBinary(tc.state); !errors.Is(err, ErrState) {
				t.Errorf("got %v, want ErrMMState", err)
			}
		})
	}
}
