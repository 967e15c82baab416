package bench

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// WritePTRReport writes RESULTS-ptr.md for r: the command that regenerates
// it (cmd) and the run's wall time, the findings, then every table.
func WritePTRReport(w io.Writer, cmd string, r *PTRResults, elapsed time.Duration) error {
	b := bufio.NewWriter(w)
	cfg := r.Config
	fmt.Fprintf(b, "# Propose-Test-Release: median, trimmed mean, IQR and regression against the baselines\n\n")
	fmt.Fprintf(b, "Regenerate with `%s` (from the repository root; %s on this machine, 2 cores shared with other work).\n\n", cmd, elapsed.Round(time.Second))
	fmt.Fprintf(b, "Every PTR release runs as the proxy runs it (internal/planner/ptr.go): a noisy count with ε·%g "+
		"(mech.ReleaseCount) is the public size N, and the mechanism gets the remaining %g·ε and all of δ = %g. "+
		"The baselines are the proxy's pure ε-DP mechanisms with all of ε: the exponential mechanism over the planner's grid "+
		"(mech.GridQuantile; unit bins for integer columns with integer bounds less than 2^16 apart, else 2^14 bins) for the median "+
		"and, at ε/2 each, the two quartiles of the IQR; the forced laplace mechanism's mean for the mean (laplace.ReleaseCount and laplace.ReleaseUnitCenteredSumOnGrid at ε/2 each, then laplace.DeriveMean). "+
		"Errors are absolute, over the trials that answered (⊥, \"No Reply\", is counted in the ⊥ column and excluded from the errors); "+
		"p90 is the 90th percentile. Each column estimator is measured against the sample statistic it estimates: the median "+
		"(PERCENTILE_CONT(0.5)), the α-trimmed mean (α = %g in total, ranks ⌈nα/2⌉+1 … ⌊n(1−α/2)⌋−1, PTRTrimmedMean.TrimmedRanks) "+
		"for PTR and the mean for the Laplace baseline, and PERCENTILE_CONT(0.75) − PERCENTILE_CONT(0.25) for the IQR.\n\n",
		ptrCountShare, 1-ptrCountShare, cfg.Delta, ptrTrim)
	writePTRFindings(b, r)
	writePTRColumns(b, r)
	writePTRRegression(b, r)
	return b.Flush()
}

// writePTRFindings writes the headline table (the normal column and the
// Gaussian-noise regression at every n) and the findings text.
func writePTRFindings(b *bufio.Writer, r *PTRResults) {
	cfg := r.Config
	fmt.Fprintf(b, "## Findings\n\n")
	fmt.Fprintf(b, "⊥ rate and mean absolute error (answered trials) by n: the column estimators on the normal column "+
		"(N(100, 15²), bounds [0, 1000]; the baseline's mean error in brackets) and the regression coefficients on "+
		"y = %g + %g·x + N(0, %g²) (true coefficients).\n\n", ptrLinearModel.intercept, ptrLinearModel.slope, ptrLinearModel.noiseScale)
	fmt.Fprintf(b, "| estimator | ε |")
	for _, n := range cfg.Sizes {
		fmt.Fprintf(b, " n = %s |", ptrPow10(n))
	}
	fmt.Fprintf(b, "\n|---|---:|%s\n", strings.Repeat("---|", len(cfg.Sizes)))
	for _, s := range ptrColumnStatistics {
		for _, eps := range cfg.Epsilons {
			fmt.Fprintf(b, "| PTR %s | %g |", s.name, eps)
			for _, n := range cfg.Sizes {
				c, ok := r.column(fmt.Sprintf("normal-n%d", n), s.name, eps)
				if !ok {
					fmt.Fprintf(b, " |")
					continue
				}
				fmt.Fprintf(b, " ⊥ %s, %s [%s] |", ptrPercent(c.PTR), ptrNum(c.PTR.Mean), ptrNum(c.Baseline.Mean))
			}
			fmt.Fprintln(b)
		}
	}
	for _, mech := range []string{"R_S", "R_H"} {
		for _, coef := range []string{"slope", "intercept"} {
			for _, eps := range ptrRegressionEpsilons(r, mech) {
				fmt.Fprintf(b, "| %s %s | %g |", mech, coef, eps)
				for _, n := range cfg.Sizes {
					c, ok := r.regression("gaussian", n, mech, eps)
					if !ok {
						fmt.Fprintf(b, " |")
						continue
					}
					e := c.coefficient(coef)
					fmt.Fprintf(b, " ⊥ %s, %s |", ptrPercent(e), ptrNum(e.Mean))
				}
				fmt.Fprintln(b)
			}
		}
	}
	fmt.Fprintf(b, "\nPTR answered with a lower mean error than its baseline in %s.\n", r.wins())
	fmt.Fprint(b, ptrFindingsText)
}

