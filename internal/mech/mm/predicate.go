package mm

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/dpproxy/dpproxy/internal/mech"
)

// Predicate is a counting query of the median mechanism: the set of cells
// of the domain X it selects. X is public and finite (the cross product of a
// few categorical or bucketed columns, cells numbered in mixed radix), so
// any AND/OR/NOT combination of conditions on those columns compiles to one
// cell set; the query's answer is the number of rows in those cells. The
// set is stored as maximal runs of consecutive cells, so a range over an
// ordered column is one run. An Predicate is immutable.
type Predicate struct {
	cells int
	runs  []mmRun
	size  int
}

// mmRun is the cells [lo, hi).
type mmRun struct{ lo, hi int }

// MaxCells bounds the domain size |X| of the median mechanism: its pool
// holds PoolSize·|X| float64 values (2^16 cells and 200 candidates take
// 100 MB), and its sampler's mixing degrades as |X| grows.
const MaxCells = 1 << 16

// NewPredicate returns the predicate selecting the given cells of a
// domain of cells cells, in any order, repeats allowed. It fails unless
// 1 ≤ cells ≤ MaxCells and every index is in [0, cells).
func NewPredicate(cells int, members []int) (Predicate, error) {
	if err := MmCheckCells(cells); err != nil {
		return Predicate{}, err
	}
	sorted := slices.Clone(members)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	if len(sorted) > 0 && (sorted[0] < 0 || sorted[len(sorted)-1] >= cells) {
		return Predicate{}, fmt.Errorf("%w: cell index outside [0, %d)", mech.ErrInvalidInput, cells)
	}
	p := Predicate{cells: cells, size: len(sorted)}
	for _, x := range sorted {
		if k := len(p.runs); k > 0 && p.runs[k-1].hi == x {
			p.runs[k-1].hi++
			continue
		}
		p.runs = append(p.runs, mmRun{x, x + 1})
	}
	return p, nil
}

// PredicateFromMask returns the predicate selecting the cells x with
// mask[x] true, over a domain of len(mask) cells (1 ≤ len ≤ MaxCells).
func PredicateFromMask(mask []bool) (Predicate, error) {
	var members []int
	for x, in := range mask {
		if in {
			members = append(members, x)
		}
	}
	return NewPredicate(len(mask), members)
}

// mmCheckCells validates a domain size.
func MmCheckCells(cells int) error {
	if cells < 1 || cells > MaxCells {
		return fmt.Errorf("%w: domain of %d cells, must be in [1, %d]", mech.ErrInvalidInput, cells, MaxCells)
	}
	return nil
}

// mmRangePredicate returns the predicate of the cells [lo, hi] of an
// ordered domain; the caller guarantees 0 ≤ lo ≤ hi < cells.
func MmRangePredicate(cells, lo, hi int) Predicate {
	return Predicate{cells: cells, runs: []mmRun{{lo, hi + 1}}, size: hi - lo + 1}
}

// Cells returns the size of the domain the predicate is over.
func (p Predicate) Cells() int { return p.cells }

// Size returns the number of cells selected.
func (p Predicate) Size() int { return p.size }

// Contains reports whether cell x is selected.
func (p Predicate) Contains(x int) bool {
	_, found := slices.BinarySearchFunc(p.runs, x, func(r mmRun, x int) int {
		switch {
		case r.hi <= x:
			return -1
		case r.lo > x:
			return 1
		}
		return 0
	})
	return found
}

// Count returns the exact number of rows of the histogram hist (one count
// per cell) in the selected cells: the true answer the mechanism needs,
// computed from a snapshot histogram. len(hist) must be Cells().
func (p Predicate) Count(hist []int64) int64 {
	var c int64
	for _, r := range p.runs {
		for _, h := range hist[r.lo:r.hi] {
			c += h
		}
	}
	return c
}

// key returns a collision-resistant digest of the cell set, the answer
// cache's key: equal sets over equal domains, and only they, share a key.
func (p Predicate) key() [sha256.Size]byte {
	buf := make([]byte, 0, 8*(1+2*len(p.runs)))
	buf = binary.LittleEndian.AppendUint64(buf, uint64(p.cells))
	for _, r := range p.runs {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(r.lo))
		buf = binary.LittleEndian.AppendUint64(buf, uint64(r.hi))
	}
	return sha256.Sum256(buf)
}

// sumOf returns Σ_{x ∈ p} v[x] through the prefix sums prefix[x] = Σ_{y<x} v[y].
func (p Predicate) sumOf(prefix []float64) float64 {
	s := 0.0
	for _, r := range p.runs {
		s += prefix[r.hi] - prefix[r.lo]
	}
	return s
}

// sumDirect returns Σ_{x ∈ p} v[x] by adding the entries.
func (p Predicate) sumDirect(v []float64) float64 {
	s := 0.0
	for _, r := range p.runs {
		for _, f := range v[r.lo:r.hi] {
			s += f
		}
	}
	return s
}
