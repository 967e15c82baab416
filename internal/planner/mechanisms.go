package planner

// standardMechanisms are the mechanisms SET @dp_mechanism can name.
func standardMechanisms() []Mechanism {
	return []Mechanism{laplaceMechanism{}, exponentialMechanism{}, piecewiseMechanism{}, inverseQuantile, smoothMedian,
		preprocessMechanism{}, ptrMechanism{}, trimmedMechanism{}}
}

// defaultMechanism is the mechanism "auto" uses for a statistic: a rule on
// public facts only (the kind of statistic).
func (p *Planner) defaultMechanism(s Statistic) Mechanism {
	switch s.Kind {
	case StatCount, StatSum, StatCenteredSum, StatCenteredSumSquares:
		return laplaceMechanism{}
	case StatQuantile:
		return exponentialMechanism{}
	case StatIQR, StatRegression:
		return ptrMechanism{}
	}
	return nil
}
