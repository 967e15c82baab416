package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// resultIndex finds the result of a cell.
type resultIndex map[cellKey]Result

type cellKey struct {
	stat, dataset string
	eps           float64
	mech          string
}

func indexResults(results []Result) resultIndex {
	idx := resultIndex{}
	for _, r := range results {
		idx[cellKey{r.Statistic, r.Dataset, r.Epsilon, r.Mechanism}] = r
	}
	return idx
}

// get returns the usable result of a cell: run without error and with at
// least one answered trial.
func (idx resultIndex) get(stat, dataset string, eps float64, mech string) (Result, bool) {
	r, ok := idx[cellKey{stat, dataset, eps, mech}]
	return r, ok && r.Err == "" && !math.IsNaN(r.MeanAbs)
}

// WriteTables writes one Markdown table per statistic and ε: a row per
// dataset, a column per mechanism (in the order of mechs), cells
// "mean / p90" absolute error, and the winner by mean error. Median tables
// add the median |error| of preprocess and smooth (Cauchy noise: compare
// medians) and both tables of quantiles the papers' claims: preprocess vs
// smooth by median |error|, piecewise vs inverse by mean |error| within two
// standard errors. Cells with fewer trials than asked are marked † and
// listed under the table.
func WriteTables(w io.Writer, results []Result, mechs []string) {
	idx := indexResults(results)
	for _, stat := range uniq(results, func(r Result) string { return r.Statistic }) {
		of := filter(results, func(r Result) bool { return r.Statistic == stat })
		ms := slices.DeleteFunc(slices.Clone(mechs), func(m string) bool {
			return !slices.ContainsFunc(of, func(r Result) bool { return r.Mechanism == m })
		})
		for _, eps := range uniqFloat(of, func(r Result) float64 { return r.Epsilon }) {
			writeTable(w, idx, stat, eps, ms, uniq(of, func(r Result) string { return r.Dataset }))
		}
	}
}

func writeTable(w io.Writer, idx resultIndex, stat string, eps float64, mechs, datasets []string) {
	claims := claimsFor(stat, mechs)
	fmt.Fprintf(w, "\n#### %s, ε = %g: mean / 90th-percentile absolute error\n\n| dataset | n |", stat, eps)
	for _, m := range mechs {
		fmt.Fprintf(w, " %s |", m)
	}
	for _, c := range claims {
		fmt.Fprintf(w, " %s |", c.title)
	}
	fmt.Fprintf(w, " best |\n|---|--:|%s%s---|\n", strings.Repeat("--:|", len(mechs)), strings.Repeat(":-:|", len(claims)))
	var notes []string
	for _, d := range datasets {
		var n int
		var row strings.Builder
		best, bestErr := "", math.Inf(1)
		for _, m := range mechs {
			r, ok := idx[cellKey{stat, d, eps, m}]
			if ok {
				n = r.N
			}
			row.WriteString(" " + formatCell(r, ok, stat == "median" && (m == "smooth" || m == "preprocess")) + " |")
			if r.Note != "" {
				notes = append(notes, fmt.Sprintf("%s on %s: %s", m, d, r.Note))
			}
			if ok && r.Err == "" && m != RuleName && r.MeanAbs < bestErr {
				best, bestErr = m, r.MeanAbs
			}
		}
		fmt.Fprintf(w, "| %s | %d |%s", d, n, row.String())
		for _, c := range claims {
			fmt.Fprintf(w, " %s |", c.verdict(idx, stat, d, eps))
		}
		fmt.Fprintf(w, " %s |\n", best)
	}
	for _, n := range notes {
		fmt.Fprintf(w, "\n† %s", n)
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
	}
}

// formatCell renders one cell: "mean / p90", with the median |error| when
// withMedian, the ⊥ rate, and † for a capped cell.
func formatCell(r Result, ok, withMedian bool) string {
	switch {
	case !ok:
		return "–"
	case r.Err != "":
		return "error: " + strings.ReplaceAll(r.Err, "|", "/")
	case math.IsNaN(r.MeanAbs):
		return "⊥"
	}
	s := num(r.MeanAbs) + " / " + num(r.P90Abs)
	if withMedian {
		s += " (med " + num(r.MedianAbs) + ")"
	}
	if r.Refused > 0 {
		s += fmt.Sprintf(" (⊥ %.0f%%)", 100*r.Refused)
	}
	if r.Note != "" {
		s += " †"
	}
	return s
}

// claim is a comparison the papers make, checked per dataset.
type claim struct {
	title   string
	verdict func(idx resultIndex, stat, dataset string, eps float64) string
}

