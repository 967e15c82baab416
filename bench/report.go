package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// WriteTables writes one Markdown table per statistic and ε: a row per
// dataset, a column per mechanism, cells "mean / p90" absolute error
// (with the ⊥ rate where a mechanism refused), and the time per release.
func WriteTables(w io.Writer, results []Result) {
	for _, stat := range uniq(results, func(r Result) string { return r.Statistic }) {
		of := filter(results, func(r Result) bool { return r.Statistic == stat })
		for _, eps := range uniqFloat(of, func(r Result) float64 { return r.Epsilon }) {
			rs := filter(of, func(r Result) bool { return r.Epsilon == eps })
			mechs := uniq(rs, func(r Result) string { return r.Mechanism })
			fmt.Fprintf(w, "\n#### %s, ε = %g: mean / 90th-percentile absolute error\n\n", stat, eps)
			fmt.Fprintf(w, "| dataset | n |")
			for _, m := range mechs {
				fmt.Fprintf(w, " %s |", m)
			}
			fmt.Fprintf(w, " best |\n|---|---|")
			for range mechs {
				fmt.Fprintf(w, "---|")
			}
			fmt.Fprintln(w, "---|")
			for _, d := range uniq(rs, func(r Result) string { return r.Dataset }) {
				row := filter(rs, func(r Result) bool { return r.Dataset == d })
				fmt.Fprintf(w, "| %s | %d |", d, row[0].N)
				best, bestErr := "", math.Inf(1)
				for _, m := range mechs {
					cell := filter(row, func(r Result) bool { return r.Mechanism == m })
					if len(cell) == 0 {
						fmt.Fprintf(w, " – |")
						continue
					}
					c := cell[0]
					switch {
					case c.Err != "":
						fmt.Fprintf(w, " error |")
					default:
						fmt.Fprintf(w, " %s / %s", num(c.MeanAbs), num(c.P90Abs))
						if c.Refused > 0 {
							fmt.Fprintf(w, " (⊥ %.0f%%)", 100*c.Refused)
						}
						fmt.Fprintf(w, " |")
						if c.MeanAbs < bestErr {
							best, bestErr = m, c.MeanAbs
						}
					}
				}
				fmt.Fprintf(w, " %s |\n", best)
			}
		}
	}
}

// WriteTimes writes the mean time per release of each mechanism by n.
func WriteTimes(w io.Writer, results []Result) {
	mechs := uniq(results, func(r Result) string { return r.Mechanism })
	sizes := uniqFloat(results, func(r Result) float64 { return float64(r.N) })
	fmt.Fprintf(w, "\n| n |")
	for _, m := range mechs {
		fmt.Fprintf(w, " %s |", m)
	}
	fmt.Fprintf(w, "\n|---|")
	for range mechs {
		fmt.Fprintf(w, "---|")
	}
	fmt.Fprintln(w)
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

// Plot draws, for one statistic, each mechanism's error relative to the
// bounds' width (geometric mean over the datasets) against ε, and saves it
// as a PNG.
func Plot(results []Result, stat, path string, width func(dataset string) float64) error {
	rs := filter(results, func(r Result) bool { return r.Statistic == stat && r.Err == "" && !math.IsNaN(r.MeanAbs) })
	p := plot.New()
	p.Title.Text = stat + ": mean absolute error / (U - L), geometric mean over datasets"
	p.X.Label.Text = "ε"
	p.Y.Label.Text = "relative error"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	var lines []any
	for _, m := range uniq(rs, func(r Result) string { return r.Mechanism }) {
		var pts plotter.XYs
		for _, eps := range uniqFloat(rs, func(r Result) float64 { return r.Epsilon }) {
			cell := filter(rs, func(r Result) bool { return r.Mechanism == m && r.Epsilon == eps })
			var logSum float64
			for _, c := range cell {
				logSum += math.Log(math.Max(c.MeanAbs/width(c.Dataset), 1e-12))
			}
			if len(cell) > 0 {
				pts = append(pts, plotter.XY{X: eps, Y: math.Exp(logSum / float64(len(cell)))})
			}
		}
		lines = append(lines, m, pts)
	}
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return err
	}
	p.Legend.Top = true
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
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
