package planner

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/ptr"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// Propose-Test-Release (Dwork and Lei): the private scale IQR(col), the
// median with SET @dp_mechanism = 'ptr', the trimmed mean with 'trimmed'
// (and SET @dp_trim = α), and REGR_SLOPE/REGR_INTERCEPT. Each release is
// (ε, δ)-DP under add/remove one row: ε·CountShare pays for the noisy count
// ñ that stands in for the private n in the mechanism's constants, the rest
// and all of the release's δ go to the mechanism (mech derives each). A
// mechanism may answer ⊥ ("No Reply") when the data are too unstable: the
// value is NULL, a warning says why, and the budget is charged in full
// (DESIGN.md §2).

// ptrRefusal is the note of a ⊥ answer.
const ptrRefusal = "No Reply: the data are too unstable near this statistic to answer privately at this epsilon and delta (Propose-Test-Release); the budget is charged. A larger epsilon, or a more stable statistic, may answer."

// ptrColumn is what the PTR column mechanisms have in common.
type ptrColumn interface {
	Fetch() ptr.Fetch
	Release(src noise.Source, d ptr.Data) (float64, bool, error)
}

// ptrMechanism is "ptr": IQR, the median (its own scale from S), and the
// R_S regression coefficients.
type ptrMechanism struct{}

func (ptrMechanism) Name() string     { return "ptr" }
func (ptrMechanism) NeedsDelta() bool { return true }

func (ptrMechanism) Guarantee() string {
	return fmt.Sprintf("(ε, δ)-DP: Propose-Test-Release, answers NULL (No Reply) on unstable data; %g of ε for the noisy count", CountShare)
}

func (ptrMechanism) Supports(s Statistic) bool {
	return s.Kind == StatIQR || s.Kind == StatRegression || (s.Kind == StatQuantile && s.Quantile == 0.5)
}

func (ptrMechanism) Terms(r *Release) []sqlrewrite.SummaryTerm {
	return []sqlrewrite.SummaryTerm{countTerm(r)}
}

func (ptrMechanism) Histogram(*Release) *sqlrewrite.Histogram { return nil }

func (ptrMechanism) Reads(r *Release) string {
	if r.Stat.Kind == StatRegression {
		return "the non-NULL count, then every row's clamped (y, x): the regression needs each row"
	}
	return "the non-NULL count, then windows of order statistics around the quartiles or the median"
}

// params returns the PTR parameters of r and the noisy count that sets them.
func ptrParams(src noise.Source, r *Release, n int64) (ptr.Params, error) {
	count, rest, err := releaseNoisyCount(src, r.Epsilon, n)
	if err != nil {
		return ptr.Params{}, err
	}
	return ptr.Params{Epsilon: rest, Delta: r.Delta, Size: count.Value(), Bounds: columnBounds(r)}, nil
}

func (ptrMechanism) Start(src noise.Source, r *Release, terms []float64, _ []int64) (Step, error) {
	n := int64(math.Round(terms[0]))
	p, err := ptrParams(src, r, n)
	if err != nil {
		return nil, err
	}
	switch r.Stat.Kind {
	case StatIQR:
		m, err := ptr.NewScale(p)
		if err != nil {
			return nil, err
		}
		return ptrColumnStep(r, m, n), nil
	case StatQuantile:
		m, err := ptr.NewMedian(p, 0)
		if err != nil {
			return nil, err
		}
		return ptrColumnStep(r, m, n), nil
	case StatRegression:
		return ptrRegressionStep(r, p)
	}
	return nil, fmt.Errorf("ptr cannot release %s", r.Stat)
}

// ptrColumnStep fetches the windows (and the sum between them) a PTR column
// mechanism asks for, resolved with the true n, then releases.
func ptrColumnStep(r *Release, m ptrColumn, n int64) Step {
	f := m.Fetch()
	ranks := make([]mech.RankRange, len(f.Windows))
	var requests []sqlrewrite.Fetch
	for i, spec := range f.Windows {
		ranks[i] = spec.Ranks(n)
		if ranks[i].Len() > 0 {
			requests = append(requests, rankWindow(r, ranks[i]))
		}
	}
	between := mech.RankRange{First: 1, Last: 0}
	if f.SumBetween && len(ranks) == 2 {
		between = mech.RankRange{First: ranks[0].Last + 1, Last: ranks[1].First - 1}
		if between.Len() > 0 {
			requests = append(requests, sqlrewrite.Fetch{GridSums: &sqlrewrite.GridSums{
				Column: r.Stat.Column.Source, Lower: f.Grid.Lower, Upper: f.Grid.Upper, Unit: f.Grid.Unit, SumOnly: true,
				Ranks: &sqlrewrite.RankSlice{Offset: between.First - 1, Limit: between.Len()},
			}})
		}
	}
	return &once{requests: requests, finish: func(_ context.Context, src noise.Source, fetched []Fetched) (Estimate, error) {
		var d ptr.Data
		k := 0
		for _, rr := range ranks {
			w := mech.SortedWindow{Count: n, First: rr.First}
			if rr.Len() > 0 {
				w.Values = fetched[k].Values
				k++
			}
			d.Windows = append(d.Windows, w)
		}
		if between.Len() > 0 {
			g := fetched[k].Grid
			if g == nil || g.Count != between.Len() {
				return Estimate{}, fmt.Errorf("ptr: grid sums of ranks %d to %d not fetched", between.First, between.Last)
			}
			d.SumBetween = g.Sum
		}
		v, refused, err := m.Release(src, d)
		return ptrEstimate(v, refused), err
	}}
}

