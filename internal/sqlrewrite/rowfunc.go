package sqlrewrite

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/types"
)

// The numeric functions of a row expression (RowFunc, its Func). Each
// takes one row expression, Args[0], and for some a constant, Num:
//
//	ABS(x), SIGN(x)
//	FLOOR(x), CEIL(x)              (CEILING)
//	ROUND(x, d), TRUNCATE(x, d)    d = Num, an integer in [-15, 15]; ROUND(x) is d = 0;
//	                               ROUND's Op is its ties' rule (tiesAway, tiesEven)
//	MOD(x, c)                      x % c and x MOD c; c = Num ≠ 0, the sign of x
//	POW(x, k)                      (POWER) k = Num, an integer in [2, 4]; POW(x, 0.5) is SQRT
//	SQRT(x)                        x's bounds ≥ 0
//	LN(x), LOG(b, x)               x's bounds > 0; LOG(x) is LN, LOG2 and LOG10 are LOG(2, x) and LOG(10, x); b = Num
//	EXP(x)                         x's bounds in [-690, 690]
//
// As MySQL computes them on doubles, NULL when x is: ROUND to nearest with
// ties as MySQL rounds x's type, whatever the backend's own rule (SQLite
// rounds every tie away from zero, PostgreSQL and MariaDB a double's to
// even): away from zero where x is exact (an integer or DECIMAL in
// MySQL, exact), to even where it is a DOUBLE (MySQL's rint), so that
// ROUND(n, -1) of an integer 25 is 30 and ROUND(x) of a real 2.5 is 2;
// ROUND(x, d) and TRUNCATE(x, d) scale by 10^d in double precision
// first, as MySQL scales a DOUBLE. The refusals keep every
// argument inside the function's domain, so that no row makes a backend
// fail (PostgreSQL raises errors where MySQL returns NULL: SQRT of a
// negative, LN of 0, EXP's underflow) and whether a statement errs never
// depends on the data.
const (
	FuncAbs      = "ABS"
	FuncSign     = "SIGN"
	FuncFloor    = "FLOOR"
	FuncCeil     = "CEIL"
	FuncRound    = "ROUND"
	FuncTruncate = "TRUNCATE"
	FuncMod      = "MOD"
	FuncPow      = "POW"
	FuncSqrt     = "SQRT"
	FuncLn       = "LN"
	FuncLog      = "LOG"
	FuncExp      = "EXP"
)

// rowFuncArity maps the SQL names dpproxy reads as RowFunc to their
// canonical Func and the numbers of arguments they take.
var rowFuncArity = map[string]struct {
	fn   string
	args []int
}{
	"abs": {FuncAbs, []int{1}}, "sign": {FuncSign, []int{1}},
	"floor": {FuncFloor, []int{1}}, "ceil": {FuncCeil, []int{1}}, "ceiling": {FuncCeil, []int{1}},
	"round": {FuncRound, []int{1, 2}}, "truncate": {FuncTruncate, []int{2}},
	"mod": {FuncMod, []int{2}}, "pow": {FuncPow, []int{2}}, "power": {FuncPow, []int{2}},
	"sqrt": {FuncSqrt, []int{1}}, "ln": {FuncLn, []int{1}}, "log": {FuncLog, []int{1, 2}},
	"log2": {FuncLog, []int{1}}, "log10": {FuncLog, []int{1}}, "exp": {FuncExp, []int{1}},
}

// Limits of RowFunc's constants and arguments.
const (
	maxRoundDigits = 15
	minPower       = 2
	maxPower       = 4
	maxExpArgument = 690 // e^690 < 2^1000 and e^−690 > 2^−1000 (rowHuge, rowTiny)
)

// The rules of ROUND's ties (its Op): away from zero, as MySQL rounds an
// exact value (and converts a DOUBLE to DECIMAL), or to even, as it
// rounds a DOUBLE.
const (
	tiesAway = 'a'
	tiesEven = 'e'
)

// Limits of the scaled argument of a ROUND (x·10^d or x/10^−d) that its
// rendering rounds exactly: to even below 2^51 in magnitude (SQLite adds
// and subtracts 1.5·2^52, whose unit in the last place is 1), away from
// zero below 10^47 (MariaDB rounds a DECIMAL(65, 17), whose 17 decimals
// hold every double's shortest digits at and above 0.1).
const (
	maxEvenRounded = 0x1p51
	maxAwayRounded = 1e47
)

