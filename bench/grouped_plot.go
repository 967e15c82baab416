package bench

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"
)

// PlotGroupedErrors draws one panel per aggregate: each group's median
// absolute error against its size n, the proxy's and the baseline's, over
// every run of that aggregate at ε (log scales; a zero error is drawn at
// 0.1, the floor of the axis), and saves them as a PNG.
func PlotGroupedErrors(runs []GroupedErrors, epsilon float64, path string) error {
	var panels []*plot.Plot
	for _, agg := range []string{"COUNT(*)", "AVG(income)"} {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("GROUP BY educ and race: %s, ε = %g", agg, epsilon)
		p.X.Label.Text = "rows in the group (n)"
		p.Y.Label.Text = "median |error|"
		p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
		p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{}, plot.LogTicks{}
		var proxyPts, basePts plotter.XYs
		for _, r := range runs {
			if r.Aggregate != agg || r.Epsilon != epsilon {
				continue
			}
			for i, g := range r.Groups {
				if g.Count == 0 {
					continue
				}
				x := float64(g.Count)
				proxyPts = append(proxyPts, plotter.XY{X: x, Y: math.Max(Median(r.Proxy[i]), 0.1)})
				basePts = append(basePts, plotter.XY{X: x * 1.05, Y: math.Max(Median(r.Baseline[i]), 0.1)})
			}
		}
		for _, s := range []struct {
			name  string
			pts   plotter.XYs
			shape draw.GlyphDrawer
		}{{"proxy", proxyPts, draw.CircleGlyph{}}, {"independent Laplace", basePts, draw.CrossGlyph{}}} {
			sc, err := plotter.NewScatter(s.pts)
			if err != nil {
				return err
			}
			sc.GlyphStyle.Shape = s.shape
			sc.GlyphStyle.Radius = 3
			p.Add(sc)
			p.Legend.Add(s.name, sc)
		}
		p.Legend.Top = true
		panels = append(panels, p)
	}
	return savePanels(panels, path)
}
