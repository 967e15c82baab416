package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// Wins counts, for one statistic and ε, the datasets on which each
// mechanism has the smallest mean absolute error (an exact tie, such as
// two mechanisms that are always exact, credits both).
func Wins(results []Result, stat string, eps float64) map[string]int {
	idx := indexResults(results)
	rs := filter(results, func(r Result) bool { return r.Statistic == stat && r.Epsilon == eps })
	mechs := mechanismsOf(rs)
	wins := map[string]int{}
	for _, d := range uniq(rs, func(r Result) string { return r.Dataset }) {
		best := math.Inf(1)
		for _, m := range mechs {
			if r, ok := idx.get(stat, d, eps, m); ok {
				best = math.Min(best, r.MeanAbs)
			}
		}
		for _, m := range mechs {
			if r, ok := idx.get(stat, d, eps, m); ok && r.MeanAbs == best {
				wins[m]++
			}
		}
	}
	return wins
}

// WriteWins writes, per statistic and ε, how many datasets each mechanism
// wins (smallest mean |error|), most first, and how the recommended rule
// does (ruleScore).
func WriteWins(w io.Writer, results []Result, data []*Dataset) {
	byName := map[string]*Dataset{}
	for _, d := range data {
		byName[d.Name] = d
	}
	idx := indexResults(results)
	fmt.Fprintf(w, "\n| statistic | ε | datasets won (mean \\|error\\|; exact ties credit all) | rule: picks (n for ñ), pick wins on, rule's error / best (geo. mean, max) |\n|---|--:|---|---|\n")
	for _, s := range Statistics {
		for _, eps := range uniqFloat(results, func(r Result) float64 { return r.Epsilon }) {
			wins := Wins(results, s.Name, eps)
			if len(wins) == 0 {
				continue
			}
			names := make([]string, 0, len(wins))
			for m := range wins {
				names = append(names, m)
			}
			slices.SortFunc(names, func(a, b string) int {
				if wins[a] != wins[b] {
					return wins[b] - wins[a]
				}
				return strings.Compare(a, b)
			})
			var parts []string
			for _, m := range names {
				parts = append(parts, fmt.Sprintf("%s %d", m, wins[m]))
			}
			fmt.Fprintf(w, "| %s | %g | %s | %s |\n", s.Name, eps, strings.Join(parts, ", "), ruleScore(idx, results, s, eps, byName))
		}
	}
}

// ruleScore evaluates the recommended rule on every dataset of s at eps:
// the candidates Recommend picks (with the true n standing in for ñ), the
// datasets on which that pick is the winning mechanism, and the rule
// candidate's own error (noisy ñ, budget included) divided by the best
// mechanism's (geometric mean and maximum over datasets; errors below
// relativeFloor of the scale count as that floor, "exact").
func ruleScore(idx resultIndex, results []Result, s Statistic, eps float64, byName map[string]*Dataset) string {
	rs := filter(results, func(r Result) bool { return r.Statistic == s.Name && r.Epsilon == eps })
	mechs := mechanismsOf(rs)
	chosen := map[string]int{}
	won, total := 0, 0
	var logSum, worst float64
	for _, name := range uniq(rs, func(r Result) string { return r.Dataset }) {
		d := byName[name]
		pick := Recommend(s, d.Integer, d.Lower, d.Upper, eps)
		chosen[pick]++
		r, ok := idx.get(s.Name, name, eps, RuleName)
		if !ok {
			continue
		}
		best := math.Inf(1)
		for _, m := range mechs {
			if o, ok := idx.get(s.Name, name, eps, m); ok {
				best = math.Min(best, o.MeanAbs)
			}
		}
		total++
		floor := relativeFloor * Scale(s, d)
		ratio := math.Max(r.MeanAbs, floor) / math.Max(best, floor)
		if p, ok := idx.get(s.Name, name, eps, pick); ok && p.MeanAbs == best {
			won++
		}
		logSum += math.Log(ratio)
		worst = math.Max(worst, ratio)
	}
	var picks []string
	for m, k := range chosen {
		picks = append(picks, fmt.Sprintf("%s ×%d", m, k))
	}
	slices.Sort(picks)
	if total == 0 {
		return strings.Join(picks, ", ")
	}
	return fmt.Sprintf("%s: wins %d/%d, ×%s, max ×%s", strings.Join(picks, ", "), won, total, num(math.Exp(logSum/float64(total))), num(worst))
}

// mechanismsOf returns the mechanisms of rs, without the rule candidate.
func mechanismsOf(rs []Result) []string {
	return slices.DeleteFunc(uniq(rs, func(r Result) string { return r.Mechanism }), func(m string) bool { return m == RuleName })
}

// WriteClaims summarises the papers' claims over all datasets and ε,
// separately on integer columns (ρ = ½ for piecewise and inverse) and on
// real-valued ones (ρ = 2^−30·(U−L) ≈ 0, Theorem 2's setting):
// preprocess beats smooth on the median (by median |error|: Cauchy noise),
// and piecewise ≤ inverse on every quantile (analytic expected |error|).
func WriteClaims(w io.Writer, results []Result, data []*Dataset) {
	idx := indexResults(results)
	fmt.Fprintf(w, "\n| claim | statistic | ε | integer columns (ρ = ½) | real-valued columns (ρ ≈ 0) |\n|---|---|--:|---|---|\n")
	for _, s := range Statistics {
		if s.Kind != QuantileStat {
			continue
		}
		for _, eps := range uniqFloat(results, func(r Result) float64 { return r.Epsilon }) {
			if s.Name == "median" {
				fmt.Fprintf(w, "| preprocess beats smooth (median \\|err\\|) | %s | %g |", s.Name, eps)
				for _, integer := range []bool{true, false} {
					var holds []string
					total := 0
					for _, d := range data {
						p, ok1 := idx.get(s.Name, d.Name, eps, "preprocess")
						sm, ok2 := idx.get(s.Name, d.Name, eps, "smooth")
						if !ok1 || !ok2 || d.Integer != integer {
							continue
						}
						total++
						if p.MedianAbs < sm.MedianAbs {
							holds = append(holds, d.Name)
						}
					}
					fmt.Fprintf(w, " %d of %d%s |", len(holds), total, listed(holds))
				}
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "| piecewise ≤ inverse (analytic E\\|err\\|) | %s | %g |", s.Name, eps)
			for _, integer := range []bool{true, false} {
				holds, total, worst := 0, 0, 0.0
				for _, d := range data {
					p, ok1 := idx.get(s.Name, d.Name, eps, "piecewise")
					v, ok2 := idx.get(s.Name, d.Name, eps, "inverse")
					if !ok1 || !ok2 || d.Integer != integer || math.IsNaN(p.Expected) || math.IsNaN(v.Expected) {
						continue
					}
					total++
					if p.Expected <= v.Expected*(1+1e-9) {
						holds++
					} else {
						worst = math.Max(worst, p.Expected/v.Expected-1)
					}
				}
				line := fmt.Sprintf("%d of %d", holds, total)
				if holds < total {
					line += fmt.Sprintf(" (worst: piecewise +%s%%)", num(100*worst))
				}
				fmt.Fprintf(w, " %s |", line)
			}
			fmt.Fprintln(w)
		}
	}
}

// listed returns ": a, b" for a non-empty list.
func listed(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return ": " + strings.Join(names, ", ")
}