// exact reports whether MySQL computes e as an exact value, an integer
// or a DECIMAL, rather than a DOUBLE: integer columns, constants (a
// decimal literal), the date numbers and their differences, + − × / and
// LEAST/GREATEST of exact values, a CASE whose results all are, SIGN and
// the date parts, ABS, FLOOR, CEIL, TRUNCATE and MOD of an exact value,
// and a ROUND away from zero (of an exact value or a cast to DECIMAL).
// A real column, POW, SQRT, LN, LOG and EXP are DOUBLEs.
func (e *RowExpr) exact() bool {
	switch e.Kind {
	case RowColumn:
		return e.Integer
	case RowConst, RowTemporal, RowIntDiv, RowMonthDiff, RowSecondDiff:
		return true
	case RowOp:
		return e.Args[0].exact() && e.Args[1].exact()
	case RowCase:
		for _, a := range e.Args {
			if a != nil && !a.exact() {
				return false
			}
		}
		return true
	case RowFunc:
		if isDatePartFunc(e.Func) {
			return true
		}
		switch e.Func {
		case FuncSign:
			return true
		case FuncRound:
			return e.Op == tiesAway
		case FuncAbs, FuncFloor, FuncCeil, FuncTruncate, FuncMod:
			return e.Args[0].exact()
		}
	}
	return false
}

// roundTies is ROUND's Op for x: MySQL's rule for x's type.
func roundTies(x *RowExpr) byte {
	if x.exact() {
		return tiesAway
	}
	return tiesEven
}

// isRowFunc reports whether e is a call of a function rowFunc reads, or
// x % c, x MOD c or x DIV c.
func isRowFunc(e ast.ExprNode) bool {
	switch n := unparen(e).(type) {
	case *ast.FuncCallExpr:
		spec, ok := rowFuncArity[n.FnName.L]
		return ok && n.Schema.L == "" && slices.Contains(spec.args, len(n.Args))
	case *ast.BinaryOperationExpr:
		return n.Op == opcode.Mod || n.Op == opcode.IntDiv
	}
	return false
}

// rowFunc reads a numeric function of a row expression (isRowFunc) as
// RowFunc, x DIV c as RowIntDiv (truncated, c a positive integer), and
// POW(x, 0.5) as SQRT(x), refusing with the reason a constant argument
// out of its range.
func (sc *scope) rowFunc(top, e ast.ExprNode) (*RowExpr, error) {
	why := cannotBound(top)
	constant := func(a ast.ExprNode, what string) (float64, error) {
		v, ok := literal(a)
		if !ok || v.Null || v.IsText || math.IsInf(v.Num, 0) {
			return 0, why("%s takes a number as its %s, not %s", restore(e), what, restore(a))
		}
		return v.Num, nil
	}
	var fn string
	var x, c ast.ExprNode
	base := 0.0 // LOG2's and LOG10's
	switch n := unparen(e).(type) {
	case *ast.BinaryOperationExpr:
		fn, x, c = FuncMod, n.L, n.R
		if n.Op == opcode.IntDiv {
			d, err := constant(c, "divisor")
			if err != nil {
				return nil, err
			}
			if d < 1 || d != math.Trunc(d) || d > 1<<30 {
				return nil, why("%s divides by %g (DIV takes a positive integer up to 2^30)", restore(e), d)
			}
			arg, err := sc.rowExprIn(top, x)
			if err != nil {
				return nil, err
			}
			return &RowExpr{Kind: RowIntDiv, Op: 't', Num: d, Args: []*RowExpr{arg}}, nil
		}
	case *ast.FuncCallExpr:
		fn, x = rowFuncArity[n.FnName.L].fn, n.Args[0]
		switch {
		case fn == FuncLog && len(n.Args) == 2:
			x, c = n.Args[1], n.Args[0]
		case len(n.Args) == 2:
			c = n.Args[1]
		}
		base = map[string]float64{"log2": 2, "log10": 10}[n.FnName.L]
		if n.FnName.L == "log" && len(n.Args) == 1 {
			fn = FuncLn // MySQL's LOG(x) is the natural logarithm
		}
	}
	out := &RowExpr{Kind: RowFunc, Func: fn, Num: base}
	if c != nil {
		num, err := constant(c, map[string]string{FuncRound: "digits", FuncTruncate: "digits", FuncMod: "divisor", FuncPow: "exponent", FuncLog: "base"}[fn])
		if err != nil {
			return nil, err
		}
		out.Num = num
	}
	switch fn {
	case FuncRound, FuncTruncate:
		if out.Num != math.Trunc(out.Num) || math.Abs(out.Num) > maxRoundDigits {
			return nil, why("%s rounds to %g digits (an integer in [-%d, %d])", restore(e), out.Num, maxRoundDigits, maxRoundDigits)
		}
	case FuncMod:
		if out.Num == 0 || math.Abs(out.Num) > maxMagnitude || math.Abs(out.Num) < 0x1p-400 {
			return nil, why("%s takes its remainder by %g (a nonzero number of magnitude in [2^-400, 2^430])", restore(e), out.Num)
		}
	case FuncPow:
		if out.Num == 0.5 {
			out.Func, out.Num = FuncSqrt, 0
			break
		}
		if out.Num != math.Trunc(out.Num) || out.Num < minPower || out.Num > maxPower {
			return nil, why("%s raises to the power %g (an integer from %d to %d, or 0.5)", restore(e), out.Num, minPower, maxPower)
		}
	case FuncLog:
		if !(out.Num > 0) || out.Num == 1 {
			return nil, why("%s takes the logarithm to base %g (a positive number other than 1)", restore(e), out.Num)
		}
	}
	arg, err := sc.rowExprIn(top, x)
	if err != nil {
		return nil, err
	}
	out.Args = []*RowExpr{arg}
	if fn == FuncRound {
		out.Op = roundTies(arg)
	}
	return out, nil
}

