// Package exact holds the arithmetic that privacy proofs need to be exact:
// 128-bit signed integers and ratios of them (sums of fixed-point values
// without rounding), and directed rounding of float64 values (a sensitivity
// computed with rounding, rounded up, is at least the exact one). It draws
// no randomness.
package exact
