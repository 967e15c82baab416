package mech

// Estimate is a released answer: its value and, when HasInterval, an
// interval [Low, High] that covers the true value with the requested
// confidence (typically 95%), computed only from the noise distribution and
// public or released quantities, never from the raw data.
type Estimate struct {
	Value, Low, High float64
	HasInterval      bool
}
