package bench

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// RangeHistogram is a histogram over a public domain of len(Counts) bins: the
// input of the range-count mechanisms (DAWA and its baselines).
type RangeHistogram struct {
	Name   string
	Counts []int64
}

// DAWADatasets are the seven DPComp 1-D histograms of the DAWA paper, in
// its Table 1 order, with the paper's display names.
var DAWADatasets = []struct{ File, Paper string }{
	{"nettrace", "Nettrace"}, {"adultfrank", "Adult"}, {"medcost", "Med. Cost"},
	{"searchlogs", "S. Logs"}, {"income", "Income"}, {"patent", "Patents"}, {"hepth", "HepPh"},
}

// DAWAPaperBuckets is the paper's Table 1: the number of buckets of the
// optimal partition at ε = 0.1, n = 4096, in DAWADatasets order.
var DAWAPaperBuckets = []int{22, 29, 20, 500, 1537, 1870, 2168}

// LoadDPCompHistogram reads dir/dpcomp-1d/name.txt, one bin count per line.
func LoadDPCompHistogram(dir, name string) (*RangeHistogram, error) {
	f, err := openData(dir, "dpcomp-1d", name+".txt")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := &RangeHistogram{Name: name}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		c, err := strconv.ParseInt(line, 10, 64)
		if err != nil {
			// Some exports write counts as floats ("12.0").
			v, ferr := strconv.ParseFloat(line, 64)
			if ferr != nil || v < 0 || v != float64(int64(v)) {
				return nil, fmt.Errorf("%s line %d: %q is not a count", name, len(h.Counts)+1, line)
			}
			c = int64(v)
		}
		h.Counts = append(h.Counts, c)
	}
	return h, sc.Err()
}

// Refine splits every bin of h into factor bins, spreading its count over
// them uniformly at random (seeded): a histogram of the same shape on a
// domain factor times larger, for timing at n = 2^20.
func (h *RangeHistogram) Refine(factor int, seed uint64) *RangeHistogram {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed)
	rng := rand.New(rand.NewChaCha8(key))
	out := &RangeHistogram{Name: fmt.Sprintf("%s×%d", h.Name, factor), Counts: make([]int64, len(h.Counts)*factor)}
	for j, c := range h.Counts {
		sub := out.Counts[j*factor : (j+1)*factor]
		if c <= int64(4*factor) {
			for range c {
				sub[rng.IntN(factor)]++
			}
			continue
		}
		// Large counts: an even share plus a random remainder.
		for k := range sub {
			sub[k] = c / int64(factor)
		}
		for range c % int64(factor) {
			sub[rng.IntN(factor)]++
		}
	}
	return out
}

// Total returns the number of rows.
func (h *RangeHistogram) Total() int64 {
	var t int64
	for _, c := range h.Counts {
		t += c
	}
	return t
}

// Coarsen sums every factor consecutive bins of h into one: the same data
// on a domain factor times smaller (a dense, small-domain histogram).
func (h *RangeHistogram) Coarsen(factor int) *RangeHistogram {
	out := &RangeHistogram{Name: fmt.Sprintf("%s/%d", h.Name, factor), Counts: make([]int64, (len(h.Counts)+factor-1)/factor)}
	for j, c := range h.Counts {
		out.Counts[j/factor] += c
	}
	return out
}

// HistogramOf bins the values of a column: one bin per integer of
// [Lower, Upper] when integerCells, else bins equal-width bins over
// [Lower, Upper] (the value Upper in the last), as the proxy's synopses do.
func HistogramOf(d *Dataset, bins int, integerCells bool) *RangeHistogram {
	lo, hi := d.Lower, d.Upper
	if integerCells {
		bins = int(hi-lo) + 1
		hi++
	}
	h := &RangeHistogram{Name: d.Name, Counts: make([]int64, bins)}
	for _, v := range d.Values {
		j := int((v - lo) * float64(bins) / (hi - lo))
		h.Counts[min(max(j, 0), bins-1)]++
	}
	return h
}
