// Command accuracy regenerates bench/RESULTS.md's accuracy tables and plots:
// every mechanism on every statistic, dataset and ε, over many trials.
//
//	go run ./bench/cmd/accuracy -data ../shared/data -out bench
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dpproxy/dpproxy/bench"
)

func main() {
	data := flag.String("data", "../shared/data", "the shared data directory (dpcomp-1d/, pums/)")
	out := flag.String("out", "bench", "directory for RESULTS-accuracy.md and the plots")
	trials := flag.Int("trials", 200, "trials per configuration")
	seed := flag.Uint64("seed", 1, "seed of the trials' noise")
	sizes := flag.String("sizes", "100,1000,10000,100000,1000000", "n of the synthetic datasets")
	flag.Parse()
	if err := run(*data, *out, *trials, *seed, *sizes); err != nil {
		fmt.Fprintln(os.Stderr, "accuracy:", err)
		os.Exit(1)
	}
}

func run(dataDir, out string, trials int, seed uint64, sizes string) error {
	var data []*bench.Dataset
	for _, name := range bench.DPComp1DNames {
		d, err := bench.DPComp1D(dataDir, name)
		if err != nil {
			return err
		}
		data = append(data, d)
	}
	for _, col := range []string{"age", "income"} {
		d, err := bench.PUMS(dataDir, col)
		if err != nil {
			return err
		}
		data = append(data, d)
	}
	for _, kind := range bench.SyntheticKinds {
		for _, s := range strings.Split(sizes, ",") {
			var n int
			if _, err := fmt.Sscan(s, &n); err != nil {
				return fmt.Errorf("-sizes: %w", err)
			}
			d, err := bench.Synthetic(kind, n, seed)
			if err != nil {
				return err
			}
			data = append(data, d)
		}
	}
	widths := map[string]float64{}
	for _, d := range data {
		widths[d.Name] = d.Upper - d.Lower
	}
	epsilons := []float64{0.1, 0.5, 1, 2}
	cands := bench.Candidates()
	start := time.Now()
	results := bench.Run(bench.Statistics, data, epsilons, cands, trials, seed, func(r bench.Result) {
		fmt.Fprintf(os.Stderr, "%-9s %-22s ε=%-4g %-14s mean|err|=%-10.4g %s\n", r.Statistic, r.Dataset, r.Epsilon, r.Mechanism, r.MeanAbs, r.Err)
	})
	var md bytes.Buffer
	fmt.Fprintf(&md, "## Accuracy: median, p10, p90, mean and variance\n\n")
	fmt.Fprintf(&md, "Made by `go run ./bench/cmd/accuracy -data ../shared/data -trials %d -seed %d -sizes %s` in %s (2 cores).\n",
		trials, seed, sizes, time.Since(start).Round(time.Second))
	fmt.Fprintf(&md, "Cells: mean / 90th-percentile absolute error over %d trials; quantile truth is the value of rank ⌊q·n⌋; dpcomp datasets are bins expanded to rows, bounds [0, 4095].\n", trials)
	for _, s := range bench.Statistics {
		png := "accuracy-" + s.Name + ".png"
		if err := bench.Plot(results, s.Name, filepath.Join(out, png), func(d string) float64 { return widths[d] }); err != nil {
			return err
		}
		fmt.Fprintf(&md, "\n![%s](%s)\n", s.Name, png)
	}
	bench.WriteTables(&md, results)
	fmt.Fprintf(&md, "\n### Time per release (preparation included), mean over statistics and ε\n")
	bench.WriteTimes(&md, results)
	return os.WriteFile(filepath.Join(out, "RESULTS-accuracy.md"), md.Bytes(), 0o644)
}
