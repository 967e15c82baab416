package histogram

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// accuracyDataEnv names a directory of 1-D histograms, one count per line
// per file (the DPComp vectors of the DAWA paper: nettrace.txt, ...).
const accuracyDataEnv = "DPPROXY_DPCOMP_1D"

// loadHistogram reads one count per line.
func loadHistogram(t *testing.T, path string) []int64 {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var hist []int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			v, err := strconv.ParseInt(line, 10, 64)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			hist = append(hist, v)
		}
	}
	return hist
}

// meanAbsError returns the mean absolute error of s over the workload.
func meanAbsError(s *Synopsis, hist []int64, w Workload) float64 {
	prefix := make([]int64, len(hist)+1)
	for j, x := range hist {
		prefix[j+1] = prefix[j] + x
	}
	total := 0.0
	for i := range w.Len() {
		r := w.At(i)
		total += math.Abs(s.RangeSum(r.Lo, r.Hi) - float64(prefix[r.Hi+1]-prefix[r.Lo]))
	}
	return total / float64(w.Len())
}

// TestAccuracyReport prints the DAWA paper's Table 2 comparison (mean L1
// error per query, 5 uniform-interval workloads of 2000 ranges × 3 runs,
// and the prefix workload × 15 runs) for every mechanism on every
// histogram in $DPPROXY_DPCOMP_1D, with each one's ratio to default DAWA
// and the number of buckets DAWA chose (Table 1). It checks nothing: the
// benchmark in bench/ is the reference; this reproduces the numbers
// quoted while choosing DAWA's default.
func TestAccuracyReport(t *testing.T) {
	dir := os.Getenv(accuracyDataEnv)
	if dir == "" {
		t.Skipf("set %s to a directory of histograms to print the accuracy report", accuracyDataEnv)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
	mechs := []struct {
		name string
		run  func(src noise.Source, h []int64, w Workload, eps float64) (*Synopsis, error)
	}{
		{"dawa", func(src noise.Source, h []int64, w Workload, eps float64) (*Synopsis, error) {
			return DAWA(src, h, w, eps, DAWAOptions{})
		}},
		{"noise-first", func(src noise.Source, h []int64, w Workload, eps float64) (*Synopsis, error) {
			return DAWA(src, h, w, eps, DAWAOptions{Partition: DAWANoiseFirst})
		}},
		{"noisy-cost", func(src noise.Source, h []int64, w Workload, eps float64) (*Synopsis, error) {
			return DAWA(src, h, w, eps, DAWAOptions{Partition: DAWANoisyCost})
		}},
		{"greedy-h", func(src noise.Source, h []int64, w Workload, eps float64) (*Synopsis, error) {
			return GreedyH(src, h, w, eps)
		}},
		{"h2", func(src noise.Source, h []int64, _ Workload, eps float64) (*Synopsis, error) { return H2(src, h, eps) }},
		{"identity", func(src noise.Source, h []int64, _ Workload, eps float64) (*Synopsis, error) {
			return Identity(src, h, eps)
		}},
	}
	for _, kind := range []string{"uniform", "prefix"} {
		for _, file := range files {
			hist := loadHistogram(t, file)
			var workloads []Workload
			for i := range 5 {
				w, err := UniformIntervalsWorkload(len(hist), 2000, uint64(i))
				if kind == "prefix" {
					w, err = PrefixWorkload(len(hist))
				}
				if err != nil {
					t.Fatal(err)
				}
				workloads = append(workloads, w)
			}
			for _, eps := range []float64{0.01, 0.05, 0.1, 0.5} {
				line := fmt.Sprintf("%-7s %-11s ε=%-4v", kind, strings.TrimSuffix(filepath.Base(file), ".txt"), eps)
				var dawaErr float64
				for mi, m := range mechs {
					var sum float64
					buckets := 0
					for wi, w := range workloads {
						for trial := range 3 {
							src := privtest.NewSource(uint64(100*wi+trial), uint64(mi))
							s, err := m.run(src, hist, w, eps)
							if err != nil {
								t.Fatal(err)
							}
							sum += meanAbsError(s, hist, w)
							buckets += s.Buckets()
						}
					}
					mean := sum / 15
					if mi == 0 {
						dawaErr = mean
						line += fmt.Sprintf(" | dawa %8.1f k=%4d", mean, buckets/15)
						continue
					}
					line += fmt.Sprintf(" | %s %5.2f", m.name, mean/dawaErr)
				}
				t.Log(line)
			}
		}
	}
}
