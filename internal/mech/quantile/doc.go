// Package quantile holds the order-statistic quantile mechanisms that are
// not piecewise: the exponential mechanism over a public grid
// ([GridExponential]: one GROUP BY histogram, utility minus the rank
// distance to PERCENTILE_CONT's q·(n − 1), sensitivity max(q, 1 − q)),
// permute-and-flip over the same grid and utility ([GridPermuteFlip],
// McKenna and Sheldon 2020, the proxy's default on integer columns), the
// exponential mechanism on a window of order statistics
// ([WindowExponential], Smith 2011), and the smooth-sensitivity median
// ([SmoothMedian], Nissim, Raskhodnikova and Smith 2007, with Cauchy noise
// on a grid, calibrated by the exact worst loss D(α, β) ≤ ε).
//
// Guarantee: pure ε-DP under adding or removing one row, each derived in
// its file, for the implementation as written: the exponential mechanisms
// draw exactly from dyadic weights within 2^−62 of exp(−x), paid for by
// 2^−55 of ε (noise.ExpTable); permute-and-flip draws its law exactly (its
// coins are exact Bernoulli(exp(−x)) for rational x) and needs no slack;
// the smooth median's grid Cauchy is exact up to a Poisson-summation error
// paid for by 10^−9 of ε. The row count n is private and never released
// here.
//
// Exact checks (the *_exact_test.go files, and permuteflip_test.go) compute
// both output laws on thousands of neighbouring datasets for ε from the
// minimum to 100 and check the worst log-ratio against ε; with the noise
// scale cut by 25% the exponential mechanisms, permute-and-flip and the
// smooth median fail them. The smooth median's calibration is tight: its
// worst exact loss is ≥ 0.9ε on the test pairs from ε = 0.1 to 20
// (TestSmoothMedianExactPrivacy); permute-and-flip's is ε on every ε
// (TestPermuteFlipExactPrivacy: two bins, the best and one beside it).
package quantile
