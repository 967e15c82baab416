package bench

import (
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Report is everything RESULTS-accuracy.md is written from.
type Report struct {
	// Command is the one line that regenerates the report.
	Command    string
	Results    []Result
	Data       []*Dataset
	Candidates []Candidate
	Trials     int
	Elapsed    time.Duration
	Workers    int
	CellBudget time.Duration
	MinTrials  int
	Timings    []Timing
	// OutDir is where the PNG plots are written (next to the report).
	OutDir string
}

// quoteDatasets are the datasets whose ε = 1 median errors the report quotes.
var quoteDatasets = []string{"pums-age", "income", "normal-n10000"}

// WriteReport writes the Markdown report and its plots.
func WriteReport(w io.Writer, r Report) error {
	mechs := CandidateNames(r.Candidates)
	fmt.Fprintf(w, "## Accuracy: median, p10, p90, mean and variance\n\nRegenerate (text and plots):\n\n    %s\n\n", r.Command)
	fmt.Fprintf(w, "Accuracy run: %s on %d workers (%s, %d CPUs), %d trials per cell", r.Elapsed.Round(time.Second), r.Workers, runtime.GOARCH, runtime.NumCPU(), r.Trials)
	if r.CellBudget > 0 {
		fmt.Fprintf(w, ", except cells marked † which stopped once they had used %s and run at least %d trials", r.CellBudget, r.MinTrials)
	}
	fmt.Fprintf(w, ". Every number below comes from this run; noise is seeded, so a rerun reproduces it (a † cell may run a different number of trials on another machine).\n")
	writeSetup(w, r)
	fmt.Fprintf(w, "\n### Findings\n")
	fmt.Fprint(w, findingsText)
	fmt.Fprintf(w, "\n#### Datasets won per statistic and ε, and the recommended rule\n")
	WriteWins(w, r.Results, r.Data)
	fmt.Fprintf(w, "\n#### Rules considered (n for ñ; every dataset and ε of the statistics named)\n")
	WriteRuleAlternatives(w, r.Results, r.Data)
	fmt.Fprintf(w, "\n#### The papers' claims\n")
	WriteClaims(w, r.Results, r.Data)
	fmt.Fprintf(w, "\n#### Median, ε = 1: mean absolute error of each mechanism\n")
	WriteQuotes(w, r.Results, "median", 1, quoteDatasets, mechs)
	plain := slices.DeleteFunc(slices.Clone(mechs), func(m string) bool { return m == RuleName })
	if err := writePlots(w, r, plain); err != nil {
		return err
	}
	if len(r.Timings) > 0 {
		fmt.Fprintf(w, "\n### Time per release (testing.Benchmark, ε = 1)\n\nOne complete release from what the database returns (window, histogram, summary or sketch; the fetch is not timed). `go test ./bench -run '^$' -bench Release` measures the same.\n")
		WriteTimings(w, r.Timings)
	}
	fmt.Fprintf(w, "\n### All cells\n\nCells: mean / 90th-percentile absolute error; for preprocess and smooth on the median also the median |error|. ⊥: refusals. Winner by mean |error|.\n")
	WriteTables(w, r.Results, mechs)
	fmt.Fprintf(w, "\n### Time per release in the accuracy run (mean over statistics and ε, preparation included)\n")
	WriteTimes(w, r.Results, plain)
	return nil
}

// writeSetup describes the datasets, mechanisms, budget rule and metrics.
func writeSetup(w io.Writer, r Report) {
	fmt.Fprintf(w, "\n### Setup\n\n**Budget rule** (the proxy's, `bench.CountShare` = %g): a mechanism that needs a noisy count ñ spends %g·ε on a discrete-Laplace count (`mech.ReleaseCount`) and %g·ε on the statistic; every other mechanism gets the whole ε (the Laplace baselines split it internally: mean ε/2 count + ε/2 sum, variance ε/3 each for count, sum, sum of squares).\n\n**Mechanisms**\n\n", CountShare, CountShare, 1-CountShare)
	for _, c := range r.Candidates {
		var stats []string
		for _, s := range Statistics {
			if c.Supports(s) {
				stats = append(stats, s.Name)
			}
		}
		fmt.Fprintf(w, "- `%s`: %s. Statistics: %s.\n", c.Name, c.Summary, strings.Join(stats, ", "))
	}
	fmt.Fprintf(w, "\n**Truth**: SQL's PERCENTILE_CONT(q) (interpolated; MEDIAN averages the two middle values), AVG, VAR_POP of the clamped column. **Error**: |release − truth| over the trials; the plots divide by the scale U−L (variance: ((U−L)/2)²).\n\n**Datasets** (values sorted; bounds public):\n\n| dataset | n | bounds | integer |\n|---|--:|---|---|\n")
	for _, d := range r.Data {
		fmt.Fprintf(w, "| %s | %d | [%g, %g] | %v |\n", d.Name, len(d.Values), d.Lower, d.Upper, d.Integer)
	}
	fmt.Fprintf(w, "\ndpcomp datasets: the seven DAWA histograms of `../shared/data/dpcomp-1d`, each bin expanded into rows whose value is the bin index. PUMS: `../shared/data/pums/PUMS.csv`, bounds from its metadata. Synthetic: `bench.Synthetic` with the run's seed: normal N(100, 15²) in [0, 1000]; lognormal exp(N(10, 1)) in [0, 10⁶]; uniform U(0, 1000); bimodal N(200, 10²) or N(800, 10²) in [0, 1000], nothing in the middle; ties ⌊3·Exp(1)⌋ integers in [0, 100].\n")
}

// writePlots saves and links the plots.
func writePlots(w io.Writer, r Report, mechs []string) error {
	fmt.Fprintf(w, "\n### Plots\n\nMean |error| divided by the scale (U−L; variance ((U−L)/2)²), geometric mean over the datasets on which every plotted mechanism has a result at every ε, errors below 10⁻⁶ of the scale counted as 10⁻⁶ (exact); left: integer columns whose planner grid is unit bins, right: the others. Then the median's error against n on the normal and ties synthetic data at ε = 1.\n")
	for _, s := range Statistics {
		png := "accuracy-" + s.Name + ".png"
		if err := PlotByEpsilon(r.Results, s, r.Data, mechs, filepath.Join(r.OutDir, png)); err != nil {
			return err
		}
		fmt.Fprintf(w, "\n![%s](%s)\n", s.Name, png)
	}
	for _, kind := range []string{"normal", "ties"} {
		png := "accuracy-median-by-n-" + kind + ".png"
		if err := PlotByN(r.Results, "median", 1, kind, mechs, filepath.Join(r.OutDir, png)); err != nil {
			return err
		}
		fmt.Fprintf(w, "\n![median by n, %s](%s)\n", kind, png)
	}
	return nil
}

// WriteTimings writes the release times as a table: a row per statistic
// and dataset, a column per mechanism.
func WriteTimings(w io.Writer, ts []Timing) {
	type rowKey struct{ stat, data string }
	var rows []rowKey
	var mechs []string
	cells := map[rowKey]map[string]time.Duration{}
	for _, t := range ts {
		parts := strings.SplitN(t.Name, "/", 3)
		if len(parts) != 3 {
			continue
		}
		k := rowKey{parts[0], parts[2]}
		if cells[k] == nil {
			cells[k] = map[string]time.Duration{}
			rows = append(rows, k)
		}
		cells[k][parts[1]] = t.PerRelease
		if !slices.Contains(mechs, parts[1]) {
			mechs = append(mechs, parts[1])
		}
	}
	fmt.Fprintf(w, "\n| statistic | data |")
	for _, m := range mechs {
		fmt.Fprintf(w, " %s |", m)
	}
	fmt.Fprintf(w, "\n|---|---|%s\n", strings.Repeat("--:|", len(mechs)))
	for _, k := range rows {
		fmt.Fprintf(w, "| %s | %s |", k.stat, k.data)
		for _, m := range mechs {
			if d, ok := cells[k][m]; ok {
				fmt.Fprintf(w, " %s |", duration(d.Seconds()))
			} else {
				fmt.Fprintf(w, " – |")
			}
		}
		fmt.Fprintln(w)
	}
}
