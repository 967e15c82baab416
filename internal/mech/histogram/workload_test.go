package histogram

import (
	"errors"
	"fmt"
	"testing"
)

func TestWorkloadConstructors(t *testing.T) {
	ranges, _ := RangesWorkload(5, []Range{{0, 4}, {2, 2}})
	prefix, _ := PrefixWorkload(3)
	all, _ := AllRangesWorkload(3)
	identity, _ := IdentityWorkload(3)
	for _, tc := range []struct {
		w    Workload
		want string // every query, in order
		name string
	}{
		{ranges, "[{0 4} {2 2}]", "ranges(n=5, m=2)"},
		{prefix, "[{0 0} {0 1} {0 2}]", "prefix(n=3)"},
		{all, "[{0 0} {0 1} {0 2} {1 1} {1 2} {2 2}]", "all-ranges(n=3)"},
		{identity, "[{0 0} {1 1} {2 2}]", "ranges(n=3, m=3)"},
	} {
		var got []Range
		for i := range tc.w.Len() {
			got = append(got, tc.w.At(i))
		}
		if fmt.Sprint(got) != tc.want || tc.w.String() != tc.name {
			t.Errorf("%v: got %v, want %v", tc.w, got, tc.want)
		}
	}
}

func TestAllRangesAtEnumeratesInOrder(t *testing.T) {
	for _, n := range []int{1, 2, 7, 64} {
		w, _ := AllRangesWorkload(n)
		if got, want := w.Len(), int64(n*(n+1)/2); got != want {
			t.Errorf("n=%d: Len got %v, want %v", n, got, want)
		}
		i := int64(0)
		for a := range n {
			for b := a; b < n; b++ {
				if got := w.At(i); got != (Range{a, b}) {
					t.Fatalf("n=%d At(%d): got %v, want %v", n, i, got, Range{a, b})
				}
				i++
			}
		}
	}
}

func TestUniformIntervalsWorkload(t *testing.T) {
	w1, _ := UniformIntervalsWorkload(100, 500, 42)
	w2, _ := UniformIntervalsWorkload(100, 500, 42)
	w3, _ := UniformIntervalsWorkload(100, 500, 43)
	if fmt.Sprint(w1.ranges) != fmt.Sprint(w2.ranges) {
		t.Errorf("same seed: got different workloads, want equal")
	}
	if fmt.Sprint(w1.ranges) == fmt.Sprint(w3.ranges) {
		t.Errorf("different seeds: got equal workloads, want different")
	}
	for _, r := range w1.ranges {
		if r.Lo < 0 || r.Lo > r.Hi || r.Hi >= 100 {
			t.Errorf("range %v outside [0, 99]", r)
		}
	}
}

func TestWorkloadRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func() (Workload, error)
	}{
		{"no bins", func() (Workload, error) { return PrefixWorkload(0) }},
		{"too many bins", func() (Workload, error) { return AllRangesWorkload(MaxBins + 1) }},
		{"no ranges", func() (Workload, error) { return RangesWorkload(4, nil) }},
		{"reversed range", func() (Workload, error) { return RangesWorkload(4, []Range{{2, 1}}) }},
		{"range beyond n", func() (Workload, error) { return RangesWorkload(4, []Range{{0, 4}}) }},
		{"negative start", func() (Workload, error) { return RangesWorkload(4, []Range{{-1, 2}}) }},
		{"no intervals", func() (Workload, error) { return UniformIntervalsWorkload(4, 0, 1) }},
	} {
		if _, err := tc.make(); !errors.Is(err, ErrInvalidWorkload) {
			t.Errorf("%s: got %v, want ErrInvalidWorkload", tc.name, err)
		}
	}
}