// writePTRColumns writes one table per column estimator.
func writePTRColumns(b *bufio.Writer, r *PTRResults) {
	fmt.Fprintf(b, "\n## Column estimators\n\n")
	fmt.Fprintf(b, "%d trials per cell (the same data in every trial, fresh noise). Datasets: normal N(100, 15²) in [0, 1000], "+
		"lognormal exp(N(10, 1)) in [0, 10^6], student-t3 100 + 15·t₃ in [−1000, 1000], normal-wide the normal values with "+
		"bounds [−10^6, 10^6], and the PUMS columns age [0, 100] and income [0, 500000] (n = 1000).\n",
		r.Config.ColumnTrials)
	for _, s := range ptrColumnStatistics {
		fmt.Fprintf(b, "\n### %s: PTR against %s\n\n", s.name, s.baseline)
		truth := "truth"
		if s.name == "trimmed mean" {
			truth = "trimmed mean | mean"
		}
		fmt.Fprintf(b, "| dataset | n | ε | %s | PTR ⊥ | PTR mean err | PTR p90 | %s mean err | %s p90 |\n", truth, s.baseline, s.baseline)
		fmt.Fprintf(b, "|---|---:|---:|---:|%s\n", strings.Repeat("---:|", strings.Count(truth, "|")+5))
		for _, c := range r.Columns {
			if c.Statistic != s.name {
				continue
			}
			t := ptrNum(c.Truth)
			if s.name == "trimmed mean" {
				t += " | " + ptrNum(c.BaselineTruth)
			}
			fmt.Fprintf(b, "| %s | %d | %g | %s | %s | %s | %s | %s | %s |\n", ptrDatasetKind(c.Dataset), c.N, c.Epsilon, t,
				ptrPercent(c.PTR), ptrNum(c.PTR.Mean), ptrNum(c.PTR.P90), ptrNum(c.Baseline.Mean), ptrNum(c.Baseline.P90))
		}
	}
}

