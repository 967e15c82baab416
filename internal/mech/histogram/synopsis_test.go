package histogram

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
)

// exampleSynopsis is the paper's Example 1: buckets [1,2], [3], [4,7],
// [8,10] (0-based starts 0, 2, 3, 7) with totals 6.3, 7.1, 3.6, 8.4.
func exampleSynopsis() *Synopsis {
	return newSynopsis("dawa", 0.5, 10, []int{0, 2, 3, 7}, []float64{6.3, 7.1, 3.6, 8.4})
}

func TestSynopsisAnswers(t *testing.T) {
	s := exampleSynopsis()
	// The paper's expansion: (3.15, 3.15, 7.1, .9, .9, .9, .9, 2.8, 2.8, 2.8).
	want := []float64{3.15, 3.15, 7.1, .9, .9, .9, .9, 2.8, 2.8, 2.8}
	for j, v := range s.Estimate() {
		if math.Abs(v-want[j]) > 1e-12 {
			t.Errorf("Estimate[%d]: got %v, want %v", j, v, want[j])
		}
	}
	for _, tc := range []struct {
		lo, hi int
		sum    float64
		answer int64
	}{
		{0, 9, 25.4, 25},
		{1, 5, 3.15 + 7.1 + 0.9*3, 13}, // Example 4.5: ½s1 + s2 + ¾s3
		{4, 4, 0.9, 1},
		{2, 2, 7.1, 7},
	} {
		if got := s.RangeSum(tc.lo, tc.hi); math.Abs(got-tc.sum) > 1e-12 {
			t.Errorf("RangeSum(%d, %d): got %v, want %v", tc.lo, tc.hi, got, tc.sum)
		}
		if got := s.Answer(tc.lo, tc.hi); got != tc.answer {
			t.Errorf("Answer(%d, %d): got %v, want %v", tc.lo, tc.hi, got, tc.answer)
		}
	}
	// Half of bin 2 and a quarter of bin 0.
	if got, want := s.SpanSum(2.5, 3), 3.55; math.Abs(got-want) > 1e-12 {
		t.Errorf("SpanSum(2.5, 3): got %v, want %v", got, want)
	}
	if got, want := s.SpanSum(0, 0.25), 3.15/4; math.Abs(got-want) > 1e-12 {
		t.Errorf("SpanSum(0, 0.25): got %v, want %v", got, want)
	}
	if s.Buckets() != 4 || s.N() != 10 || s.Mechanism() != "dawa" || s.Epsilon() != 0.5 {
		t.Errorf("accessors: got %d %d %q %v", s.Buckets(), s.N(), s.Mechanism(), s.Epsilon())
	}
}

func TestSynopsisAnswerClampsAndRounds(t *testing.T) {
	s := newSynopsis("identity", 1, 3, []int{0, 1, 2}, []float64{-4.2, 2.5, 1e30})
	for _, tc := range []struct {
		lo, hi int
		want   int64
	}{{0, 0, 0}, {0, 1, 0}, {1, 1, 3}, {2, 2, math.MaxInt64}} {
		if got := s.Answer(tc.lo, tc.hi); got != tc.want {
			t.Errorf("Answer(%d, %d): got %v, want %v", tc.lo, tc.hi, got, tc.want)
		}
	}
}

func TestSynopsisPanicsOnBadRange(t *testing.T) {
	s := exampleSynopsis()
	for _, f := range []func(){
		func() { s.RangeSum(-1, 2) },
		func() { s.RangeSum(3, 2) },
		func() { s.Answer(0, 10) },
		func() { s.SpanSum(0, 10.5) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("got no panic, want one")
				}
			}()
			f()
		}()
	}
}

func TestSynopsisJSONRoundTrip(t *testing.T) {
	for _, s := range []*Synopsis{
		exampleSynopsis(),
		newSynopsis("h2", 0.1, 3, identityStarts(3), []float64{1.0 / 3, -2e-300, 12345.678}),
	} {
		data, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var back Synopsis
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		if fmt.Sprint(back.starts, back.totals, back.n, back.epsilon, back.mechanism) != fmt.Sprint(s.starts, s.totals, s.n, s.epsilon, s.mechanism) {
			t.Errorf("round trip of %s: got %+v, want %+v", data, back, *s)
		}
		if back.RangeSum(0, s.n-1) != s.RangeSum(0, s.n-1) {
			t.Errorf("round trip of %s: answers differ", data)
		}
	}
	// Singletons are stored without starts.
	data, _ := json.Marshal(newSynopsis("identity", 1, 2, identityStarts(2), []float64{1, 2}))
	if want := `{"version":1,"mechanism":"identity","epsilon":1,"n":2,"totals":[1,2]}`; string(data) != want {
		t.Errorf("got %s, want %s", data, want)
	}
}

