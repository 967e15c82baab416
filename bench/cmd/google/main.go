// Command google measures dpproxy's `auto` choice against Google's
// differential-privacy library on the anchors' rows and ε
// (../shared/data/anchors/google-dp-go.tsv) and writes
// bench/RESULTS-google.md, bench/google-ratios.png and bench/google-results.csv
// (one row per cell):
//
//	go run ./bench/cmd/google -data ../shared/data -out bench
//
// The quantile cells over their target are measured again on their
// neighbours (bench.GoogleNeighbourCheck), at the end of RESULTS-google.md.
//
// -trials lowers the trials per cell (the ratio bounds widen) for a quick
// run on a busy machine: -trials 50 runs in about a quarter of the time.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/dpproxy/dpproxy/bench"
)

func main() {
	data := flag.String("data", "../shared/data", "the shared data directory (dpcomp-1d/, anchors/)")
	out := flag.String("out", "bench", "directory for RESULTS-google.md, google-ratios.png and google-results.csv")
	trials := flag.Int("trials", 200, "trials per cell")
	seed := flag.Uint64("seed", 1, "seed of the trials' noise")
	workers := flag.Int("workers", runtime.GOMAXPROCS(0), "cells measured in parallel")
	stats := flag.String("stats", "median,p10,p90,mean,variance", "statistics to measure")
	extra := flag.String("also", "", "comma-separated further candidates to measure (bench.Candidates names, or google-unpruned), for diagnosis; they enter google-results.csv only")
	flag.Parse()
	commandLine := "go run ./bench/cmd/google " + strings.Join(os.Args[1:], " ")
	if err := run(*data, *out, *trials, *seed, *workers, *stats, *extra, commandLine); err != nil {
		fmt.Fprintln(os.Stderr, "google:", err)
		os.Exit(1)
	}
}

func run(data, out string, trials int, seed uint64, workers int, statList, extra, commandLine string) error {
	anchors, err := bench.ReadAnchors(filepath.Join(data, "anchors", "google-dp-go.tsv"))
	if err != nil {
		return err
	}
	datasets, err := bench.AnchorDatasets(data, anchors)
	if err != nil {
		return err
	}
	var stats []bench.Statistic
	for _, s := range bench.Statistics {
		if strings.Contains(","+statList+",", ","+s.Name+",") {
			stats = append(stats, s)
		}
	}
	cands := []bench.Candidate{bench.RuleCandidate(), bench.GoogleCandidate()}
	for _, c := range append(bench.Candidates(), bench.GoogleUnprunedCandidate()) {
		if extra != "" && strings.Contains(","+extra+",", ","+c.Name+",") {
			cands = append(cands, c)
		}
	}
	start := time.Now()
	results := bench.Run(bench.Config{
		Statistics: stats, Data: datasets, Epsilons: []float64{0.1, 1},
		Candidates: cands,
		Trials:     trials, Seed: seed, Workers: workers,
		Progress: func(r bench.Result) {
			fmt.Fprintf(os.Stderr, "%6s %-9s %-18s ε=%-4g %-7s mean|err|=%-10.4g %s%s\n", time.Since(start).Round(time.Second),
				r.Statistic, r.Dataset, r.Epsilon, r.Mechanism, r.MeanAbs, r.Elapsed.Round(time.Millisecond), r.Err)
		},
	})
	for _, r := range results {
		if r.Err != "" {
			return fmt.Errorf("%s %s ε=%g %s: %s", r.Statistic, r.Dataset, r.Epsilon, r.Mechanism, r.Err)
		}
	}
	var csv bytes.Buffer
	if err := bench.WriteCSV(&csv, results); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "google-results.csv"), csv.Bytes(), 0o644); err != nil {
		return err
	}
	rows := bench.GoogleComparison(anchors, results)
	var buf bytes.Buffer
	bench.WriteGoogleReport(&buf, rows, commandLine, trials)
	bench.WriteNeighbourReport(&buf, bench.GoogleNeighbourCheck(rows, datasets, trials, seed, workers), trials)
	if err := os.WriteFile(filepath.Join(out, "RESULTS-google.md"), buf.Bytes(), 0o644); err != nil {
		return err
	}
	if err := bench.PlotGoogleRatios(rows, filepath.Join(out, "google-ratios.png")); err != nil {
		return err
	}
	for _, f := range bench.GoogleFailures(rows) {
		fmt.Fprintln(os.Stderr, "over target:", f)
	}
	fmt.Fprintf(os.Stderr, "done in %s\n", time.Since(start).Round(time.Second))
	return nil
}
