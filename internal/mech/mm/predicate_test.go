package mm

import (
	"errors"
	"fmt"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
)

func TestMMPredicate(t *testing.T) {
	hist := []int64{1, 2, 3, 4, 5, 6, 7, 8}
	for _, tc := range []struct {
		name    string
		members []int
		runs    string
		size    int
		count   int64
	}{
		{"empty", nil, "[]", 0, 0},
		{"one cell", []int{3}, "[{3 4}]", 1, 4},
		{"unordered with repeats", []int{5, 1, 2, 5, 7, 0}, "[{0 3} {5 6} {7 8}]", 5, 1 + 2 + 3 + 6 + 8},
		{"everything", []int{7, 6, 5, 4, 3, 2, 1, 0}, "[{0 8}]", 8, 36},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPredicate(8, tc.members)
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(p.runs); got != tc.runs {
				t.Errorf("runs: got %v, want %v", got, tc.runs)
			}
			if p.Size() != tc.size || p.Cells() != 8 {
				t.Errorf("size, cells: got %v, %v, want %v, 8", p.Size(), p.Cells(), tc.size)
			}
			if got := p.Count(hist); got != tc.count {
				t.Errorf("count: got %v, want %v", got, tc.count)
			}
			mask := make([]bool, 8)
			for _, x := range tc.members {
				mask[x] = true
			}
			for x := range 8 {
				if p.Contains(x) != mask[x] {
					t.Errorf("Contains(%d): got %v, want %v", x, p.Contains(x), mask[x])
				}
			}
			q, err := PredicateFromMask(mask)
			if err != nil || q.key() != p.key() {
				t.Errorf("from mask: got key equal %v (err %v), want true", q.key() == p.key(), err)
			}
		})
	}
}

func TestMMPredicateKeysDiffer(t *testing.T) {
	a, _ := NewPredicate(8, []int{0, 1})
	b, _ := NewPredicate(8, []int{0, 2})
	c, _ := NewPredicate(9, []int{0, 1})
	if a.key() == b.key() || a.key() == c.key() {
		t.Errorf("keys of different sets or domains: got equal, want different")
	}
	if r := MmRangePredicate(8, 0, 1); r.key() != a.key() {
		t.Errorf("range [0, 1] and set {0, 1}: got different keys, want equal")
	}
}

func TestMMPredicateRejects(t *testing.T) {
	for _, tc := range []struct {
		cells   int
		members []int
	}{
		{0, nil}, {MaxCells + 1, nil}, {4, []int{4}}, {4, []int{-1, 2}},
	} {
		if _, err := NewPredicate(tc.cells, tc.members); !errors.Is(err, mech.ErrInvalidInput) {
			t.Errorf("NewMMPredicate(%d, %v): got %v, want ErrInvalidInput", tc.cells, tc.members, err)
		}
	}
}
