package planner_test

import (
	"math"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/planner"
)

// TestFormatFixedDouble: a DOUBLE whose type fixes its decimals is
// written as MariaDB 10.11 writes it (each text checked there, with
// ROUND, FLOOR, CEIL, TRUNCATE and arithmetic of float literals): its
// shortest digits padded to the decimals, or rounded to them when it has
// more, never with an exponent, zero without a sign.
func TestFormatFixedDouble(t *testing.T) {
	for _, c := range []struct {
		x        float64
		decimals int
		want     string
	}{
		{1, 2, "1.00"},                         // ROUND(1e0, 2)
		{1e15, 0, "1000000000000000"},          // FLOOR(1e15)
		{1.5e15, 0, "1500000000000000"},        // CEIL(1.5e15)
		{1e20, 0, "100000000000000000000"},     // FLOOR(1e20)
		{-1e22, 0, "-10000000000000000000000"}, // FLOOR(-1e22)
		{123456789012345678, 0, "123456789012345680"},
		{120, 0, "120"},          // ROUND(123.456e0, -1)
		{1.234, 3, "1.234"},      // TRUNCATE(1.23456e0, 3)
		{2.68, 2, "2.68"},        // ROUND(2.675e0, 2)
		{1.845, 2, "1.84"},       // ROUND(1.23e0, 2) * 1.5: 1.8449999999999999734…
		{1.0 / 3, 6, "0.333333"}, // ROUND(1e0, 2) / 3
		{-1.0 / 3000000, 6, "-0.000000"},
		{math.Copysign(0, -1), 2, "0.00"},                            // ROUND(-0.001e0, 2)
		{1.5000000000000002, 30, "1.500000000000000200000000000000"}, // ROUND(1.5e0, 30)
		{1e-20, 30, "0.000000000000000000010000000000"},
		{1e-20, 25, "0.0000000000000000000100000"},
		{1e300, 2, "1" + strings.Repeat("0", 300) + ".00"}, // ROUND(1e300, 2)
		{1.5, planner.NotFixedDecimals, "1.5"},             // ROUND(1.5e0, 31): none fixed
		{1e15, planner.NotFixedDecimals, "1e15"},
	} {
		if got := planner.FormatFixedDouble(c.x, c.decimals); got != c.want {
			t.Errorf("FormatFixedDouble(%v, %d) = %s, want %s", c.x, c.decimals, got, c.want)
		}
	}
}

// TestDoubleTypeDecimals: DoubleType keeps the decimals below
// NotFixedDecimals (0 for fewer than 0) and is ResultDouble from there
// on, as MySQL caps a DOUBLE's decimals; a column announces them.
func TestDoubleTypeDecimals(t *testing.T) {
	for _, c := range []struct{ decimals, want int }{{-3, 0}, {0, 0}, {2, 2}, {30, 30}, {31, 31}, {40, 31}} {
		ty := planner.DoubleType(c.decimals)
		if ty.Kind() != planner.ResultDouble || ty.Decimals() != c.want {
			t.Errorf("DoubleType(%d) is %v of %d decimals, want a DOUBLE of %d", c.decimals, ty, ty.Decimals(), c.want)
		}
	}
	if planner.DoubleType(31) != planner.ResultDouble || planner.ResultDouble.Decimals() != planner.NotFixedDecimals {
		t.Errorf("ResultDouble is not the DOUBLE of decimals not fixed")
	}
	if ty := planner.DoubleType(2); ty.Precision() != 0 || ty.Scale() != 0 || planner.DecimalType(10, 2).Decimals() != 2 {
		t.Errorf("a DOUBLE has a precision or scale, or a DECIMAL's decimals are not its scale")
	}
}
