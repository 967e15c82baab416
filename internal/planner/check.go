package planner

import (
	"fmt"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/laplace"
	"github.com/dpproxy/dpproxy/internal/mech/preprocess"
	"github.com/dpproxy/dpproxy/internal/mech/ptr"
	"github.com/dpproxy/dpproxy/internal/mech/quantile"
)

// Every Check below validates a release's public parameters (its ε share and
// every part of it the mechanism's steps use, its bounds, its quantile, its
// δ and trim) with the constructors Start calls, but without data: the
// planner calls it after splitting the statement's ε and before anything
// is reserved, so a statement that Start would refuse after reading data
// (and being charged) is refused first (DESIGN.md §2: an outcome never
// depends on private data except through released noise). Where Start's
// parameters depend on a noisy count, the preprocessing ones are checked at
// both extreme counts (noisyCountExtremes); PTR's at the largest only
// (largeNoisyCount), because some PTR preconditions fail on small counts by
// design (the trimmed mean needs enough rows): such a refusal depends on the
// data only through the released noisy count.

// MinEpsilon is the smallest ε a statement may set: the smallest any
// release accepts (mech.MinEpsilon); most mechanisms need more (Check).
const MinEpsilon = mech.MinEpsilon

// MinDelta is the smallest δ a statement may set (mech.MinDelta).
const MinDelta = mech.MinDelta

// noisyCountExtremes are the noisy counts at which the preprocessing
// parameters are checked: the smallest any count is treated as, and more
// rows than any table holds.
var noisyCountExtremes = []float64{-1, largeNoisyCount}

// largeNoisyCount is more rows than any table holds.
const largeNoisyCount = 0x1p62

// checkShares checks that each ε share is a valid release ε.
func checkShares(shares ...float64) error {
	for _, e := range shares {
		if err := mech.CheckEpsilon(e); err != nil {
			return err
		}
	}
	return nil
}

func (laplaceMechanism) Check(r *Release) error {
	if err := checkShares(r.Epsilon); err != nil {
		return err
	}
	if r.rows() > laplace.MaxRowsPerUnit {
		return fmt.Errorf("%d rows per unit exceeds %d", r.rows(), laplace.MaxRowsPerUnit)
	}
	if r.Stat.Kind == StatCount || r.Stat.Kind == StatCountDistinct {
		return nil // a count's sensitivity is k (1 on row-level tables), whatever the column, text too
	}
	return columnBounds(r).Validate()
}

func (m exponentialMechanism) Check(r *Release) error {
	h, _ := m.grid(r)
	_, err := quantile.NewGridExponential(r.Stat.Quantile, r.Epsilon, h.Bins)
	return err
}

func (m piecewiseMechanism) Check(r *Release) error {
	if r.Stat.Kind == StatQuantile {
		return piecewiseQuantile.Check(r)
	}
	_, err := m.variance(r)
	return err
}

func (q quantileMechanism) Check(r *Release) error {
	if err := checkShares(r.Epsilon); err != nil {
		return err
	}
	_, err := q.build(r)
	return err
}

func (preprocessMechanism) Check(r *Release) error {
	eps := r.Epsilon * (1 - CountShare)
	if err := checkShares(r.Epsilon*CountShare, eps); err != nil {
		return err
	}
	return checkPreprocess(r, eps)
}

// checkPreprocess builds the preprocessing mechanism of r with ε eps at
// the extreme noisy counts.
func checkPreprocess(r *Release, eps float64) error {
	stat := preprocess.MedianStatistic
	switch r.Stat.Kind {
	case StatMean:
		stat = preprocess.MeanStatistic
	case StatVariance:
		stat = preprocess.VarianceStatistic
	}
	for _, nHat := range noisyCountExtremes {
		params, err := preprocess.DefaultParams(stat, columnBounds(r), nHat)
		if err != nil {
			return err
		}
		switch r.Stat.Kind {
		case StatMean:
			_, err = preprocess.NewMean(params, eps)
		case StatVariance:
			_, err = preprocess.NewVariance(params, eps)
		default:
			_, err = preprocess.NewMedian(params, eps)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// checkPTR builds r's PTR mechanism with the parameters ptrParams gives at
// a large noisy count.
func checkPTR(r *Release, build func(p ptr.Params) error) error {
	if err := checkShares(r.Epsilon * CountShare); err != nil {
		return err
	}
	return build(ptr.Params{Epsilon: r.Epsilon * (1 - CountShare), Delta: r.Delta, Size: largeNoisyCount, Bounds: columnBounds(r)})
}

func (ptrMechanism) Check(r *Release) error {
	return checkPTR(r, func(p ptr.Params) error {
		var err error
		switch r.Stat.Kind {
		case StatIQR:
			_, err = ptr.NewScale(p)
		case StatQuantile:
			_, err = ptr.NewMedian(p, 0)
		case StatRegression:
			_, err = ptrRegressionStep(r, p)
		default:
			err = fmt.Errorf("ptr cannot release %s", r.Stat)
		}
		return err
	})
}

func (trimmedMechanism) Check(r *Release) error {
	return checkPTR(r, func(p ptr.Params) error {
		_, err := ptr.NewTrimmedMean(p, trim(r), 0)
		return err
	})
}
