package bench

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// Anchor is one cell of a peer system's published accuracy
// (../shared/data/anchors/google-dp-go.tsv): its mean absolute error on a
// named dataset of N rows at ε, and the exact value it was measured against.
type Anchor struct {
	Dataset   string
	N         int
	Epsilon   float64
	Statistic string
	MeanAbs   float64
	Trials    int
	Truth     float64
}

// ReadAnchors parses an anchors TSV (header dataset, n, epsilon,
// statistic, google_mean_abs_error, trials, truth).
func ReadAnchors(path string) ([]Anchor, error) {
	f, err := openData(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Anchor
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		fields := strings.Split(strings.TrimSpace(sc.Text()), "\t")
		if line == 1 || len(fields) == 1 && fields[0] == "" {
			continue
		}
		if len(fields) != 7 {
			return nil, fmt.Errorf("%s line %d: %d fields, want 7", path, line, len(fields))
		}
		var a Anchor
		var errs [5]error
		a.Dataset, a.Statistic = fields[0], fields[3]
		a.N, errs[0] = strconv.Atoi(fields[1])
		a.Epsilon, errs[1] = strconv.ParseFloat(fields[2], 64)
		a.MeanAbs, errs[2] = strconv.ParseFloat(fields[4], 64)
		a.Trials, errs[3] = strconv.Atoi(fields[5])
		a.Truth, errs[4] = strconv.ParseFloat(fields[6], 64)
		for _, e := range errs {
			if e != nil {
				return nil, fmt.Errorf("%s line %d: %w", path, line, e)
			}
		}
		out = append(out, a)
	}
	return out, sc.Err()
}

// AnchorRows returns the rows the anchors were measured on: dpcomp-1d
// dataset name expanded to rows in file order (DPComp1D), then, when it
// has more than n rows, the first n after a partial Fisher–Yates shuffle
// driven by rand.New(rand.NewPCG(1, fnv64a(name))) whose i-th step swaps
// i with i + IntN(len − i) (anchors/README.md). The dataset is named
// "name-n<rows>" and its values are sorted.
func AnchorRows(dir, name string, n int) (*Dataset, error) {
	d, err := DPComp1D(dir, name)
	if err != nil {
		return nil, err
	}
	rows := d.Values
	if n < len(rows) {
		h := fnv.New64a()
		h.Write([]byte(name))
		rng := rand.New(rand.NewPCG(1, h.Sum64()))
		for i := range n {
			j := i + rng.IntN(len(rows)-i)
			rows[i], rows[j] = rows[j], rows[i]
		}
		rows = rows[:n]
		slices.Sort(rows)
	}
	d.Values = rows
	d.Name = fmt.Sprintf("%s-n%d", name, len(rows))
	return d, nil
}

// AnchorDatasets loads every (dataset, n) of anchors once, in the file's
// order, from dir (the shared data directory).
func AnchorDatasets(dir string, anchors []Anchor) ([]*Dataset, error) {
	var out []*Dataset
	seen := map[string]bool{}
	for _, a := range anchors {
		key := fmt.Sprintf("%s-n%d", a.Dataset, a.N)
		if seen[key] {
			continue
		}
		seen[key] = true
		d, err := AnchorRows(dir, a.Dataset, a.N)
		if err != nil {
			return nil, err
		}
		if d.Name != key {
			return nil, fmt.Errorf("anchors: %s has %d rows, the file says %d", a.Dataset, len(d.Values), a.N)
		}
		out = append(out, d)
	}
	return out, nil
}