// funcBounds is RowFunc's interval. Every function is monotone on each
// side of 0 or its argument's interval is cut there, so its values lie
// between its values at the argument's endpoints (and 0 where ABS, MOD
// or an even power reach it). The exact operations (ABS, SIGN, the
// roundings to integers, MOD) and the products of POW are bounded with
// directed rounding; SQRT, LN, LOG and EXP from Go's values widened by
// two units in the last place outward, which contain the database's
// (each of Go's math functions and of the C libraries' is within one
// unit of the exact value). Whatever the database computes, the fetch
// clamps the derived column to these bounds (Render): they make that
// clamp a no-op, they do not carry the guarantee.
func (e *RowExpr) funcBounds() (interval, error) {
	if len(e.Args) != 1 {
		return interval{}, fmt.Errorf("sqlrewrite: bad function %s", e)
	}
	if isDatePartFunc(e.Func) {
		return e.datePartBounds()
	}
	a, err := e.Args[0].bounds()
	if err != nil {
		return interval{}, err
	}
	var v interval
	switch e.Func {
	case FuncAbs:
		lo := 0.0
		if a.lo > 0 {
			lo = a.lo
		} else if a.hi < 0 {
			lo = -a.hi
		}
		v = interval{lo, math.Max(-a.lo, a.hi), a.tiny}
	case FuncSign:
		v = interval{sign(a.lo), sign(a.hi), 0}
	case FuncFloor, FuncCeil, FuncRound, FuncTruncate:
		if v, err = e.roundBounds(a); err != nil {
			return interval{}, err
		}
	case FuncMod:
		c := math.Abs(e.Num)
		v = interval{math.Max(math.Min(a.lo, 0), -c), math.Min(math.Max(a.hi, 0), c), math.Min(a.tiny, math.Log2(c)) - 53}
	case FuncPow:
		v = powBounds(a, int(e.Num))
	case FuncSqrt:
		if a.lo < 0 {
			return interval{}, fmt.Errorf("SQRT of %s, whose bounds [%g, %g] reach below 0 (GREATEST(x, 0) keeps it at 0 or above)", e.Args[0], a.lo, a.hi)
		}
		v = interval{ulpsDown(math.Sqrt(a.lo)), ulpsUp(math.Sqrt(a.hi)), a.tiny/2 - 1}
	case FuncLn, FuncLog:
		if a.lo <= 0 {
			return interval{}, fmt.Errorf("the logarithm of %s, whose bounds [%g, %g] reach 0 or below (GREATEST(x, 1) or x + 1 keeps it above 0)", e.Args[0], a.lo, a.hi)
		}
		f, scale := math.Log, 1.0
		if e.Func == FuncLog {
			scale = math.Log(e.Num)
			f = func(x float64) float64 { return math.Log(x) / scale }
		}
		x, y := f(a.lo), f(a.hi)
		// A logarithm of a double other than 1 is at least 2^−53 in
		// magnitude, divided by the base's.
		v = interval{ulpsDown(math.Min(x, y)), ulpsUp(math.Max(x, y)), -54 - math.Max(0, math.Log2(math.Abs(scale)))}
	case FuncExp:
		if a.lo < -maxExpArgument || a.hi > maxExpArgument {
			return interval{}, fmt.Errorf("EXP of %s, whose bounds [%g, %g] leave [-%d, %d] (its value would leave double precision's range; LEAST and GREATEST cap it)", e.Args[0], a.lo, a.hi, maxExpArgument, maxExpArgument)
		}
		v = interval{ulpsDown(math.Exp(a.lo)), ulpsUp(math.Exp(a.hi)), a.lo*math.Log2E - 1}
	default:
		return interval{}, fmt.Errorf("sqlrewrite: unknown function %q", e.Func)
	}
	if v.lo == 0 && v.hi == 0 {
		v.tiny = math.Inf(1)
	}
	if math.Abs(v.lo) > rowHuge || math.Abs(v.hi) > rowHuge {
		return interval{}, fmt.Errorf("%s could reach %g in magnitude, beyond 2^1000", e, math.Max(math.Abs(v.lo), math.Abs(v.hi)))
	}
	if v.tiny < rowTiny {
		return interval{}, fmt.Errorf("a nonzero value of %s could be as small as 2^%.0f, which double precision could round to 0", e, math.Floor(v.tiny))
	}
	return v, nil
}

