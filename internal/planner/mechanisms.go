package planner

// standardMechanisms are the mechanisms SET @dp_mechanism can name.
func standardMechanisms() []Mechanism {
	return []Mechanism{laplaceMechanism{}, exponentialMechanism{}, piecewiseMechanism{}, inverseQuantile, smoothMedian,
		preprocessMechanism{}, ptrMechanism{}, ptrRobustMechanism{}, trimmedMechanism{}}
}

// defaultMechanism is the mechanism "auto" uses for a statistic, the rule
// the accuracy benchmark recommends (bench/RESULTS-accuracy.md, "Findings"),
// on public facts only:
//
//   - COUNT, SUM: Laplace.
//   - MEDIAN, PERCENTILE_CONT: the grid exponential mechanism when the
//     column is an integer column whose grid is its integers (exact on tied
//     data, where it won nearly every dataset), else piecewise Laplace (best
//     or within a few percent on real-valued columns, and improving with n
//     where the grid's resolution becomes its floor).
//   - AVG, VARIANCE, STDDEV: autoMean and autoVariance (the sums, or the
//     squares, from both bounds in one Laplace release): issue 15,
//     bench/RESULTS-google.md.
//   - IQR, REGR_SLOPE, REGR_INTERCEPT: Propose-Test-Release.
func (p *Planner) defaultMechanism(s Statistic) Mechanism {
	switch s.Kind {
	case StatCount, StatSum, StatCenteredSum, StatCenteredSumSquares, StatCountDistinct:
		return laplaceMechanism{}
	case StatQuantile:
		if _, unit := (exponentialMechanism{}).grid(&Release{Stat: s}); unit {
			return exponentialMechanism{}
		}
		return piecewiseMechanism{}
	case StatMean:
		return autoMean{}
	case StatVariance:
		return autoVariance{}
	case StatIQR, StatRegression:
		return ptrMechanism{}
	}
	return nil
}
