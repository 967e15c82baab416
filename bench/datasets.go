// Package bench measures dpproxy's mechanisms: accuracy (mean and
// 90th-percentile absolute error over repeated trials) and running time, on
// the real datasets of ../shared/data and on synthetic ones, and writes the
// tables and plots of bench/RESULTS.md.
package bench

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// DataLayout is what the directory every benchmark's -data flag names must
// hold (bench/RESULTS.md, "Data", says where each file comes from).
const DataLayout = "dpcomp-1d/{adultfrank,hepth,income,medcost,nettrace,patent,searchlogs}.txt (the DAWA paper's DPComp 1-D histograms, one bin count per line, 4096 lines), pums/PUMS.csv (SmartNoise's 1,000-row PUMS sample, the same file as internal/demo/pums.csv) and, for bench/cmd/google, anchors/google-dp-go.tsv (Google's library's errors on those rows); bench/RESULTS.md, section Data, says where each comes from"

// openData opens the file at the path made of dir and parts. A missing
// file is an error that names it and the layout -data expects
// (DataLayout); other errors are os.Open's.
func openData(dir string, parts ...string) (*os.File, error) {
	name := filepath.Join(append([]string{dir}, parts...)...)
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("benchmark data file %s does not exist: -data must name a directory holding %s", name, DataLayout)
	}
	return f, err
}

// Dataset is one column of values with its public bounds.
type Dataset struct {
	Name string
	// Values are sorted ascending and lie in [Lower, Upper].
	Values       []float64
	Lower, Upper float64
	// Integer is set when every value is an integer (ties are common).
	Integer bool
}

// DPComp1D loads a DAWA-paper histogram (one bin count per line) from dir
// and expands it into rows whose value is the bin index: bounds [0, 4095].
func DPComp1D(dir, name string) (*Dataset, error) {
	f, err := openData(dir, "dpcomp-1d", name+".txt")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var values []float64
	sc := bufio.NewScanner(f)
	bin := 0
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		c, err := strconv.ParseFloat(line, 64)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", name, bin+1, err)
		}
		for range int64(c) {
			values = append(values, float64(bin))
		}
		bin++
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return &Dataset{Name: name, Values: values, Lower: 0, Upper: 4095, Integer: true}, nil
}

// DPComp1DNames are the seven datasets of the DAWA paper.
var DPComp1DNames = []string{"adultfrank", "hepth", "income", "medcost", "nettrace", "patent", "searchlogs"}

// PUMS loads one column of ../shared/data/pums/PUMS.csv with the bounds
// SmartNoise's metadata declares (age [0,100], income [0,500000]).
func PUMS(dir, column string) (*Dataset, error) {
	bounds := map[string][2]float64{"age": {0, 100}, "income": {0, 500000}}
	b, ok := bounds[column]
	if !ok {
		return nil, fmt.Errorf("pums: no public bounds for column %q", column)
	}
	f, err := openData(dir, "pums", "PUMS.csv")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, err
	}
	col := slices.Index(recs[0], column)
	if col < 0 {
		return nil, fmt.Errorf("pums: no column %q", column)
	}
	values := make([]float64, 0, len(recs)-1)
	for _, r := range recs[1:] {
		v, err := strconv.ParseFloat(r[col], 64)
		if err != nil {
			return nil, err
		}
		values = append(values, v)
	}
	slices.Sort(values)
	return &Dataset{Name: "pums-" + column, Values: values, Lower: b[0], Upper: b[1], Integer: true}, nil
}

// Synthetic generates n values of a named distribution with a fixed seed.
// Bounds are public and generous, as an analyst would declare them without
// looking at the data.
func Synthetic(kind string, n int, seed uint64) (*Dataset, error) {
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	var lo, hi float64
	var draw func() float64
	integer := false
	switch kind {
	case "normal": // N(100, 15²), bounds [0, 1000]
		lo, hi = 0, 1000
		draw = func() float64 { return 100 + 15*rng.NormFloat64() }
	case "lognormal": // incomes: exp(N(10, 1)), bounds [0, 10^6]
		lo, hi = 0, 1e6
		draw = func() float64 { return math.Exp(10 + rng.NormFloat64()) }
	case "uniform": // U(0, 1000), bounds [0, 1000]
		lo, hi = 0, 1000
		draw = func() float64 { return 1000 * rng.Float64() }
	case "bimodal": // N(200, 10²) or N(800, 10²), nothing in the middle; bounds [0, 1000]
		lo, hi = 0, 1000
		draw = func() float64 {
			if rng.IntN(2) == 0 {
				return 200 + 10*rng.NormFloat64()
			}
			return 800 + 10*rng.NormFloat64()
		}
	case "ties": // integers 0..20, geometric-like, heavy ties; bounds [0, 100]
		lo, hi, integer = 0, 100, true
		draw = func() float64 { return math.Min(math.Floor(rng.ExpFloat64()*3), 100) }
	default:
		return nil, fmt.Errorf("unknown synthetic distribution %q", kind)
	}
	values := make([]float64, n)
	for i := range values {
		values[i] = math.Min(math.Max(draw(), lo), hi)
	}
	slices.Sort(values)
	return &Dataset{Name: fmt.Sprintf("%s-n%d", kind, n), Values: values, Lower: lo, Upper: hi, Integer: integer}, nil
}

// SyntheticKinds are the synthetic distributions of the benchmark.
var SyntheticKinds = []string{"normal", "lognormal", "uniform", "bimodal", "ties"}