// claimsFor returns the claims that apply to a statistic's table.
func claimsFor(stat string, mechs []string) []claim {
	var cs []claim
	if stat == "median" && slices.Contains(mechs, "preprocess") && slices.Contains(mechs, "smooth") {
		cs = append(cs, claim{"preprocess vs smooth (median \\|err\\|)", func(idx resultIndex, stat, d string, eps float64) string {
			p, ok1 := idx.get(stat, d, eps, "preprocess")
			s, ok2 := idx.get(stat, d, eps, "smooth")
			if !ok1 || !ok2 {
				return "–"
			}
			return ratioVerdict(p.MedianAbs, s.MedianAbs, "preprocess", "smooth")
		}})
	}
	if slices.Contains(mechs, "piecewise") && slices.Contains(mechs, "inverse") {
		cs = append(cs, claim{"piecewise ≤ inverse (analytic E\\|err\\|)", func(idx resultIndex, stat, d string, eps float64) string {
			return dominanceVerdict(idx, stat, d, eps)
		}})
	}
	return cs
}

// ratioVerdict names the smaller of two errors and by what factor.
func ratioVerdict(a, b float64, an, bn string) string {
	switch {
	case a == b:
		return "tie"
	case a < b:
		if a == 0 {
			return an + " (exact)"
		}
		return fmt.Sprintf("%s ×%s", an, num(b/a))
	}
	if b == 0 {
		return bn + " (exact)"
	}
	return fmt.Sprintf("%s ×%s", bn, num(a/b))
}

// dominanceVerdict checks Theorem 2 of the piecewise paper (piecewise's
// error is stochastically smaller than inverse sensitivity's) on the
// analytic expected errors of the two (exact, no sampling noise): ✓ when
// piecewise's is at most inverse's, ✗ with the excess otherwise, and the
// relative difference. The theorem is for ρ = 0; integer columns use ρ = ½,
// where inverse's flat centre may win (mech/inverse.go).
func dominanceVerdict(idx resultIndex, stat, d string, eps float64) string {
	p, ok1 := idx.get(stat, d, eps, "piecewise")
	v, ok2 := idx.get(stat, d, eps, "inverse")
	if !ok1 || !ok2 || math.IsNaN(p.Expected) || math.IsNaN(v.Expected) {
		return "–"
	}
	diff := 100 * (p.Expected/v.Expected - 1)
	if p.Expected <= v.Expected*(1+1e-9) {
		return fmt.Sprintf("✓ %+.1f%%", diff)
	}
	return fmt.Sprintf("✗ %+.1f%%", diff)
}

// WriteQuotes writes the mean absolute error of every mechanism on stat at
// ε for the named datasets: one line per dataset.
func WriteQuotes(w io.Writer, results []Result, stat string, eps float64, datasets, mechs []string) {
	idx := indexResults(results)
	fmt.Fprintf(w, "\n| dataset (n) |")
	for _, m := range mechs {
		fmt.Fprintf(w, " %s |", m)
	}
	fmt.Fprintf(w, "\n|---|%s\n", strings.Repeat("--:|", len(mechs)))
	for _, d := range datasets {
		n := 0
		var row strings.Builder
		for _, m := range mechs {
			r, ok := idx.get(stat, d, eps, m)
			if !ok {
				row.WriteString(" – |")
				continue
			}
			n = r.N
			row.WriteString(" " + num(r.MeanAbs) + " |")
		}
		fmt.Fprintf(w, "| %s (%d) |%s\n", d, n, row.String())
	}
}

// WriteTimes writes the mean time per release of each mechanism by n (over
// statistics and ε).
func WriteTimes(w io.Writer, results []Result, mechs []string) {
	sizes := uniqFloat(results, func(r Result) float64 { return float64(r.N) })
	fmt.Fprintf(w, "\n| n |")
	for _, m := range mechs {
		fmt.Fprintf(w, " %s |", m)
	}
	fmt.Fprintf(w, "\n|--:|%s\n", strings.Repeat("--:|", len(mechs)))
	for _, n := range sizes {
		fmt.Fprintf(w, "| %d |", int(n))
		for _, m := range mechs {
			rs := filter(results, func(r Result) bool { return r.Mechanism == m && float64(r.N) == n && r.Err == "" })
			if len(rs) == 0 {
				fmt.Fprintf(w, " – |")
				continue
			}
			var total float64
			for _, r := range rs {
				total += r.Time.Seconds()
			}
			fmt.Fprintf(w, " %s |", duration(total/float64(len(rs))))
		}
		fmt.Fprintln(w)
	}
}

func num(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}

func duration(sec float64) string {
	switch {
	case sec < 1e-6:
		return fmt.Sprintf("%.0f ns", sec*1e9)
	case sec < 1e-3:
		return fmt.Sprintf("%.1f µs", sec*1e6)
	case sec < 1:
		return fmt.Sprintf("%.1f ms", sec*1e3)
	}
	return fmt.Sprintf("%.2f s", sec)
}

func filter(rs []Result, keep func(Result) bool) []Result {
	var out []Result
	for _, r := range rs {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

func uniq(rs []Result, key func(Result) string) []string {
	var out []string
	for _, r := range rs {
		if k := key(r); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

func uniqFloat(rs []Result, key func(Result) float64) []float64 {
	var out []float64
	for _, r := range rs {
		if k := key(r); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
