package sqlrewrite_test

import (
	"math"
	"math/rand"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

func rfn(fn string, num float64, x *sqlrewrite.RowExpr) *sqlrewrite.RowExpr {
	return &sqlrewrite.RowExpr{Kind: sqlrewrite.RowFunc, Func: fn, Num: num, Args: []*sqlrewrite.RowExpr{x}}
}

// TestRowFuncBoundsVectors checks the bounds of the numeric functions on
// hand-computed vectors: ABS and even powers reach 0 only when the
// argument's interval holds it, MOD keeps the dividend's sign and stays
// within the divisor, ROUND's ties go either way (ROUND(2.5) is 2 on
// MariaDB and 3 on SQLite), and the refusals keep every argument in its
// function's domain.
func TestRowFuncBoundsVectors(t *testing.T) {
	x := rcol("x", -2.5, 7.5)
	pos := rcol("p", 1, 1000)
	checkBounds(t, []boundsCase{
		{"ABS([-2.5, 7.5])", rfn(sqlrewrite.FuncAbs, 0, x), 0, 7.5, ""},
		{"ABS([-9, -3])", rfn(sqlrewrite.FuncAbs, 0, rcol("n", -9, -3)), 3, 9, ""},
		{"SIGN([-2.5, 7.5])", rfn(sqlrewrite.FuncSign, 0, x), -1, 1, ""},
		{"SIGN([1, 1000])", rfn(sqlrewrite.FuncSign, 0, pos), 0, 1, ""}, // the single value 1, widened toward 0 (singleValueBounds)
		{"FLOOR([-2.5, 7.5])", rfn(sqlrewrite.FuncFloor, 0, x), -3, 7, ""},
		{"CEIL([-2.5, 7.5])", rfn(sqlrewrite.FuncCeil, 0, x), -2, 8, ""},
		{"ROUND([-2.5, 7.5])", rfn(sqlrewrite.FuncRound, 0, x), -3, 8, ""},
		{"ROUND([1, 1000], -2)", rfn(sqlrewrite.FuncRound, -2, pos), 0, 1000, ""},
		{"ROUND([-2.5, 7.5], 1)", rfn(sqlrewrite.FuncRound, 1, x), -2.5, 7.5, ""},
		{"TRUNCATE([-2.5, 7.5], 0)", rfn(sqlrewrite.FuncTruncate, 0, x), -2, 7, ""},
		{"MOD([-2.5, 7.5], 2)", rfn(sqlrewrite.FuncMod, 2, x), -2, 2, ""},
		{"MOD([1, 1000], -7)", rfn(sqlrewrite.FuncMod, -7, pos), 0, 7, ""},
		{"MOD([-2.5, 7.5], 100)", rfn(sqlrewrite.FuncMod, 100, x), -2.5, 7.5, ""},
		{"POW([-2.5, 7.5], 2)", rfn(sqlrewrite.FuncPow, 2, x), 0, 56.25, ""},
		{"POW([-9, -3], 3)", rfn(sqlrewrite.FuncPow, 3, rcol("n", -9, -3)), -729, -27, ""},
		{"POW([-2.5, 7.5], 3)", rfn(sqlrewrite.FuncPow, 3, rcol("x", -2.5, 7.5)), 0, 0, "could round to 0"},
		{"POW([-9, -3], 2)", rfn(sqlrewrite.FuncPow, 2, rcol("n", -9, -3)), 9, 81, ""},
		{"SQRT([1, 1000])", rfn(sqlrewrite.FuncSqrt, 0, pos), math.Nextafter(math.Nextafter(1, 0), 0), ulps(math.Sqrt(1000), 2), ""},
		{"LN([1, 1000])", rfn(sqlrewrite.FuncLn, 0, pos), 0, ulps(math.Log(1000), 2), ""},
		{"LOG(0.5, [1, 1000])", rfn(sqlrewrite.FuncLog, 0.5, pos), ulps(math.Log(1000)/math.Log(0.5), -2), 0, ""},
		{"EXP([-2.5, 7.5])", rfn(sqlrewrite.FuncExp, 0, x), ulps(math.Exp(-2.5), -2), ulps(math.Exp(7.5), 2), ""},
		{"SQRT([-2.5, 7.5])", rfn(sqlrewrite.FuncSqrt, 0, x), 0, 0, "reach below 0"},
		{"LN([0, 100])", rfn(sqlrewrite.FuncLn, 0, rcol("a", 0, 100)), 0, 0, "reach 0 or below"},
		{"EXP([0, 1000])", rfn(sqlrewrite.FuncExp, 0, rcol("a", 0, 1000)), 0, 0, "leave [-690, 690]"},
		{"POW([0, 100], 3)", rfn(sqlrewrite.FuncPow, 3, rcol("a", 0, 100)), 0, 0, "could round to 0"},
		{"ROUND([0, 1e300], 15)", rfn(sqlrewrite.FuncRound, 15, rcol("a", 0, 1e300)), 0, 0, "beyond double precision's range"},
		{"ROUND([2^-320, 1]^3, -15)", rfn(sqlrewrite.FuncRound, -15, rfn(sqlrewrite.FuncPow, 3, rcol("a", 0x1p-320, 1))), 0, 0, "beyond double precision's range"},
		{"POW([1, 1e120], 4)", rfn(sqlrewrite.FuncPow, 4, rcol("a", 1, 1e120)), 0, 0, "beyond 2^1000"},
	})
}

// scaled rounds x to d decimal digits as the renderings of ROUND(x, d) and
// TRUNCATE(x, d) do: x·10^d (or x/10^−d) rounded by round, scaled back.
func scaled(x, d float64, round func(float64) float64) float64 {
	s := math.Pow(10, math.Abs(d))
	switch {
	case d > 0:
		return round(x*s) / s
	case d < 0:
		return round(x/s) * s
	}
	return round(x)
}

// ulps moves x by n units in the last place (toward +∞ for n > 0).
func ulps(x float64, n int) float64 {
	dir := math.Inf(1)
	if n < 0 {
		dir, n = math.Inf(-1), -n
	}
	for range n {
		x = math.Nextafter(x, dir)
	}
	return x
}

// TestRowFuncBoundsContainComputedValues: for each function over random
// argument intervals, every value Go computes from arguments inside the
// interval (its endpoints, 0 and uniform draws; ROUND's ties both ways)
// lies inside Bounds. Seeded; deterministic.
func TestRowFuncBoundsContainComputedValues(t *testing.T) {
	rng := rand.New(rand.NewSource(27))
	fns := []struct {
		fn   string
		num  func() float64
		eval func(x, num float64) []float64
	}{
		{sqlrewrite.FuncAbs, nil, func(x, _ float64) []float64 { return []float64{math.Abs(x)} }},
		{sqlrewrite.FuncSign, nil, func(x, _ float64) []float64 {
			return []float64{map[bool]float64{true: 1, false: 0}[x > 0] - map[bool]float64{true: 1, false: 0}[x < 0]}
		}},
		{sqlrewrite.FuncFloor, nil, func(x, _ float64) []float64 { return []float64{math.Floor(x)} }},
		{sqlrewrite.FuncCeil, nil, func(x, _ float64) []float64 { return []float64{math.Ceil(x)} }},
		{sqlrewrite.FuncRound, func() float64 { return float64(rng.Intn(9) - 4) }, func(x, d float64) []float64 {
			return []float64{scaled(x, d, math.Round), scaled(x, d, math.RoundToEven)}
		}},
		{sqlrewrite.FuncTruncate, func() float64 { return float64(rng.Intn(9) - 4) }, func(x, d float64) []float64 {
			return []float64{scaled(x, d, math.Trunc)}
		}},
		{sqlrewrite.FuncMod, func() float64 { return float64(rng.Intn(41)-20) + 0.5*float64(rng.Intn(2)) }, func(x, c float64) []float64 {
			return []float64{math.Mod(x, c)}
		}},
		{sqlrewrite.FuncPow, func() float64 { return float64(2 + rng.Intn(3)) }, func(x, k float64) []float64 {
			p := x
			for range int(k) - 1 {
				p *= x
			}
			return []float64{p}
		}},
		{sqlrewrite.FuncSqrt, nil, func(x, _ float64) []float64 { return []float64{math.Sqrt(x)} }},
		{sqlrewrite.FuncLn, nil, func(x, _ float64) []float64 { return []float64{math.Log(x)} }},
		{sqlrewrite.FuncLog, func() float64 { return []float64{2, 10, 0.5, 3}[rng.Intn(4)] }, func(x, b float64) []float64 {
			return []float64{math.Log(x) / math.Log(b)}
		}},
		{sqlrewrite.FuncExp, nil, func(x, _ float64) []float64 { return []float64{math.Exp(x)} }},
	}
	checked := 0
	for trial := range 6000 {
		f := fns[trial%len(fns)]
		lo := (rng.Float64()*2 - 1) * math.Pow(10, float64(rng.Intn(7)-3))
		if rng.Intn(4) == 0 {
			lo = math.Round(lo)
		}
		hi := lo + rng.Float64()*math.Pow(10, float64(rng.Intn(7)-3))
		num := 0.0
		if f.num != nil {
			num = f.num()
		}
		if f.fn == sqlrewrite.FuncMod && num == 0 {
			continue
		}
		e := rfn(f.fn, num, rcol("x", lo, hi))
		blo, bhi, err := e.Bounds()
		if err != nil {
			continue
		}
		checked++
		for s := range 50 {
			x := lo + rng.Float64()*(hi-lo)
			switch s {
			case 0:
				x = lo
			case 1:
				x = hi
			case 2:
				x = math.Max(lo, math.Min(hi, 0))
			case 3:
				x = math.Max(lo, math.Min(hi, math.Round(x)+0.5)) // a tie
			}
			for _, v := range f.eval(x, num) {
				if !(v >= blo && v <= bhi) {
					t.Fatalf("%s at %v computes %v, outside its bounds [%v, %v]", e, x, v, blo, bhi)
				}
			}
		}
	}
	if checked < 3000 {
		t.Fatalf("only %d of 6000 random functions had bounds", checked)
	}
}