// roundBounds bounds FLOOR, CEIL, ROUND and TRUNCATE: the argument
// scaled by 10^d as the rendering scales it (rounded outward: the
// database's nearest rounding lies between), rounded to integers by the
// function (ROUND both ways a tie can go), and scaled back (outward).
// Their nonzero values are multiples of 10^−d: 0 or at least 10^−d
// (a little less after the division by 10^d). The scaled argument must
// stay within double precision's range (PostgreSQL fails a product that
// overflows and a quotient of nonzero values that rounds to 0).
func (e *RowExpr) roundBounds(a interval) (interval, error) {
	digits := 0.0
	if e.Func == FuncRound || e.Func == FuncTruncate {
		digits = e.Num
	}
	scale := math.Pow(10, math.Abs(digits))
	if digits > 0 && math.Max(math.Abs(a.lo), math.Abs(a.hi))*scale > rowHuge || digits < 0 && a.tiny-math.Log2(scale) < rowTiny {
		return interval{}, fmt.Errorf("%s scales %s by 10^%g beyond double precision's range", e, e.Args[0], digits)
	}
	lo, hi := a.lo, a.hi
	switch {
	case digits > 0:
		lo, hi = directed(lo, scale, '*', big.ToNegativeInf), directed(hi, scale, '*', big.ToPositiveInf)
	case digits < 0:
		lo, hi = directed(lo, scale, '/', big.ToNegativeInf), directed(hi, scale, '/', big.ToPositiveInf)
	}
	switch e.Func {
	case FuncFloor:
		lo, hi = math.Floor(lo), math.Floor(hi)
	case FuncCeil:
		lo, hi = math.Ceil(lo), math.Ceil(hi)
	case FuncTruncate:
		lo, hi = math.Trunc(lo), math.Trunc(hi)
	default:
		limit, rule := maxEvenRounded, "to even"
		if e.Op == tiesAway {
			limit, rule = maxAwayRounded, "away from zero"
		}
		if math.Max(-lo, hi) >= limit {
			return interval{}, fmt.Errorf("%s rounds %s scaled by 10^%g, whose bounds [%g, %g] reach %g in magnitude, beyond which its ties are not rounded %s exactly (LEAST and GREATEST narrow it)", e, e.Args[0], digits, lo, hi, limit, rule)
		}
		lo, hi = math.Min(math.Round(lo), math.RoundToEven(lo)), math.Max(math.Round(hi), math.RoundToEven(hi))
	}
	switch {
	case digits > 0:
		return interval{directed(lo, scale, '/', big.ToNegativeInf), directed(hi, scale, '/', big.ToPositiveInf), -math.Log2(scale) - 1}, nil
	case digits < 0:
		return interval{directed(lo, scale, '*', big.ToNegativeInf), directed(hi, scale, '*', big.ToPositiveInf), math.Log2(scale)}, nil
	}
	return interval{lo, hi, 0}, nil
}

// powBounds bounds x^k for an integer k ≥ 2 over a: the products of the
// endpoints' magnitudes rounded outward at each step as the database
// multiplies, an even power 0 at least when a holds 0, an odd power
// negative where x is.
func powBounds(a interval, k int) interval {
	power := func(x float64, m big.RoundingMode) float64 {
		p := x
		for range k - 1 {
			p = directed(p, x, '*', m)
		}
		return p
	}
	largest, small := math.Max(math.Abs(a.lo), math.Abs(a.hi)), math.Min(math.Abs(a.lo), math.Abs(a.hi))
	tiny := a.tiny * float64(k)
	if k%2 == 1 {
		lo := power(a.lo, downward)
		if a.lo < 0 {
			lo = -power(-a.lo, upward)
		}
		hi := power(a.hi, upward)
		if a.hi < 0 {
			hi = -power(-a.hi, downward)
		}
		return interval{lo, hi, tiny}
	}
	if a.lo <= 0 && a.hi >= 0 {
		small = 0
	}
	return interval{power(small, downward), power(largest, upward), tiny}
}

