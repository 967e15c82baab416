// Command accuracy regenerates bench/RESULTS-accuracy.md, its plots and
// bench/accuracy-results.csv (one row per cell):
// every mechanism on every statistic, dataset and ε over many trials, the
// papers' claims side by side, the winners and the recommended rule, and
// the time per release (testing.Benchmark). The full run:
//
//	go run ./bench/cmd/accuracy -data ../shared/data -out bench
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/dpproxy/dpproxy/bench"
)

// options are the command's flags.
type options struct {
	data, out         string
	trials, minTrials int
	seed              uint64
	sizes, epsilons   string
	workers           int
	cellBudget        time.Duration
	timing            bool
	commandLine       string
}

func main() {
	var o options
	flag.StringVar(&o.data, "data", "../shared/data", "the shared data directory (dpcomp-1d/, pums/)")
	flag.StringVar(&o.out, "out", "bench", "directory for RESULTS-accuracy.md and the plots")
	flag.IntVar(&o.trials, "trials", 200, "trials per cell")
	flag.IntVar(&o.minTrials, "min-trials", 20, "trials a cell runs even past its time budget")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of the synthetic data and of the trials' noise")
	flag.StringVar(&o.sizes, "sizes", "100,1000,10000,100000,1000000", "n of the synthetic datasets")
	flag.StringVar(&o.epsilons, "eps", "0.1,0.5,1,2", "the ε values")
	flag.IntVar(&o.workers, "workers", runtime.GOMAXPROCS(0), "cells measured in parallel")
	flag.DurationVar(&o.cellBudget, "cell-budget", 30*time.Second, "time after which a cell stops at min-trials or more (0: none)")
	flag.BoolVar(&o.timing, "timing", true, "also measure the time per release at n = 10^4 and 10^6 (testing.Benchmark)")
	flag.Parse()
	o.commandLine = "go run ./bench/cmd/accuracy " + strings.Join(os.Args[1:], " ")
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "accuracy:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	data, err := loadData(o)
	if err != nil {
		return err
	}
	epsilons, err := parseFloats(o.epsilons)
	if err != nil {
		return fmt.Errorf("-eps: %w", err)
	}
	cands := append(bench.Candidates(), bench.RuleCandidate())
	start := time.Now()
	results := bench.Run(bench.Config{
		Statistics: bench.Statistics, Data: data, Epsilons: epsilons, Candidates: cands,
		Trials: o.trials, Seed: o.seed, Workers: o.workers, CellBudget: o.cellBudget, MinTrials: o.minTrials,
		Progress: func(r bench.Result) {
			fmt.Fprintf(os.Stderr, "%6s %-9s %-22s ε=%-4g %-18s mean|err|=%-10.4g cell %-8s %s%s\n",
				time.Since(start).Round(time.Second), r.Statistic, r.Dataset, r.Epsilon, r.Mechanism, r.MeanAbs,
				r.Elapsed.Round(time.Millisecond), r.Note, r.Err)
		},
	})
	elapsed := time.Since(start)
	var timings []bench.Timing
	if o.timing {
		timings, err = bench.MeasureReleaseTimes(func(t bench.Timing) {
			fmt.Fprintf(os.Stderr, "timing %-50s %v\n", t.Name, t.PerRelease)
		})
		if err != nil {
			return err
		}
	}
	var md bytes.Buffer
	if err := bench.WriteReport(&md, bench.Report{
		Command: o.commandLine, Results: results, Data: data, Candidates: cands, Trials: o.trials,
		Elapsed: elapsed, Workers: o.workers, CellBudget: o.cellBudget, MinTrials: o.minTrials,
		Timings: timings, OutDir: o.out,
	}); err != nil {
		return err
	}
	var table bytes.Buffer
	if err := bench.WriteCSV(&table, results); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.out, "accuracy-results.csv"), table.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "done in %s\n", time.Since(start).Round(time.Second))
	return os.WriteFile(filepath.Join(o.out, "RESULTS-accuracy.md"), md.Bytes(), 0o644)
}

// loadData loads the seven dpcomp datasets, the two PUMS columns and the
// synthetic datasets of every size.
func loadData(o options) ([]*bench.Dataset, error) {
	var data []*bench.Dataset
	for _, name := range bench.DPComp1DNames {
		d, err := bench.DPComp1D(o.data, name)
		if err != nil {
			return nil, err
		}
		data = append(data, d)
	}
	for _, col := range []string{"age", "income"} {
		d, err := bench.PUMS(o.data, col)
		if err != nil {
			return nil, err
		}
		data = append(data, d)
	}
	sizes, err := parseInts(o.sizes)
	if err != nil {
		return nil, fmt.Errorf("-sizes: %w", err)
	}
	for _, kind := range bench.SyntheticKinds {
		for _, n := range sizes {
			d, err := bench.Synthetic(kind, n, o.seed)
			if err != nil {
				return nil, err
			}
			data = append(data, d)
		}
	}
	return data, nil
}

// parseFloats parses a comma-separated list of numbers.
func parseFloats(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// parseInts parses a comma-separated list of integers.
func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
