package planner

// standardMechanisms are the mechanisms SET @dp_mechanism can name.
func standardMechanisms() []Mechanism {
	return []Mechanism{laplaceMechanism{}, exponentialMechanism{}, permuteFlipMechanism{}, piecewiseMechanism{}, inverseQuantile, smoothMedian,
		preprocessMechanism{}, ptrMechanism{}, trimmedMechanism{}}
}

// defaultMechanism is the mechanism "auto" uses for a statistic, the rule
// the accuracy benchmark recommends (bench/RESULTS-accuracy.md, "Findings"),
// on public facts only:
//
//   - COUNT, SUM: Laplace.
//   - MEDIAN, PERCENTILE_CONT: permute-and-flip over the grid exponential
//     mechanism's grid when the column is an integer column whose grid is
//     its integers (exact on tied data, where the grid won nearly every
//     dataset; permute-and-flip's error is at most the exponential
//     mechanism's on every cell of bench/RESULTS-google.md within trial
//     noise, and up to 2× lower), else piecewise Laplace (best
//     or within a few percent on real-valued columns, and improving with n
//     where the grid's resolution becomes its floor); a MEDIAN given an ε
//     of at least smoothMinEpsilon there is the smooth-sensitivity median
//     instead (withEpsilon).
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
			return permuteFlipMechanism{}
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

// smoothMinEpsilon is the release ε from which "auto" answers a MEDIAN
// that piecewise Laplace would (no unit grid) with the smooth-sensitivity
// median. On the accuracy benchmark's 21 real-valued columns (normal,
// lognormal, uniform, bimodal, n = 100 to 10^6, and PUMS income) the
// smooth median's mean error over piecewise's has geometric mean 0.97 at
// ε = 1.5 (worst ×17), 0.67 at ε = 2 (worst ×2.1, best ×0.007: a median
// next to an empty gap, where piecewise spreads over the gap), 0.43 at
// ε = 3 and 0.37 at ε = 5 (bench/RESULTS-accuracy.md).
const smoothMinEpsilon = 2

// withEpsilon returns the mechanism "auto" uses for the release r once its
// ε is known: the default chosen by statistic (defaultMechanism), except
// the smooth-sensitivity median for a MEDIAN that piecewise Laplace would
// answer with an ε of at least smoothMinEpsilon.
func withEpsilon(m Mechanism, r *Release) Mechanism {
	if _, ok := m.(piecewiseMechanism); ok && r.Stat.Kind == StatQuantile && r.Stat.Quantile == 0.5 && r.Epsilon >= smoothMinEpsilon {
		return smoothMedian
	}
	return m
}