// The rounding modes of directed, by the direction a bound is rounded.
const (
	downward = big.ToNegativeInf
	upward   = big.ToPositiveInf
)

// sign is SIGN's value.
func sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// ulpsDown and ulpsUp move x two units in the last place toward −∞ and
// +∞ (the bounds of a function Go and the database each compute within
// one unit).
func ulpsDown(x float64) float64 {
	if x == 0 {
		return 0
	}
	return math.Nextafter(math.Nextafter(x, math.Inf(-1)), math.Inf(-1))
}

func ulpsUp(x float64) float64 {
	if x == 0 {
		return 0
	}
	return math.Nextafter(math.Nextafter(x, math.Inf(1)), math.Inf(1))
}

// funcString renders a RowFunc for messages and plans, as MySQL writes
// it.
func (e *RowExpr) funcString() string {
	x := e.Args[0].String()
	if isDatePartFunc(e.Func) {
		if a := e.Args[0]; a.Kind == RowTemporal {
			return e.Func + "(" + a.Column + ")"
		}
		return e.Func + "(" + temporalOperandString(e.Args[0]) + ")"
	}
	digits := formatLabel(Value{Num: e.Num})
	switch e.Func {
	case FuncRound:
		if e.Op == tiesAway && !e.Args[0].exact() { // a DOUBLE cast to DECIMAL
			return "CAST(" + x + " AS DECIMAL(65, " + digits + "))"
		}
		return "ROUND(" + x + ", " + digits + ")"
	case FuncTruncate, FuncMod, FuncPow:
		return e.Func + "(" + x + ", " + digits + ")"
	case FuncLog:
		return "LOG(" + formatLabel(Value{Num: e.Num}) + ", " + x + ")"
	}
	return e.Func + "(" + x + ")"
}

// roundHalf renders the rounding of the double s to an integer, its ties
// by the rule ties (tiesAway or tiesEven) whatever the backend's own,
// each reading s once (nested roundings stay linear in size):
// PostgreSQL's ROUND of a double rounds to even and of a NUMERIC away
// from zero (s through its text, exact with extra_float_digits = 3:
// the shortest digits of a double lie on the side of a tie it does),
// MariaDB's of a double to even and of a DECIMAL away from zero, and
// SQLite's away from zero, to even by adding and subtracting 1.5·2^52
// (the double sum rounds to nearest, ties to even, where units in the
// last place are 1: roundBounds keeps |s| below 2^51). SQLite adds
// one half before truncating, so it rounds up a double within half a
// unit in the last place below a tie (0.49999999999999994 to 1), which
// no integer of magnitude below 2^50 divided by 10^−d is.
func (r *renderer) roundHalf(s string, ties byte) string {
	switch {
	case r.spec.name == "postgres" && ties == tiesAway:
		return "ROUND(CAST(CAST(" + s + " AS TEXT) AS NUMERIC))"
	case r.spec.name == "mysql" && ties == tiesAway:
		return "ROUND(CAST(" + s + " AS DECIMAL(65, 17)))"
	case r.spec.name == "sqlite" && ties == tiesEven:
		c := "CAST(" + realLiteral(1.5*0x1p52) + " AS " + r.spec.double + ")"
		return "((" + s + " + " + c + ") - " + c + ")"
	}
	return "ROUND(" + s + ")"
}

