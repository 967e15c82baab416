package bench

import (
	"fmt"
	"io"
	"math"
)

// ruleAlternative is a default rule the report weighs against Recommend:
// a choice of candidate from public facts (n stands in for ñ).
type ruleAlternative struct {
	name string
	kind StatKind
	pick func(s Statistic, eps float64, d *Dataset) string
}

// unitGrid reports whether the planner's grid for d is unit bins.
func unitGrid(d *Dataset) bool {
	_, _, _, unit := grid(d)
	return unit
}

// recommended is Recommend as an alternative, for the comparison.
func recommended(s Statistic, eps float64, d *Dataset) string {
	return Recommend(s, d.Integer, d.Lower, d.Upper, eps)
}

// always returns an alternative that always picks m.
func always(m string) func(Statistic, float64, *Dataset) string {
	return func(Statistic, float64, *Dataset) string { return m }
}

// ruleAlternatives are the rules considered, per kind of statistic.
var ruleAlternatives = []ruleAlternative{
	{"recommended: permute-flip on unit-bin integer columns, else piecewise (the median with ε ≥ 2: smooth)", QuantileStat, recommended},
	{"exponential on unit-bin integer columns, else piecewise (the median with ε ≥ 2: smooth; the rule before permute-flip)", QuantileStat, func(s Statistic, eps float64, d *Dataset) string {
		if unitGrid(d) {
			return "exponential"
		}
		return recommended(s, eps, d)
	}},
	{"exponential on unit-bin integer columns, else piecewise (the rule before the smooth median)", QuantileStat, func(_ Statistic, _ float64, d *Dataset) string {
		if unitGrid(d) {
			return "exponential"
		}
		return "piecewise"
	}},
	{"exponential always", QuantileStat, always("exponential")},
	{"piecewise always", QuantileStat, always("piecewise")},
	{"exponential on unit-bin integer columns, else inverse", QuantileStat, func(_ Statistic, _ float64, d *Dataset) string {
		if unitGrid(d) {
			return "exponential"
		}
		return "inverse"
	}},
	{"exponential on unit-bin integer columns, else exponential-window", QuantileStat, func(_ Statistic, _ float64, d *Dataset) string {
		if unitGrid(d) {
			return "exponential"
		}
		return "exponential-window"
	}},
	{"recommended: edges (the sums from both bounds)", MeanStat, recommended},
	{"preprocess if ñ·ε ≥ 100, else laplace (the rule before issue 15)", MeanStat, func(_ Statistic, eps float64, d *Dataset) string {
		if float64(len(d.Values))*eps >= 100 {
			return "preprocess"
		}
		return "laplace"
	}},
	{"preprocess always", MeanStat, always("preprocess")},
	{"laplace always", MeanStat, always("laplace")},
	{"recommended: edges (the squares from both bounds)", VarianceStat, recommended},
	{"piecewise always (the rule before issue 15)", VarianceStat, always("piecewise")},
	{"preprocess if ñ·ε ≥ 100, else piecewise", VarianceStat, func(_ Statistic, eps float64, d *Dataset) string {
		if float64(len(d.Values))*eps >= 100 {
			return "preprocess"
		}
		return "piecewise"
	}},
	{"preprocess always", VarianceStat, always("preprocess")},
	{"laplace always", VarianceStat, always("laplace")},
}

// WriteRuleAlternatives writes, for each rule considered, over every
// statistic of its kind, dataset and ε: the cells on which its pick has
// the smallest mean |error|, and the pick's error divided by the best
// mechanism's (geometric mean and maximum; errors below relativeFloor of
// the scale count as that floor). It uses the picked mechanisms' cells.
func WriteRuleAlternatives(w io.Writer, results []Result, data []*Dataset) {
	idx := indexResults(results)
	epsilons := uniqFloat(results, func(r Result) float64 { return r.Epsilon })
	mechs := mechanismsOf(results)
	fmt.Fprintf(w, "\n| statistics | rule | best on | error / best: geo. mean | max |\n|---|---|--:|--:|--:|\n")
	for _, alt := range ruleAlternatives {
		won, total := 0, 0
		var logSum, worst float64
		var names string
		for _, s := range Statistics {
			if s.Kind != alt.kind {
				continue
			}
			names += "/" + s.Name
			for _, eps := range epsilons {
				for _, d := range data {
					r, ok := idx.get(s.Name, d.Name, eps, alt.pick(s, eps, d))
					if !ok {
						continue
					}
					best := math.Inf(1)
					for _, m := range mechs {
						if o, ok := idx.get(s.Name, d.Name, eps, m); ok {
							best = math.Min(best, o.MeanAbs)
						}
					}
					floor := relativeFloor * Scale(s, d)
					ratio := math.Max(r.MeanAbs, floor) / math.Max(best, floor)
					total++
					if r.MeanAbs == best {
						won++
					}
					logSum += math.Log(ratio)
					worst = math.Max(worst, ratio)
				}
			}
		}
		if total > 0 {
			fmt.Fprintf(w, "| %s | %s | %d/%d | ×%s | ×%s |\n", names[1:], alt.name, won, total, num(math.Exp(logSum/float64(total))), num(worst))
		}
	}
}
