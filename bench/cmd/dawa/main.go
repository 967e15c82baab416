// Command dawa regenerates bench/RESULTS-dawa.md: DAWA against Identity,
// H2 and Greedy-H on the seven DPComp 1-D histograms (the DAWA paper's
// Tables 1 and 2), the per-ε choice of the default synopsis mechanism,
// and the time per batch at n = 4096 and n = 2^20. From the repository
// root:
//
//	go run ./bench/cmd/dawa -data ../shared/data -out bench
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

func main() {
	data := flag.String("data", "../shared/data", "the shared data directory (holds dpcomp-1d/)")
	out := flag.String("out", "bench", "directory for RESULTS-dawa.md")
	trials := flag.Int("trials", 10, "trials per cell (at least 5)")
	eps := flag.String("eps", "0.01,0.05,0.1,0.5,1,2,5,10", "the ε values (Table 2 is the first four; the rest decide the rule above 0.5)")
	seed := flag.Uint64("seed", 1, "seed of the workloads and the noise")
	workers := flag.Int("workers", runtime.GOMAXPROCS(0), "cells measured in parallel")
	timing := flag.Bool("timing", true, "also time a batch at n = 4096 and n = 2^20")
	flag.Parse()
	cmd := "go run ./bench/cmd/dawa " + strings.Join(os.Args[1:], " ")
	if err := run(cmd, *data, *out, *trials, *eps, *seed, *workers, *timing); err != nil {
		fmt.Fprintln(os.Stderr, "dawa:", err)
		os.Exit(1)
	}
}

func run(cmd, data, out string, trials int, epsList string, seed uint64, workers int, timing bool) error {
	start := time.Now()
	if trials < 5 {
		return fmt.Errorf("-trials %d: at least 5", trials)
	}
	var epsilons []float64
	for _, f := range strings.Split(epsList, ",") {
		e, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return fmt.Errorf("-eps: %w", err)
		}
		epsilons = append(epsilons, e)
	}
	var hists []*bench.RangeHistogram
	for _, d := range bench.DAWADatasets {
		h, err := bench.LoadDPCompHistogram(data, d.File)
		if err != nil {
			return err
		}
		hists = append(hists, h)
	}
	dpcomp := hists
	large := bench.DAWARuleGroup{Label: "4096 bins (DPComp, pums-income)"}
	middle := bench.DAWARuleGroup{Label: "1024 bins (DPComp coarsened by 4)"}
	small := bench.DAWARuleGroup{Label: "64 to 256 bins (DPComp coarsened by 16 and 64, pums-age)"}
	for _, h := range dpcomp {
		large.Datasets = append(large.Datasets, h.Name)
	}
	for _, factor := range []int{4, 16, 64} {
		group := &small
		if factor == 4 {
			group = &middle
		}
		for _, h := range dpcomp {
			c := h.Coarsen(factor)
			hists = append(hists, c)
			group.Datasets = append(group.Datasets, c.Name)
		}
	}
	age, err := bench.PUMS(data, "age")
	if err != nil {
		return err
	}
	income, err := bench.PUMS(data, "income")
	if err != nil {
		return err
	}
	hists = append(hists, bench.HistogramOf(age, 0, true), bench.HistogramOf(income, 4096, false))
	small.Datasets = append(small.Datasets, age.Name)
	large.Datasets = append(large.Datasets, income.Name)
	cfg := bench.DAWAConfig{Epsilons: epsilons, Trials: trials, Intervals: 2000, Seed: seed, Workers: workers}
	cells, err := bench.RunDAWA(hists, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "accuracy done in %s\n", time.Since(start).Round(time.Second))
	var timings []bench.DAWATiming
	if timing {
		for _, h := range dpcomp {
			t, err := bench.TimeDAWA(h, 0.1, cfg, 5)
			if err != nil {
				return err
			}
			timings = append(timings, t...)
		}
		for _, h := range []*bench.RangeHistogram{dpcomp[0], dpcomp[5]} { // Nettrace (easy), Patent (hard)
			t, err := bench.TimeDAWA(h.Refine(256, seed), 0.1, cfg, 3)
			if err != nil {
				return err
			}
			timings = append(timings, t...)
		}
	}
	var buf bytes.Buffer
	bench.WriteDAWAReport(&buf, bench.DAWAReport{Command: cmd, Config: cfg, Datasets: hists, RuleGroups: []bench.DAWARuleGroup{large, middle, small}, Cells: cells, Timings: timings, Elapsed: time.Since(start)})
	return os.WriteFile(filepath.Join(out, "RESULTS-dawa.md"), buf.Bytes(), 0o644)
}