func TestSynopsisJSONRejects(t *testing.T) {
	for _, in := range []string{
		`{"version":2,"mechanism":"x","epsilon":1,"n":2,"totals":[1,2]}`,
		`{"version":1,"mechanism":"x","epsilon":1,"n":2,"totals":[1]}`,
		`{"version":1,"mechanism":"x","epsilon":1,"n":3,"starts":[0,2,1],"totals":[1,2,3]}`,
		`{"version":1,"mechanism":"x","epsilon":1,"n":3,"starts":[1,2],"totals":[1,2]}`,
		`{"version":1,"mechanism":"x","epsilon":1,"n":3,"starts":[0,3],"totals":[1,2]}`,
		`{"version":1,"mechanism":"x","epsilon":1,"n":0,"totals":[]}`,
	} {
		var s Synopsis
		err := json.Unmarshal([]byte(in), &s)
		if !errors.Is(err, mech.ErrInvalidInput) && !errors.Is(err, ErrInvalidWorkload) {
			t.Errorf("%s: got %v, want an invalid-input error", in, err)
		}
	}
}

// TestSynopsisBinaryRoundTrip: the binary form gives back the same
// synopsis, and never takes more than BinaryBound, whatever the partition
// (singletons, the paper's example, wide buckets whose widths take several
// bytes, n-1 buckets, the worst case for the widths) and the totals.
func TestSynopsisBinaryRoundTrip(t *testing.T) {
	wide := newSynopsis("dawa/noisy-cost", 2, 1<<15, []int{0, 1, 200, 20000}, []float64{-1e300, 5e-324, math.Pi, 0})
	worst := make([]int, 999)
	for c := range worst {
		worst[c] = c + 1
	}
	worst[0] = 0
	for _, s := range []*Synopsis{
		exampleSynopsis(),
		newSynopsis("h2", 0.1, 3, identityStarts(3), []float64{1.0 / 3, -2e-300, 12345.678}),
		wide,
		newSynopsis("greedy-h", 1, 1000, worst, make([]float64, 999)),
		newSynopsis("identity", 1, 1, []int{0}, []float64{-0.5}),
	} {
		data, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(data)) > BinaryBound(s.n) {
			t.Errorf("%s over %d bins in %d buckets: %d bytes, above BinaryBound %d", s.mechanism, s.n, len(s.starts), len(data), BinaryBound(s.n))
		}
		var back Synopsis
		if err := back.UnmarshalBinary(data); err != nil {
			t.Fatalf("%s: %v", s.mechanism, err)
		}
		if fmt.Sprint(back.starts, back.totals, back.n, back.epsilon, back.mechanism) != fmt.Sprint(s.starts, s.totals, s.n, s.epsilon, s.mechanism) {
			t.Errorf("round trip: got %+v, want %+v", back, *s)
		}
		if back.RangeSum(0, s.n-1) != s.RangeSum(0, s.n-1) {
			t.Errorf("round trip of %s: answers differ", s.mechanism)
		}
	}
	// 2^18 bins in singletons: about 2 MiB, where JSON takes up to 6.5 MB.
	big := newSynopsis("identity", 1, 1<<18, identityStarts(1<<18), make([]float64, 1<<18))
	for j := range big.totals {
		big.totals[j] = -1.2345678901234567e-7
	}
	js, _ := json.Marshal(big)
	bin, _ := big.MarshalBinary()
	if len(bin) > 8<<18+binaryOverhead || len(js) < 20<<18 {
		t.Errorf("2^18 bins: %d bytes in binary, %d in JSON", len(bin), len(js))
	}
}

func TestSynopsisBinaryRejects(t *testing.T) {
	good, err := exampleSynopsis().MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	corrupt := func(f func([]byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	for name, in := range map[string][]byte{
		"empty":        nil,
		"version":      corrupt(func(b []byte) []byte { b[0] = 2; return b }),
		"truncated":    good[:len(good)-1],
		"trailing":     append(append([]byte(nil), good...), 1),
		"widths short": corrupt(func(b []byte) []byte { b[len(b)-1] = 2; return b }),
		"widths long":  corrupt(func(b []byte) []byte { b[len(b)-1] = 4; return b }),
		"zero width":   corrupt(func(b []byte) []byte { b[len(b)-2] = 0; return b }),
		"NaN total":    corrupt(func(b []byte) []byte { copy(b[len(b)-4-8:], []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x7f}); return b }),
		"long name":    append([]byte{1, 65}, make([]byte, 100)...),
		"long varint":  corrupt(func(b []byte) []byte { return append([]byte{1, 0x84, 0}, b[2:]...) }),
	} {
		var s Synopsis
		if err := s.UnmarshalBinary(in); !errors.Is(err, mech.ErrInvalidInput) && !errors.Is(err, ErrInvalidWorkload) {
			t.Errorf("%s: got %v, want an invalid-input error", name, err)
		}
	}
}
