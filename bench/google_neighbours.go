package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
)

// NeighbourSizes are the numbers of rows added to or removed from a cell's
// rows to build its neighbours in GoogleNeighbourCheck.
var NeighbourSizes = []int{1, 2, 4, 8, 16, 32}

// NeighbourRow is one neighbour of an anchors quantile cell: the cell's
// rows with Rows rows of value Value added (Rows > 0) or removed (Rows <
// 0), measured with both arms against the neighbour's own truth.
type NeighbourRow struct {
	Cell  GoogleRow
	Rows  int
	Value float64
	Truth float64
	// Auto and Google are the two arms' results on the neighbour's rows.
	Auto, Google Result
	// Bound is the least mean |error| on the neighbour's rows of any
	// ε-DP mechanism that meets the target on the cell's own rows (see
	// TargetBound).
	Bound float64
}

// TargetBound is a lower bound on the mean |error| on rows D' of any ε-DP
// mechanism M whose mean |error| on rows D, at distance k rows from D', is
// at most e. Group privacy gives P_{D'}(S) ≥ e^{−kε}·P_D(S) for every set
// of outputs S, hence E_{D'} f(M) ≥ e^{−kε}·E_D f(M) for every f ≥ 0; with
// f(m) = |m − t'| and the triangle inequality |m − t'| ≥ |t − t'| − |m − t|,
//
//	E_{D'}|M − t'| ≥ e^{−kε}·(|t − t'| − E_D|M − t|) ≥ e^{−kε}·(|t − t'| − e).
//
// It is 0 when e ≥ |t − t'|.
func TargetBound(t, tNeighbour float64, k int, eps, e float64) float64 {
	return math.Exp(-float64(k)*eps) * math.Max(0, math.Abs(t-tNeighbour)-e)
}

// Neighbour is a dataset with Rows rows of Value added (Rows > 0) or
// removed (Rows < 0).
type Neighbour struct {
	Data  *Dataset
	Rows  int
	Value float64
}

// QuantileNeighbours returns the neighbours of d for quantile q: for each
// size j in sizes and each of the two order statistics PERCENTILE_CONT
// interpolates between (one value when they tie), d with j rows of that
// value added, and d with j rows of it removed where it has j. Each
// neighbour's name is d's with the change appended ("+4@3956").
func QuantileNeighbours(d *Dataset, q float64, sizes []int) []Neighbour {
	x := d.Values
	i := int(math.Floor(q * float64(len(x)-1)))
	values := []float64{x[i]}
	if i+1 < len(x) && x[i+1] != x[i] {
		values = append(values, x[i+1])
	}
	var out []Neighbour
	for _, v := range values {
		first, _ := slices.BinarySearch(x, v)
		end := first
		for end < len(x) && x[end] == v {
			end++
		}
		for _, j := range sizes {
			for _, sign := range []int{-1, 1} {
				if sign < 0 && j > end-first {
					continue
				}
				var rows []float64
				if sign < 0 {
					rows = slices.Delete(slices.Clone(x), first, first+j)
				} else {
					rows = slices.Insert(slices.Clone(x), first, slices.Repeat([]float64{v}, j)...)
				}
				out = append(out, Neighbour{Rows: sign * j, Value: v, Data: &Dataset{Name: fmt.Sprintf("%s%+d@%g", d.Name, sign*j, v),
					Values: rows, Lower: d.Lower, Upper: d.Upper, Integer: d.Integer}})
			}
		}
	}
	return out
}

