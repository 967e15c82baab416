package main

import (
	"fmt"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// plotGrouped draws, for each grouping, the median per-group error (%) of
// each aggregate against the bounds, and saves the panels side by side.
func plotGrouped(cells [][][]groupedCell, path string) error {
	labels := make([]string, len(groupedConfigs))
	for i, c := range groupedConfigs {
		labels[i] = fmt.Sprintf("k=%d,g=%d", c.k, c.g)
		if c.k == 0 {
			labels[i] = "row-level"
		}
	}
	var panels []*plot.Plot
	for gi, gr := range groupings {
		p := plot.New()
		p.Title.Text = "GROUP BY " + gr.label + ", ε = 1"
		p.Y.Label.Text = "median |error| per group (%)"
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{}
		p.NominalX(labels...)
		var lines []any
		for ai, agg := range groupedAggregates {
			pts := make(plotter.XYs, len(groupedConfigs))
			for ci := range groupedConfigs {
				pts[ci] = plotter.XY{X: float64(ci), Y: max(100*cells[gi][ci][ai].median(), 0.01)}
			}
			lines = append(lines, agg, pts)
		}
		if err := plotutil.AddLinePoints(p, lines...); err != nil {
			return err
		}
		p.Legend.Top = true
		panels = append(panels, p)
	}
	const w, h = 7 * vg.Inch, 4.5 * vg.Inch
	img := vgimg.New(w*vg.Length(len(panels)), h)
	tiles := draw.Tiles{Rows: 1, Cols: len(panels), PadX: vg.Inch / 4, PadTop: vg.Inch / 8, PadBottom: vg.Inch / 8, PadLeft: vg.Inch / 8, PadRight: vg.Inch / 8}
	canvases := plot.Align([][]*plot.Plot{panels}, tiles, draw.New(img))
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
