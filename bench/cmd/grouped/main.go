// Command grouped regenerates bench/RESULTS-grouped.md: the error per group
// of GROUP BY COUNT(*) and AVG(income) through the real proxy (SQLite, the
// PUMS sample grouped by educ and by race) against the independent
// per-group Laplace baseline at the same ε, and the number of keys that
// partition selection releases at ε = 1, δ = 1e-6 on skewed real columns
// (PUMS educ; the DAWA paper's seven histograms with bins as keys): the
// exact expectation and seeded draws. From the repository root:
//
//	go run ./bench/cmd/grouped -data ../shared/data -out bench
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dpproxy/dpproxy/bench"
)

func main() {
	data := flag.String("data", "../shared/data", "directory holding dpcomp-1d/")
	out := flag.String("out", "bench", "directory for RESULTS-grouped.md")
	trials := flag.Int("trials", 100, "proxy statements per (key, aggregate, ε)")
	seed := flag.Uint64("seed", 1, "seed of the baseline's noise and of the selection draws")
	flag.Parse()
	if err := run(*data, *out, *trials, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "grouped:", err)
		os.Exit(1)
	}
}

func run(data, out string, trials int, seed uint64) error {
	start := time.Now()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "dpproxy-grouped-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	g, err := bench.NewGroupedSetup(ctx, dir)
	if err != nil {
		return err
	}
	defer g.Close()
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Grouped aggregates and partition selection\n\n`go run ./bench/cmd/grouped %s` (%s, %d statements per row of the first tables; wall time in the last line).\n\n",
		strings.Join(os.Args[1:], " "), time.Now().Format("2006-01-02"), trials)
	b.WriteString(groupedIntro)
	var runs []bench.GroupedErrors
	for _, key := range []string{"educ", "race"} {
		for _, agg := range []string{"COUNT(*)", "AVG(income)"} {
			for _, eps := range []float64{0.1, 1} {
				r, err := bench.RunGroupedErrors(ctx, g, key, agg, eps, trials, seed)
				if err != nil {
					return err
				}
				writeGrouped(&b, r)
				runs = append(runs, r)
			}
		}
	}
	if err := bench.PlotGroupedErrors(runs, 1, filepath.Join(out, "grouped-error.png")); err != nil {
		return err
	}
	b.WriteString("![median error per group against its size, ε = 1](grouped-error.png)\n\n")
	b.WriteString(selectionIntro)
	fmt.Fprintf(&b, "| keys | rows | keys with rows | ε, δ of the selection | threshold T | expected released (exact) | keys with P[keep] ≥ ½ (smallest such count) | seeded draws: mean [min, max] of %d |\n|---|--:|--:|---|--:|--:|--:|---|\n", 1000)
	type column struct {
		name   string
		counts []int64
	}
	cols := []column{{"PUMS educ", bench.PUMSEducCounts()}}
	for _, d := range bench.DAWADatasets {
		h, err := bench.LoadDPCompHistogram(data, d.File)
		if err != nil {
			return err
		}
		cols = append(cols, column{"DAWA " + d.Paper + " (bins as keys)", h.Counts})
	}
	for _, c := range cols {
		for _, eps := range []struct{ e, d float64 }{{2, 2e-6}, {1, 1e-6}} {
			s, err := bench.RunSelection(g, c.name, c.counts, eps.e, eps.d, 1000, seed)
			if err != nil {
				return err
			}
			lo, hi, sum := math.MaxInt, 0, 0
			for _, k := range s.Samples {
				lo, hi, sum = min(lo, k), max(hi, k), sum+k
			}
			fmt.Fprintf(&b, "| %s | %d | %d | %g, %g | %d | %.2f | %d (%d) | %.2f [%d, %d] |\n", s.Name, s.Rows, s.Keys,
				s.Epsilon, s.Delta, s.Threshold, s.Expected, s.AboveHalf, s.MinKeptCount, float64(sum)/float64(len(s.Samples)), lo, hi)
		}
	}
	fmt.Fprintf(&b, "\nWall time: %.1f s.\n", time.Since(start).Seconds())
	return os.WriteFile(filepath.Join(out, "RESULTS-grouped.md"), b.Bytes(), 0o644)
}

const groupedIntro = `## Error per group: the proxy against independent per-group Laplace

Each statement is ` + "`SELECT key, agg FROM pums GROUP BY key`" + ` through the
real proxy (parser, planner, executor, SQLite backend, ledger) on the
1,000-row PUMS sample (age in [0, 100], income in [0, 500000], educ 1..16,
race 1..6 declared), every declared group released (parallel composition:
each group uses the statement's whole ε). The baseline is the textbook
release at the same ε per group: COUNT(*) + Lap(1/ε); AVG as
(S + Lap(2U/ε)) / (n + Lap(2/ε)) clamped to [0, U], U = 500000, NULL when the
noisy count is below 1. Cells: median absolute error over the trials, a
NULL answer counting as an error of |exact| (a chart draws it as 0; the
number of NULL answers in brackets); "all" sums the groups' medians.

`

const selectionIntro = `## Keys released by partition selection

A private key (` + "`partition_selection: true`" + `) is released when its count plus
discrete Laplace noise of scale 1/ε reaches T (planner.PartitionSelection).
The plan is the real planner's for ` + "`SELECT k, COUNT(*) FROM keyed GROUP BY k`" + `,
which gives the selection half of the statement's ε and δ: the first row of
each column is the statement at ε = 2, δ = 2e-6 (selection at ε = 1,
δ = 1e-6), the second the statement at ε = 1, δ = 1e-6. Expected:
Σ over keys with rows of P[n_k + Z ≥ T], from the closed form; draws: the
same selection applied to the counts with a seeded ChaCha8 stream. Keys
without rows are never released.

`

func writeGrouped(b *bytes.Buffer, r bench.GroupedErrors) {
	fmt.Fprintf(b, "### GROUP BY %s, %s, ε = %g\n\n| %s | n | exact | proxy | baseline | proxy / baseline |\n|--:|--:|--:|--:|--:|--:|\n",
		r.Key, r.Aggregate, r.Epsilon, r.Key)
	var sumP, sumB float64
	for i, t := range r.Groups {
		exact := float64(t.Count)
		if r.Aggregate != "COUNT(*)" {
			exact = math.NaN()
			if t.Count > 0 {
				exact = t.Sum / float64(t.Count)
			}
		}
		p, bl := bench.Median(r.Proxy[i]), bench.Median(r.Baseline[i])
		if !math.IsNaN(p) && !math.IsNaN(bl) {
			sumP += p
			sumB += bl
		}
		fmt.Fprintf(b, "| %d | %d | %s | %s | %s | %s |\n", t.Key, t.Count, num(exact), withNull(p, r.ProxyNull[i]), withNull(bl, r.BaselineNull[i]), num(p/bl))
	}
	fmt.Fprintf(b, "| all | | | %s | %s | %s |\n\n", num(sumP), num(sumB), num(sumP/sumB))
}

func num(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "—"
	}
	if math.Abs(x) >= 100 {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.3g", x)
}

func withNull(x float64, nulls int) string {
	if nulls > 0 {
		return fmt.Sprintf("%s [%d NULL]", num(x), nulls)
	}
	return num(x)
}