// rowFunc renders a RowFunc in double precision on the backend: each
// function by its name where the three backends agree on it, ROUND(x, d)
// and TRUNCATE(x, d) as the rounding of x·10^d (or x/10^−d) scaled back
// (SQLite ignores negative digits, PostgreSQL rounds only numerics to
// digits), ROUND's ties by its rule (roundHalf), MOD on PostgreSQL through NUMERIC (it has no remainder of
// doubles), LOG(b, x) as LN(x) over the double nearest ln b, POW as the
// product of x with itself.
func (r *renderer) rowFunc(e *RowExpr) (string, error) {
	if len(e.Args) != 1 {
		return "", fmt.Errorf("sqlrewrite: bad function %s", e)
	}
	if isDatePartFunc(e.Func) {
		return r.datePartSQL(e)
	}
	a, err := r.rowExpr(e.Args[0])
	if err != nil {
		return "", err
	}
	double := func(s string) string { return "CAST(" + s + " AS " + r.spec.double + ")" }
	num := func(x float64) string { return double(realLiteral(x)) }
	switch e.Func {
	case FuncAbs, FuncSqrt, FuncLn, FuncExp:
		return double(e.Func + "(" + a + ")"), nil
	case FuncSign, FuncFloor, FuncCeil:
		return double(e.Func + "(" + a + ")"), nil
	case FuncRound, FuncTruncate:
		if e.Num != math.Trunc(e.Num) || math.Abs(e.Num) > maxRoundDigits {
			return "", fmt.Errorf("sqlrewrite: bad digits %g of %s", e.Num, e)
		}
		scale := num(math.Pow(10, math.Abs(e.Num)))
		scaled := a
		switch {
		case e.Num > 0:
			scaled = "(" + a + " * " + scale + ")"
		case e.Num < 0:
			scaled = "(" + a + " / " + scale + ")"
		}
		var rounded string
		switch {
		case e.Func == FuncRound && (e.Op == tiesAway || e.Op == tiesEven):
			rounded = double(r.roundHalf(scaled, e.Op))
		case e.Func == FuncRound:
			return "", fmt.Errorf("sqlrewrite: bad ties %q of %s", e.Op, e)
		default:
			rounded = double("TRUNC(" + scaled + ")")
			if r.spec.name == "mysql" {
				rounded = "TRUNCATE(" + scaled + ", 0)"
			}
		}
		switch {
		case e.Num > 0:
			return "(" + rounded + " / " + scale + ")", nil
		case e.Num < 0:
			return "(" + rounded + " * " + scale + ")", nil
		}
		return rounded, nil
	case FuncMod:
		if e.Num == 0 {
			return "", fmt.Errorf("sqlrewrite: remainder by 0 in %s", e)
		}
		if r.spec.name == "postgres" {
			// PostgreSQL's MOD takes NUMERICs. A double cast to NUMERIC keeps
			// 15 digits, which may round it away from 0 and the remainder out
			// of its bounds; cast through its text (exact with the session's
			// extra_float_digits = 3, backend.OpenDB), the remainder d − k·c
			// is exact, between 0 and d, below c in magnitude, and rounds
			// back to a double within the same doubles (rounding is monotone).
			return double("MOD(CAST(CAST(" + a + " AS TEXT) AS NUMERIC), CAST(" + realLiteral(e.Num) + " AS NUMERIC))"), nil
		}
		return double("MOD(" + a + ", " + num(e.Num) + ")"), nil
	case FuncPow:
		if e.Num != math.Trunc(e.Num) || e.Num < minPower || e.Num > maxPower {
			return "", fmt.Errorf("sqlrewrite: bad power %s", e)
		}
		factors := make([]string, int(e.Num))
		for i := range factors {
			factors[i] = a
		}
		return "(" + strings.Join(factors, " * ") + ")", nil
	case FuncLog:
		if !(e.Num > 0) || e.Num == 1 {
			return "", fmt.Errorf("sqlrewrite: bad base of %s", e)
		}
		if e.Num == 10 {
			return double("LOG10(" + a + ")"), nil
		}
		return "(" + double("LN("+a+")") + " / " + num(math.Log(e.Num)) + ")", nil
	}
	return "", fmt.Errorf("sqlrewrite: unknown function %q", e.Func)
}

// The date parts of a row expression (RowFunc of a date or timestamp
// operand, Args[0]: a RowTemporal column or a RowConst literal), as
// MySQL's functions of the same names compute them on the value clamped
// to its column's bounds, NULL when it is no date: YEAR, MONTH,
// DAYOFMONTH (DAY), HOUR, MINUTE, SECOND, QUARTER (1–4), DAYOFWEEK (1 =
// Sunday to 7), WEEKDAY (0 = Monday to 6) and DAYOFYEAR (1–366); a
// timestamp with a time zone is read in the backend session's zone, as
// the date keys read it. AVG(HOUR(created_at)) is the mean hour of day,
// MEDIAN(YEAR(birth_date)) the median year of birth.
const (
	FuncYear      = "YEAR"
	FuncMonth     = "MONTH"
	FuncDay       = "DAYOFMONTH"
	FuncHour      = "HOUR"
	FuncMinute    = "MINUTE"
	FuncSecond    = "SECOND"
	FuncQuarter   = "QUARTER"
	FuncDayOfWeek = "DAYOFWEEK"
	FuncWeekday   = "WEEKDAY"
	FuncDayOfYear = "DAYOFYEAR"
)