func ptrEstimate(v float64, refused bool) Estimate {
	if refused {
		return Estimate{Refused: true, Note: ptrRefusal}
	}
	return Estimate{Value: v}
}

// ptrRegressionStep runs R_S on every (y, x) row. The coefficient bounds
// are public, from the columns' bounds: |slope| ≤ 10·(Uy−Ly)/(Ux−Lx), and
// the intercept within the y bounds widened by that slope times max|x|.
// It runs R_S for the requested coefficient.
func ptrRegressionStep(r *Release, p ptr.Params) (Step, error) {
	y, x := r.Stat.Column, r.Stat.Column2
	ly, uy, _ := y.Bounds()
	lx, ux, _ := x.Bounds()
	slope := 10 * (uy - ly) / (ux - lx)
	reach := slope * math.Max(math.Abs(lx), math.Abs(ux))
	params := ptr.RegressionParams{
		Epsilon: p.Epsilon, Delta: p.Delta, Size: p.Size,
		Coefficients: []mech.Bounds{{Lower: ly - reach, Upper: uy + reach}, {Lower: -slope, Upper: slope}},
	}
	m, err := ptr.NewShortcutRegression(params, []int{r.Stat.Coefficient})
	if err != nil {
		return nil, err
	}
	request := sqlrewrite.Fetch{Pairs: &sqlrewrite.Pairs{Y: y.Source, X: x.Source, YLower: ly, YUpper: uy, XLower: lx, XUpper: ux}}
	return &once{requests: []sqlrewrite.Fetch{request}, finish: func(ctx context.Context, src noise.Source, fetched []Fetched) (Estimate, error) {
		xs := make([]float64, len(fetched[0].Pairs))
		ys := make([]float64, len(fetched[0].Pairs))
		for i, pr := range fetched[0].Pairs {
			ys[i], xs[i] = pr[0], pr[1]
		}
		rows, err := ptr.SimpleRegressionRows(xs, ys)
		if err != nil {
			return Estimate{}, err
		}
		beta, refused, err := m.Release(ctx, src, rows)
		if err != nil || refused {
			return ptrEstimate(0, refused), err
		}
		return Estimate{Value: beta[0]}, nil
	}}, nil
}

// trimmedMechanism is "trimmed": the α-trimmed mean by Propose-Test-Release
// (AVG with SET @dp_mechanism = 'trimmed'; α from SET @dp_trim, default
// DefaultTrim).
type trimmedMechanism struct{}

// DefaultTrim is the trimmed mean's total trimmed fraction α without SET @dp_trim.
const DefaultTrim = 0.1

func (trimmedMechanism) Name() string                             { return "trimmed" }
func (trimmedMechanism) NeedsDelta() bool                         { return true }
func (trimmedMechanism) Supports(s Statistic) bool                { return s.Kind == StatMean }
func (trimmedMechanism) Histogram(*Release) *sqlrewrite.Histogram { return nil }

func (trimmedMechanism) Guarantee() string {
	return "(ε, δ)-DP: Propose-Test-Release trimmed mean, answers NULL (No Reply) on unstable data"
}

func (trimmedMechanism) Terms(r *Release) []sqlrewrite.SummaryTerm {
	return []sqlrewrite.SummaryTerm{countTerm(r)}
}

func (trimmedMechanism) Reads(r *Release) string {
	return fmt.Sprintf("the non-NULL count, windows around the %g and %g quantiles, and the sum between them computed by the database", trim(r)/2, 1-trim(r)/2)
}

func trim(r *Release) float64 {
	if r.Trim > 0 {
		return r.Trim
	}
	return DefaultTrim
}

func (trimmedMechanism) Start(src noise.Source, r *Release, terms []float64, _ []int64) (Step, error) {
	n := int64(math.Round(terms[0]))
	p, err := ptrParams(src, r, n)
	if err != nil {
		return nil, err
	}
	m, err := ptr.NewTrimmedMean(p, trim(r), 0)
	if errors.Is(err, mech.ErrInvalidInput) {
		// No tail exponent κ fits the noisy size at this ε and δ: a fact of
		// released and public values only, answered as NULL (still paid:
		// the count was read).
		return finished{Estimate{Refused: true, Note: fmt.Sprintf(
			"No Reply: a noisy count of about %.0f rows is too few for the trimmed mean at this epsilon and delta; raise @dp_epsilon or @dp_trim. The budget is charged.", p.Size)}}, nil
	}
	if err != nil {
		return nil, err
	}
	return ptrColumnStep(r, m, n), nil
}