// writePTRRegression writes the synthetic and the real regression tables.
func writePTRRegression(b *bufio.Writer, r *PTRResults) {
	cfg := r.Config
	m := ptrLinearModel
	bounds := ptrCoefficientBounds(ptrLinearBounds())
	fmt.Fprintf(b, "\n## Regression\n\n")
	fmt.Fprintf(b, "R_S runs as the proxy runs REGR_SLOPE and REGR_INTERCEPT: two queries of ε each, each with its own noisy count "+
		"and R_S releasing one coefficient with 0.9ε (%d trials per cell; R_S also runs at R_H's ε). R_H, which the proxy does not offer, releases both "+
		"coefficients in one release of ε (same count share) and takes up to about three seconds per release (its test walks the "+
		"line arrangement of a sample of about 2048 rows), so it runs only %d trials per cell at ε ∈ {%s}: its ⊥ rates are "+
		"resolved to 1/%d. Coefficient bounds follow the proxy (|slope| ≤ 10·(Uy−Ly)/(Ux−Lx), intercept within [Ly, Uy] widened by "+
		"that slope times max|x|). *s/release* is the mean wall time of one mechanism run, answered or ⊥, while the other workers run.\n\n",
		cfg.RegressionTrials, cfg.HampelTrials, ptrList(cfg.HampelEpsilons), max(cfg.HampelTrials, 1))
	fmt.Fprintf(b, "### Synthetic: y = %g + %g·x + noise, x ~ U(%g, %g)\n\n", m.intercept, m.slope, m.xLower, m.xUpper)
	fmt.Fprintf(b, "Bounds x ∈ [%g, %g], y ∈ [%g, %g] (values clamped), so slope ∈ [%g, %g] and intercept ∈ [%g, %g]. Noise "+
		"*gaussian* is N(0, %g²), *student-t3* is %g·t₃. Fresh data in every trial; errors against the true coefficients; "+
		"*OLS* is the non-private least-squares error on the same data (the statistical floor).\n\n",
		m.xLower, m.xUpper, m.yLower, m.yUpper, bounds[1].Lower, bounds[1].Upper, bounds[0].Lower, bounds[0].Upper, m.noiseScale, m.noiseScale)
	fmt.Fprintf(b, "| noise | n | mechanism | ε | trials | slope ⊥ | slope mean err | slope p90 | OLS slope err | intercept ⊥ | intercept mean err | intercept p90 | OLS intercept err | s/release |\n")
	fmt.Fprintf(b, "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, c := range r.Regression {
		if c.Real {
			continue
		}
		fmt.Fprintf(b, "| %s | %d | %s | %g | %d | %s | %s | %s | %s | %s | %s | %s | %s | %.3f |\n",
			c.Data, c.N, c.Mechanism, c.Epsilon, c.Slope.Trials,
			ptrPercent(c.Slope), ptrNum(c.Slope.Mean), ptrNum(c.Slope.P90), ptrNum(c.OLSSlope.Mean),
			ptrPercent(c.Intercept), ptrNum(c.Intercept.Mean), ptrNum(c.Intercept.P90), ptrNum(c.OLSIntercept.Mean), c.Seconds)
	}
	var real []PTRRegressionCell
	for _, c := range r.Regression {
		if c.Real {
			real = append(real, c)
		}
	}
	if len(real) == 0 {
		return
	}
	c := real[0]
	fmt.Fprintf(b, "\n### Real pair: %s (n = %d)\n\n", c.Data, c.N)
	fmt.Fprintf(b, "Slope ∈ [%s, %s], intercept ∈ [%s, %s]. The data are fixed; errors are against the non-private "+
		"least-squares fit, intercept %s and slope %s. The non-private Theil–Sen fit (median pairwise slope; R_S's median of "+
		"block fits is close to it) is intercept %s and slope %s. *released* is the median of the answered releases.\n\n",
		ptrNum(c.Bounds[1].Lower), ptrNum(c.Bounds[1].Upper), ptrNum(c.Bounds[0].Lower), ptrNum(c.Bounds[0].Upper),
		ptrNum(c.Reference[0]), ptrNum(c.Reference[1]), ptrNum(c.TheilSen[0]), ptrNum(c.TheilSen[1]))
	fmt.Fprintf(b, "| mechanism | ε | trials | slope ⊥ | released slope | slope mean err | slope p90 | intercept ⊥ | released intercept | intercept mean err | intercept p90 | s/release |\n")
	fmt.Fprintf(b, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, c := range real {
		fmt.Fprintf(b, "| %s | %g | %d | %s | %s | %s | %s | %s | %s | %s | %s | %.3f |\n",
			c.Mechanism, c.Epsilon, c.Slope.Trials, ptrPercent(c.Slope), ptrNum(c.Released[1]), ptrNum(c.Slope.Mean), ptrNum(c.Slope.P90),
			ptrPercent(c.Intercept), ptrNum(c.Released[0]), ptrNum(c.Intercept.Mean), ptrNum(c.Intercept.P90), c.Seconds)
	}
}

// column returns the column cell of dataset, statistic and ε.
func (r *PTRResults) column(dataset, statistic string, eps float64) (PTRColumnCell, bool) {
	for _, c := range r.Columns {
		if c.Dataset == dataset && c.Statistic == statistic && c.Epsilon == eps {
			return c, true
		}
	}
	return PTRColumnCell{}, false
}

// regression returns the regression cell of data, n, mechanism and ε.
func (r *PTRResults) regression(data string, n int, mechanism string, eps float64) (PTRRegressionCell, bool) {
	for _, c := range r.Regression {
		if c.Data == data && c.N == n && c.Mechanism == mechanism && c.Epsilon == eps {
			return c, true
		}
	}
	return PTRRegressionCell{}, false
}

// coefficient returns the errors of "slope" or "intercept".
func (c PTRRegressionCell) coefficient(name string) PTRErrors {
	if name == "slope" {
		return c.Slope
	}
	return c.Intercept
}

// ptrRegressionEpsilons returns the ε a regression mechanism ran at.
func ptrRegressionEpsilons(r *PTRResults, mechanism string) []float64 {
	if mechanism == "R_H" {
		return r.Config.HampelEpsilons
	}
	return ptrShortcutEpsilons(r.Config)
}

// wins counts, per statistic, the column cells where PTR answered in at
// least half the trials with a lower mean error than the baseline.
func (r *PTRResults) wins() string {
	var parts []string
	for _, s := range ptrColumnStatistics {
		won, total := 0, 0
		var where []string
		for _, c := range r.Columns {
			if c.Statistic != s.name {
				continue
			}
			total++
			if c.PTR.RefusalRate() <= 0.5 && c.PTR.Mean < c.Baseline.Mean {
				won++
				where = append(where, fmt.Sprintf("%s ε=%g", c.Dataset, c.Epsilon))
			}
		}
		part := fmt.Sprintf("%d of %d %s cells", won, total, s.name)
		if won > 0 {
			part += " (" + strings.Join(where, ", ") + ")"
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, "; ") + ", counting only cells where PTR answered at least half the trials"
}

// ptrDatasetKind strips the size suffix from a dataset name.
func ptrDatasetKind(name string) string {
	if i := strings.LastIndex(name, "-n"); i > 0 {
		return name[:i]
	}
	return name
}

// ptrPow10 writes n as 10^k when it is a power of ten.
func ptrPow10(n int) string {
	k := math.Log10(float64(n))
	if k == math.Trunc(k) && n > 1 {
		return fmt.Sprintf("10^%d", int(k))
	}
	return fmt.Sprint(n)
}

// ptrList writes values separated by commas.
func ptrList(values []float64) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, ", ")
}

// ptrPercent returns the ⊥ rate of e as a percentage.
func ptrPercent(e PTRErrors) string {
	rate := e.RefusalRate()
	switch {
	case math.IsNaN(rate):
		return "—"
	case rate == 0:
		return "0%"
	case rate == 1:
		return "100%"
	}
	return fmt.Sprintf("%.1f%%", 100*rate)
}

// ptrNum formats a value to three significant digits (integers from 1000
// on); NaN (no answered trial) is "—".
func ptrNum(v float64) string {
	switch {
	case math.IsNaN(v):
		return "—"
	case math.Abs(v) >= 1000:
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}