// dateParts maps the SQL names of the date parts (and EXTRACT's units) to
// their Func and the values they take (YEAR's follow from the bounds).
var dateParts = map[string]struct {
	fn     string
	lo, hi float64
}{
	"year": {FuncYear, 0, 0}, "month": {FuncMonth, 1, 12}, "day": {FuncDay, 1, 31}, "dayofmonth": {FuncDay, 1, 31},
	"hour": {FuncHour, 0, 23}, "minute": {FuncMinute, 0, 59}, "second": {FuncSecond, 0, 59}, "quarter": {FuncQuarter, 1, 4},
	"dayofweek": {FuncDayOfWeek, 1, 7}, "weekday": {FuncWeekday, 0, 6}, "dayofyear": {FuncDayOfYear, 1, 366},
}

// datePartOf returns the date part a call computes: YEAR(x), … or
// EXTRACT(unit FROM x) with a unit among them; ok is false otherwise.
func datePartOf(e ast.ExprNode) (name string, arg ast.ExprNode, ok bool) {
	f, isCall := unparen(e).(*ast.FuncCallExpr)
	if !isCall || f.Schema.L != "" {
		return "", nil, false
	}
	if f.FnName.L == "extract" && len(f.Args) == 2 {
		u, isUnit := f.Args[0].(*ast.TimeUnitExpr)
		if !isUnit {
			return "", nil, false
		}
		name = strings.ToLower(u.Unit.String())
		_, ok = dateParts[name]
		return name, f.Args[1], ok && name != "dayofweek" && name != "weekday" && name != "dayofyear"
	}
	if _, known := dateParts[f.FnName.L]; known && len(f.Args) == 1 {
		return f.FnName.L, f.Args[0], true
	}
	return "", nil, false
}

// isDatePart reports whether e is a date part datePart reads.
func isDatePart(e ast.ExprNode) bool {
	_, _, ok := datePartOf(e)
	return ok
}

// datePart reads a date part of a date or timestamp column or literal
// (datePartOf) as a RowFunc.
func (sc *scope) datePart(e ast.ExprNode) (*RowExpr, error) {
	name, arg, _ := datePartOf(e)
	x, err := sc.temporalOperand(strings.ToUpper(name), arg)
	if err != nil {
		return nil, err
	}
	return &RowExpr{Kind: RowFunc, Func: dateParts[name].fn, Args: []*RowExpr{x}}, nil
}

// datePartBounds is a date part's interval: YEAR's from the operand's
// earliest and latest times, the others' fixed ranges.
func (e *RowExpr) datePartBounds() (interval, error) {
	lo, hi, ok := e.Args[0].timeRange()
	if !ok {
		return interval{}, fmt.Errorf("sqlrewrite: %s of %s, which is no date or timestamp", e.Func, e.Args[0])
	}
	if e.Func == FuncYear {
		return interval{float64(lo.Year()), float64(hi.Year()), 0}, nil
	}
	for _, p := range dateParts {
		if p.fn == e.Func {
			return interval{p.lo, p.hi, 0}, nil
		}
	}
	return interval{}, fmt.Errorf("sqlrewrite: unknown date part %q", e.Func)
}

// isDatePartFunc reports whether fn is a date part's Func.
func isDatePartFunc(fn string) bool {
	for _, p := range dateParts {
		if p.fn == fn {
			return true
		}
	}
	return false
}

// datePartSQL renders a date part from the clamped time value
// (clampedTime) by each backend's functions, as a double: the fields of
// timeFields, the quarter from the month, the day of the week from
// strftime('%w') on SQLite and EXTRACT(DOW) on PostgreSQL (0 = Sunday),
// the day of the year from strftime('%j') and EXTRACT(DOY).
func (r *renderer) datePartSQL(e *RowExpr) (string, error) {
	x, err := r.clampedTime(e.Args[0])
	if err != nil {
		return "", err
	}
	f := r.timeFields(x)
	double := func(s string) string { return "CAST(" + s + " AS " + r.spec.double + ")" }
	dow := map[string]string{"sqlite": "CAST(strftime('%w', " + x + ") AS INTEGER)", "postgres": "CAST(EXTRACT(DOW FROM " + x + ") AS INTEGER)"}[r.spec.name]
	switch e.Func {
	case FuncYear:
		return double(f[0]), nil
	case FuncMonth:
		return double(f[1]), nil
	case FuncDay:
		return double(f[2]), nil
	case FuncHour:
		return double(f[3]), nil
	case FuncMinute:
		return double(f[4]), nil
	case FuncSecond:
		return double(f[5]), nil
	case FuncQuarter:
		return double("FLOOR((" + f[1] + " + 2) / 3.0)"), nil
	case FuncDayOfWeek:
		if dow == "" {
			return double("DAYOFWEEK(" + x + ")"), nil
		}
		return double("(" + dow + " + 1)"), nil
	case FuncWeekday:
		if dow == "" {
			return double("WEEKDAY(" + x + ")"), nil
		}
		return double("((" + dow + " + 6) % 7)"), nil
	case FuncDayOfYear:
		switch r.spec.name {
		case "sqlite":
			return double("CAST(strftime('%j', " + x + ") AS INTEGER)"), nil
		case "postgres":
			return double("EXTRACT(DOY FROM " + x + ")"), nil
		}
		return double("DAYOFYEAR(" + x + ")"), nil
	}
	return "", fmt.Errorf("sqlrewrite: unknown date part %q", e.Func)
}

