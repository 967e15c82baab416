// Package quantile holds the order-statistic quantile mechanisms that are
// not piecewise: the exponential mechanism over a public grid
// ([GridExponential], the proxy's default on integer columns: one GROUP BY
// histogram, utility −|rank − target| with sensitivity 1), the exponential
// mechanism on a window of order statistics ([WindowExponential], Smith
// 2011), and the smooth-sensitivity median ([SmoothMedian], Nissim,
// Raskhodnikova and Smith 2007, with Cauchy noise on a grid, α + β ≤ ε).
//
// Guarantee: pure ε-DP under adding or removing one row, each derived in
// its file. The row count n is private and never released here.
package quantile
