// Command ptr regenerates bench/RESULTS-ptr.md: the Propose-Test-Release
// median, trimmed mean and IQR against the proxy's exponential and Laplace
// baselines on synthetic and PUMS columns, and the PTR regressions R_S and
// R_H on synthetic linear data and on PUMS income against age
// (bench.RunPTR). From the repository root:
//
//	go run ./bench/cmd/ptr -data ../shared/data -out bench
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
	data := flag.String("data", "../shared/data", "the shared data directory (holds pums/PUMS.csv); empty skips PUMS")
	out := flag.String("out", "bench", "directory for RESULTS-ptr.md")
	sizes := flag.String("n", "1000,10000,100000", "the synthetic sizes")
	eps := flag.String("eps", "0.5,1,2,5", "the ε of the column and R_S cells")
	delta := flag.Float64("delta", 1e-6, "the δ of every PTR release")
	columnTrials := flag.Int("column-trials", 1000, "trials per column cell")
	regressionTrials := flag.Int("regression-trials", 300, "trials per R_S cell")
	hampelEps := flag.String("hampel-eps", "1,5,50", "the ε of the R_H cells (empty: no R_H)")
	hampelTrials := flag.Int("hampel-trials", 20, "trials per R_H cell (about 1-2 s of CPU each)")
	seed := flag.Uint64("seed", 1, "seed of the synthetic data and the noise")
	workers := flag.Int("workers", runtime.GOMAXPROCS(0), "goroutines measuring in parallel")
	flag.Parse()
	cfg := bench.PTRConfig{
		Data: *data, Delta: *delta, ColumnTrials: *columnTrials, RegressionTrials: *regressionTrials,
		HampelTrials: *hampelTrials, Seed: *seed, Workers: *workers,
	}
	var err error
	if cfg.Sizes, err = parseList(*sizes, strconv.Atoi); err != nil {
		fail(fmt.Errorf("-n: %w", err))
	}
	parseFloat := func(s string) (float64, error) { return strconv.ParseFloat(s, 64) }
	if cfg.Epsilons, err = parseList(*eps, parseFloat); err != nil {
		fail(fmt.Errorf("-eps: %w", err))
	}
	if cfg.HampelEpsilons, err = parseList(*hampelEps, parseFloat); err != nil {
		fail(fmt.Errorf("-hampel-eps: %w", err))
	}
	start := time.Now()
	res, err := bench.RunPTR(cfg)
	if err != nil {
		fail(err)
	}
	var buf bytes.Buffer
	cmd := strings.TrimSpace("go run ./bench/cmd/ptr " + strings.Join(os.Args[1:], " "))
	if err := bench.WritePTRReport(&buf, cmd, res, time.Since(start)); err != nil {
		fail(err)
	}
	path := filepath.Join(*out, "RESULTS-ptr.md")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		fail(err)
	}
	fmt.Printf("wrote %s in %s\n", path, time.Since(start).Round(time.Second))
}

// parseList parses a comma-separated list; an empty string is no values.
func parseList[T any](s string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := parse(f)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "ptr:", err)
	os.Exit(1)
}