// isNumericCast reports whether e is CAST(x AS t) or CONVERT(x, t) to a
// number type: DOUBLE, REAL, FLOAT, SIGNED, UNSIGNED or DECIMAL.
func isNumericCast(e ast.ExprNode) bool {
	c, ok := unparen(e).(*ast.FuncCastExpr)
	if !ok {
		return false
	}
	switch c.Tp.GetType() {
	case mysql.TypeDouble, mysql.TypeFloat, mysql.TypeNewDecimal, mysql.TypeLonglong:
		return true
	}
	return false
}

// numericCast reads CAST(x AS t) of a row expression x to a number type
// as MySQL converts a double (Tableau's FLOAT() and INT(), Power BI's
// DECIMAL): DOUBLE, REAL and FLOAT are x (FLOAT read as DOUBLE); SIGNED
// [INTEGER] is x rounded to an integer as ROUND(x) rounds it (a DOUBLE's
// ties to even, as MariaDB casts it), and UNSIGNED too where x is never
// negative (MySQL wraps a negative value); DECIMAL(p, s) (p 10 and s 0
// unless given) is ROUND(x, s) with ties away from zero, as MySQL rounds
// the decimal digits of a double, an exact value, where x's bounds stay within ±(10^(p−s) − 10^−s)
// (beyond, MySQL saturates, refused here), and x itself beyond 15
// decimals.
func (sc *scope) numericCast(top ast.ExprNode, c *ast.FuncCastExpr) (*RowExpr, error) {
	why := cannotBound(top)
	x, err := sc.rowExprIn(top, c.Expr)
	if err != nil {
		return nil, err
	}
	if x.Kind == RowTemporal {
		return nil, why("%s casts the %s column %s to a number (MySQL reads its digits: YEAR(%s), DATEDIFF and TIMESTAMPDIFF give numbers of it)", restore(c), x.Temporal, x.Column, x.Column)
	}
	b, err := x.bounds()
	if err != nil {
		return nil, why("%v", err)
	}
	tp := c.Tp
	switch tp.GetType() {
	case mysql.TypeDouble, mysql.TypeFloat:
		return x, nil
	case mysql.TypeLonglong:
		if mysql.HasUnsignedFlag(tp.GetFlag()) && b.lo < 0 {
			return nil, why("%s of %s, whose bounds [%g, %g] reach below 0 (MySQL wraps a negative value; CAST(... AS SIGNED) or GREATEST(x, 0))", restore(c), x, b.lo, b.hi)
		}
		if math.Max(-b.lo, b.hi) >= 0x1p63 {
			return nil, why("%s of %s, whose bounds [%g, %g] leave the 64-bit integers", restore(c), x, b.lo, b.hi)
		}
		return &RowExpr{Kind: RowFunc, Func: FuncRound, Op: roundTies(x), Args: []*RowExpr{x}}, nil
	}
	precision, scale := tp.GetFlen(), tp.GetDecimal()
	if precision == types.UnspecifiedLength {
		precision = 10
	}
	if scale == types.UnspecifiedLength {
		scale = 0
	}
	if limit := math.Pow(10, float64(precision-scale)) - math.Pow(10, -float64(scale)); math.Max(-b.lo, b.hi) > limit {
		return nil, why("%s of %s, whose bounds [%g, %g] leave ±%g (MySQL would saturate there)", restore(c), x, b.lo, b.hi, limit)
	}
	if scale > maxRoundDigits {
		return x, nil
	}
	return &RowExpr{Kind: RowFunc, Func: FuncRound, Op: tiesAway, Num: float64(scale), Args: []*RowExpr{x}}, nil
}
