package bench

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Scale returns the natural error scale of a statistic on a dataset: the
// width U−L of its bounds, or ((U−L)/2)², the largest variance, for the
// variance. Dividing by it makes errors comparable across datasets.
func Scale(s Statistic, d *Dataset) float64 {
	w := d.Upper - d.Lower
	if s.Kind == VarianceStat {
		return w * w / 4
	}
	return w
}

// relativeFloor is the smallest relative error the plots and the rule's
// ratios distinguish: below 10^-6 of the scale a release counts as exact.
const relativeFloor = 1e-6

// PlotByEpsilon draws, for statistic s, each mechanism's mean absolute
// error divided by Scale (geometric mean over datasets, floored at
// relativeFloor) against ε, in two panels: integer columns whose grid is
// unit bins (the planner's exponential mechanism is then exact on ties),
// and the other columns. Only datasets on which every plotted mechanism
// has a result at every ε enter the means. It saves a PNG at path.
func PlotByEpsilon(results []Result, s Statistic, data []*Dataset, mechs []string, path string) error {
	rs := filter(results, func(r Result) bool { return r.Statistic == s.Name })
	ms := slices.DeleteFunc(slices.Clone(mechs), func(m string) bool {
		return !slices.ContainsFunc(rs, func(r Result) bool { return r.Mechanism == m })
	})
	common := commonDatasets(rs, ms)
	epsilons := uniqFloat(rs, func(r Result) float64 { return r.Epsilon })
	idx := indexResults(rs)
	var panels []*plot.Plot
	for _, unitBins := range []bool{true, false} {
		var ds []*Dataset
		for _, d := range data {
			if _, _, _, unit := grid(d); unit == unitBins && slices.Contains(common, d.Name) {
				ds = append(ds, d)
			}
		}
		p := plot.New()
		kind := "other columns"
		if unitBins {
			kind = "integer columns, unit bins"
		}
		p.Title.Text = fmt.Sprintf("%s, %s (%d datasets)", s.Name, kind, len(ds))
		p.X.Label.Text = "ε"
		p.Y.Label.Text = "mean |error| / scale (geometric mean)"
		var lines []any
		for _, m := range ms {
			var pts plotter.XYs
			for _, eps := range epsilons {
				var logSum float64
				for _, d := range ds {
					r, _ := idx.get(s.Name, d.Name, eps, m)
					logSum += math.Log(math.Max(r.MeanAbs/Scale(s, d), relativeFloor))
				}
				if len(ds) > 0 {
					pts = append(pts, plotter.XY{X: eps, Y: math.Exp(logSum / float64(len(ds)))})
				}
			}
			lines = append(lines, m, pts)
		}
		if err := drawLines(p, lines, epsilons); err != nil {
			return err
		}
		panels = append(panels, p)
	}
	return savePanels(panels, path)
}

// PlotByN draws, for one statistic and ε, each mechanism's mean absolute
// error against n on the datasets named prefix + "-n<size>" (one synthetic
// distribution), and saves it as a PNG.
func PlotByN(results []Result, stat string, eps float64, prefix string, mechs []string, path string) error {
	rs := filter(results, func(r Result) bool {
		var n int
		_, err := fmt.Sscanf(r.Dataset, prefix+"-n%d", &n)
		return r.Statistic == stat && r.Epsilon == eps && err == nil && r.Err == "" && !math.IsNaN(r.MeanAbs)
	})
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s of %s data, ε = %g (errors below 10^-9 drawn at 10^-9)", stat, prefix, eps)
	p.X.Label.Text = "n"
	p.Y.Label.Text = "mean |error|"
	var lines []any
	for _, m := range mechs {
		var pts plotter.XYs
		for _, r := range rs {
			if r.Mechanism == m {
				pts = append(pts, plotter.XY{X: float64(r.N), Y: math.Max(r.MeanAbs, 1e-9)})
			}
		}
		if len(pts) > 0 {
			slices.SortFunc(pts, func(a, b plotter.XY) int { return int(a.X - b.X) })
			lines = append(lines, m, pts)
		}
	}
	sizes := uniqFloat(rs, func(r Result) float64 { return float64(r.N) })
	if err := drawLines(p, lines, sizes); err != nil {
		return err
	}
	return savePanels([]*plot.Plot{p}, path)
}

// commonDatasets returns the datasets on which every mechanism of mechs
// has a usable result at every ε.
func commonDatasets(rs []Result, mechs []string) []string {
	if len(rs) == 0 {
		return nil
	}
	idx := indexResults(rs)
	epsilons := uniqFloat(rs, func(r Result) float64 { return r.Epsilon })
	var out []string
	for _, d := range uniq(rs, func(r Result) string { return r.Dataset }) {
		all := true
		for _, m := range mechs {
			for _, eps := range epsilons {
				if _, ok := idx.get(rs[0].Statistic, d, eps, m); !ok {
					all = false
				}
			}
		}
		if all {
			out = append(out, d)
		}
	}
	return out
}

// drawLines draws lines (name, points pairs) on log-log axes with ticks at
// xs on the x axis and at the powers of ten on the y axis, leaving two
// decades free at the bottom for the legend (bottom left: errors fall as ε
// and n grow, so lines run from top left to bottom right).
func drawLines(p *plot.Plot, lines []any, xs []float64) error {
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.Add(plotter.NewGrid())
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return err
	}
	var xt []plot.Tick
	for _, x := range xs {
		xt = append(xt, plot.Tick{Value: x, Label: strconv.FormatFloat(x, 'g', -1, 64)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(xt)
	if len(xs) > 0 {
		p.X.Min, p.X.Max = xs[0]/1.2, xs[len(xs)-1]*1.2
	}
	if !(p.Y.Min > 0) {
		p.Y.Min = 1e-9
	}
	p.Y.Min = math.Pow(10, math.Floor(math.Log10(p.Y.Min))-2)
	p.Y.Max = math.Pow(10, math.Ceil(math.Log10(math.Max(p.Y.Max, p.Y.Min*10))))
	var yt []plot.Tick
	for e := math.Log10(p.Y.Min); e <= math.Log10(p.Y.Max)+1e-9; e++ {
		yt = append(yt, plot.Tick{Value: math.Pow(10, e), Label: fmt.Sprintf("1e%d", int(math.Round(e)))})
	}
	p.Y.Tick.Marker = plot.ConstantTicks(yt)
	p.Legend.Top, p.Legend.Left = false, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Millimeter, vg.Millimeter
	return nil
}

// savePanels saves plots side by side, each 7.5×5.5 inches, as a PNG.
func savePanels(panels []*plot.Plot, path string) error {
	const w, h = 7.5 * vg.Inch, 5.5 * vg.Inch
	img := vgimg.New(w*vg.Length(len(panels)), h)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: len(panels), PadX: vg.Inch / 4, PadTop: vg.Inch / 8, PadBottom: vg.Inch / 8, PadLeft: vg.Inch / 8, PadRight: vg.Inch / 8}
	canvases := plot.Align([][]*plot.Plot{panels}, tiles, dc)
	for j, p := range panels {
		p.Draw(canvases[0][j])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