// GoogleNeighbourCheck measures both arms on the neighbours
// (QuantileNeighbours with NeighbourSizes) of every quantile cell whose
// ratio is over its target. It asks whether such a cell's loss is one of
// accuracy or of position: an arm biased towards the cell's truth wins on
// the cell and loses on the neighbours where the truth moves the other
// way, which the two arms' worst errors over the neighbourhood show, and
// TargetBound says what meeting the target on the cell itself costs on
// each neighbour, for any mechanism.
func GoogleNeighbourCheck(rows []GoogleRow, data []*Dataset, trials int, seed uint64, workers int) []NeighbourRow {
	byName, stats := DatasetsByName(data), StatisticsByName()
	var out []NeighbourRow
	for _, r := range rows {
		s := stats[r.Anchor.Statistic]
		d := byName[r.Auto.Dataset]
		if s.Kind != QuantileStat || d == nil || !(r.Ratio > GoogleTargets[s.Name]) {
			continue
		}
		neighbours := QuantileNeighbours(d, s.Quantile, NeighbourSizes)
		var sets []*Dataset
		for _, nb := range neighbours {
			sets = append(sets, nb.Data)
		}
		results := Run(Config{Statistics: []Statistic{s}, Data: sets, Epsilons: []float64{r.Anchor.Epsilon},
			Candidates: []Candidate{RuleCandidate(), GoogleCandidate()}, Trials: trials, Seed: seed, Workers: workers})
		idx := indexResults(results)
		target := GoogleTargets[s.Name] * r.Google.MeanAbs
		for _, nb := range neighbours {
			auto, ok1 := idx.get(s.Name, nb.Data.Name, r.Anchor.Epsilon, RuleName)
			g, ok2 := idx.get(s.Name, nb.Data.Name, r.Anchor.Epsilon, GoogleName)
			if !ok1 || !ok2 {
				continue
			}
			t := Truth(s, nb.Data)
			out = append(out, NeighbourRow{Cell: r, Rows: nb.Rows, Value: nb.Value, Truth: t, Auto: auto, Google: g,
				Bound: TargetBound(r.Anchor.Truth, t, max(nb.Rows, -nb.Rows), r.Anchor.Epsilon, target)})
		}
	}
	return out
}

// WriteNeighbourReport writes the neighbourhood section: per cell the two
// arms' worst error over the cell and its neighbours, and the neighbour
// where meeting the target on the cell costs most (TargetBound), then
// each cell's neighbours in full.
func WriteNeighbourReport(w io.Writer, rows []NeighbourRow, trials int) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## Quantile cells over target, and their neighbours\n\n")
	fmt.Fprintf(w, "Each quantile cell over its target measured again (%d trials) on its neighbours: its rows with j ∈ %v rows added or removed at the value(s) PERCENTILE_CONT interpolates between, each against its own truth. ", trials, NeighbourSizes)
	fmt.Fprintf(w, "`worst` is an arm's largest mean |error| over the cell and its neighbours. `bound` is the least mean |error| on a neighbour of *any* ε-DP mechanism that meets the target on the cell itself (bench.TargetBound: e^{−jε}·(|t − t'| − target·google), from group privacy and the triangle inequality); `bound > google` there means meeting the target on the cell forces a larger error than Google's own on that neighbour.\n\n")
	fmt.Fprintf(w, "| cell | ε | auto / google on the cell | worst auto | worst google | worst ratio | largest bound (neighbour: bound, auto, google) |\n|---|--:|---|--:|--:|--:|---|\n")
	type key struct {
		ds  string
		eps float64
		st  string
	}
	var order []key
	groups := map[key][]NeighbourRow{}
	for _, r := range rows {
		k := key{r.Cell.Auto.Dataset, r.Cell.Anchor.Epsilon, r.Cell.Anchor.Statistic}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	for _, k := range order {
		g := groups[k]
		cell := g[0].Cell
		worstAuto, worstGoogle := cell.Auto.MeanAbs, cell.Google.MeanAbs
		strongest := g[0]
		for _, r := range g {
			worstAuto, worstGoogle = math.Max(worstAuto, r.Auto.MeanAbs), math.Max(worstGoogle, r.Google.MeanAbs)
			if r.Bound > strongest.Bound {
				strongest = r
			}
		}
		fmt.Fprintf(w, "| %s %s | %g | %s / %s = %s | %s | %s | %s | %+d@%g: %s, %s, %s |\n", k.st, k.ds, k.eps,
			num(cell.Auto.MeanAbs), num(cell.Google.MeanAbs), num(cell.Ratio), num(worstAuto), num(worstGoogle), num(worstAuto/worstGoogle),
			strongest.Rows, strongest.Value, num(strongest.Bound), num(strongest.Auto.MeanAbs), num(strongest.Google.MeanAbs))
	}
	for _, k := range order {
		g := groups[k]
		fmt.Fprintf(w, "\n### %s %s ε=%g (truth %.6g)\n\n| rows | truth | auto | google | ratio | bound |\n|---|--:|--:|--:|--:|--:|\n", k.st, k.ds, k.eps, g[0].Cell.Anchor.Truth)
		for _, r := range g {
			fmt.Fprintf(w, "| %+d@%g | %.6g | %s | %s | %s | %s |\n", r.Rows, r.Value, r.Truth, num(r.Auto.MeanAbs), num(r.Google.MeanAbs),
				num(r.Auto.MeanAbs/r.Google.MeanAbs), num(r.Bound))
		}
	}
}
