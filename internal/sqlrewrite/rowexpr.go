package sqlrewrite

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

// RowExprKind is the kind of a RowExpr node.
type RowExprKind int

// The row expression nodes.
const (
	// RowColumn is a declared numeric column, read clamped to its declared
	// bounds (Lower, Upper) by the rule of Render.
	RowColumn RowExprKind = iota + 1
	// RowConst is the number Num.
	RowConst
	// RowOp is Args[0] Op Args[1], Op one of + - * /, or the smaller
	// (Op 'L', LEAST) or larger (Op 'G', GREATEST) of the two, NULL when
	// either is.
	RowOp
	// RowCase is CASE WHEN When[0] THEN Args[0] … ELSE Args[len(When)] END;
	// a nil ELSE is NULL.
	RowCase
	// RowTemporal is a date or timestamp column (Temporal) read as its
	// number, catalog's day or second from 1970-01-01 (a timestamp's
	// fraction of a second dropped): NULL when the value is not a date by
	// the reading rule of dates.go, Lower or Upper (the declared bounds)
	// when it lies outside them. It is the argument of the order
	// statistics of a date (MIN, MAX, MEDIAN, PERCENTILE_CONT) and an
	// operand of the differences DATEDIFF and TIMESTAMPDIFF.
	RowTemporal
	// RowIntDiv is Args[0] divided by the positive integer Num and
	// rounded to an integer: toward zero when Op is 't' (TIMESTAMPDIFF's
	// units of a difference of seconds), down when Op is 'f' (the day of
	// a timestamp's second number, for DATEDIFF). The database divides in
	// double precision, which is exact here for an integer dividend of
	// magnitude at most 2^52: the exact quotient of integers is an integer
	// or at least 1/Num from one, and rounding it to nearest moves it by
	// at most |x|/Num·2^−53 ≤ 1/(2·Num).
	RowIntDiv
	// RowMonthDiff is the calendar months from Args[0] to Args[1], each a
	// date or timestamp operand (RowTemporal, or RowConst with Temporal
	// saying whether Num is a day or a second number), as MySQL's
	// TIMESTAMPDIFF(MONTH, a, b) counts them (catalog.MonthsBetween, the
	// day and time of day compared to the microsecond: a timestamp's
	// fraction of a second counts, as in MySQL).
	// TIMESTAMPDIFF's QUARTER and YEAR are RowIntDiv of it by 3 and 12.
	RowMonthDiff
	// RowFunc is the numeric function Func (FuncAbs, …; rowfunc.go) of
	// Args[0], with Num its constant argument: ROUND's and TRUNCATE's
	// digits, MOD's divisor, POW's exponent, LOG's base.
	RowFunc
	// RowSecondDiff is the whole seconds from Args[0] to Args[1], date or
	// timestamp operands as RowMonthDiff's: their exact difference,
	// a timestamp's fraction of a second included, truncated toward
	// zero, as MySQL's TIMESTAMPDIFF(SECOND, a, b) computes it
	// ('2024-01-01 00:00:05.5' to '2024-01-01 00:01:05' is 59 seconds,
	// not the 60 of the floored second numbers). TIMESTAMPDIFF's MINUTE,
	// HOUR, DAY and WEEK are RowIntDiv of it ('t'), exactly its
	// truncated quotient, as the seconds are whole.
	RowSecondDiff
)

// RowExpr is an arithmetic row expression of declared numeric columns,
// the argument of an aggregate over two or more columns (SUM(age +
// income), AVG(CASE WHEN age > 90 THEN income ELSE 0 END)). The database
// computes it per row in double precision from the clamped operands, and
// the aggregate reads it as a column whose bounds are Bounds().
//
// Its value follows SQL: an unreadable operand (NULL; on SQLite text or a
// blob in a numeric column) makes the expression NULL, skipped by every
// aggregate; a WHEN condition on an unreadable value is not true, so the
// next WHEN or the ELSE applies.
type RowExpr struct {
	Kind RowExprKind
	// Column is the column's name (catalog spelling in a Select, backend
	// name in a Fetch); Lower and Upper its declared bounds.
	Column       string
	Lower, Upper float64
	// Integer is set on a RowColumn declared integer: its readable values
	// are whole numbers, so a divisor of it that is not 0 is at least 1
	// in magnitude (wholeNumbers).
	Integer bool
	// Temporal is the type of a RowTemporal column (catalog.Date or
	// catalog.Timestamp).
	Temporal catalog.ColumnType
	// Seconds is set on the RowTemporal of a timestamp column that is
	// UNIX_TIMESTAMP(col): the same second number, read and bounded
	// alike, but a number of seconds rather than the timestamp it names
	// (TemporalOf is false), so its aggregates are numbers.
	Seconds bool
	Num     float64
	Op      byte
	// Func is a RowFunc's function.
	Func string
	Args []*RowExpr
	// When are the conditions of a CASE, each an AND of conditions on
	// columns (catalog names in a Select, backend names in a Fetch).
	When [][]Condition
}

// DerivedColumn is a row expression a fetch computes as a column of the
// table: the fetch reads FROM (SELECT *, Expr AS Name FROM t) AS t′
// (fenced, unless on MySQL the fetch reads Name once per row, and on
// MySQL narrowed to what the fetch reads: source), so every fetch shape
// applies to Name as to a stored column.
type DerivedColumn struct {
	// Name is the computed column's name in the fetch.
	Name string
	Expr *RowExpr
}

// Bounds returns an interval [lo, hi] that contains every value the
// database can compute for e from operands within their declared bounds,
// by interval arithmetic with directed rounding: each endpoint is the
// exact result of the operation on the operands' endpoints, rounded
// outward to float64 (big.Float, 53 bits, ToNegativeInf for lo and
// ToPositiveInf for hi). The database's double arithmetic rounds each
// operation to nearest, a monotone map, so its result on operands inside
// the operand intervals lies between the rounded-to-nearest results at the
// endpoints, hence inside the outward-rounded ones. Endpoints are then
// widened to 0 or to a magnitude of at least catalog.MinBoundMagnitude
// (the clamp's rule for usable bounds). A CASE's interval is the hull of
// its results' (a NULL result adds nothing).
//
// Where the interval holds one nonzero value only, singleValueBounds
// widens it.
//
// It fails, with the reason, for a division by an expression whose
// interval contains 0, for bounds of magnitude above 2^430, and where a
// product or quotient could leave double precision's range (PostgreSQL
// and MariaDB raise an error on overflow, PostgreSQL also when a product
// or quotient of nonzero values rounds to 0; whether a statement errs must
// not depend on the data): every intermediate value must be 0 or of
// magnitude in [2^-1000, 2^1000]. The smallest nonzero magnitude of a
// clamped column is max(MinBoundMagnitude, distance of its bounds from
// 0); of a product the product of its operands'; of a quotient the
// dividend's over the divisor's largest magnitude; of a sum or difference
// 2^-53 times the smaller of its operands' (a nonzero sum of doubles is at
// least half the smaller ulp).
func (e *RowExpr) Bounds() (lo, hi float64, err error) {
	v, err := e.bounds()
	if err != nil {
		return 0, 0, err
	}
	lo, hi = widenTiny(v.lo, -1), widenTiny(v.hi, 1)
	if lo == hi && lo != 0 {
		lo, hi = singleValueBounds(lo)
	}
	if math.Abs(lo) > maxMagnitude || math.Abs(hi) > maxMagnitude {
		return 0, 0, fmt.Errorf("its derived bounds [%g, %g] exceed 2^430 in magnitude", lo, hi)
	}
	return lo, hi, nil
}

// singleValueBounds are the bounds of an expression whose only value is c
// (SIGN(age + 1) over age in [0, 100]): every mechanism needs lower <
// upper, so the interval reaches from c toward 0 by one, to 0 where c is
// within one of it, or to the next double where c − 1 rounds to c (c = 0,
// [0, 0], is kept: the planner answers a sum of zeros as such). The
// values, all c, lie inside, so nothing is
// clamped, and the sensitivity stays that of c's magnitude (a sum's is
// max(|lo|, |hi|) = |c|). The bounds depend on the statement and the
// declared bounds alone, as every derived bound does.
func singleValueBounds(c float64) (lo, hi float64) {
	switch {
	case math.Abs(c) <= 1:
		return min(c, 0), max(c, 0)
	case c > 0:
		lo = c - 1
		if lo == c {
			lo = math.Nextafter(c, 0)
		}
		return lo, c
	default:
		hi = c + 1
		if hi == c {
			hi = math.Nextafter(c, 0)
		}
		return c, hi
	}
}

// interval is the range of a row expression's values: within [lo, hi],
// and 0 or of magnitude at least 2^tiny (tiny +Inf: always 0).
type interval struct{ lo, hi, tiny float64 }

// Limits of the intermediate values of a row expression (Bounds): 2^rowTiny
// and rowHuge.
const (
	rowTiny = -1000
	rowHuge = 0x1p1000
)

// bounds is e's interval; where it excludes 0, its nonzero magnitude is
// at least its endpoint's nearer to 0 (GREATEST(x, 1) is never below 1,
// whatever x's smallest magnitude).
func (e *RowExpr) bounds() (interval, error) {
	v, err := e.hull()
	switch {
	case err != nil:
	case v.lo > 0:
		v.tiny = math.Max(v.tiny, math.Log2(v.lo))
	case v.hi < 0:
		v.tiny = math.Max(v.tiny, math.Log2(-v.hi))
	}
	return v, err
}

// hull is bounds' interval before its smallest magnitude is tightened.
func (e *RowExpr) hull() (interval, error) {
	switch e.Kind {
	case RowColumn, RowTemporal:
		tiny := catalog.MinBoundMagnitude
		if e.Lower > 0 {
			tiny = math.Max(tiny, e.Lower)
		} else if e.Upper < 0 {
			tiny = math.Max(tiny, -e.Upper)
		}
		return interval{e.Lower, e.Upper, math.Log2(tiny)}, nil
	case RowConst:
		if e.Num == 0 {
			return interval{0, 0, math.Inf(1)}, nil // no nonzero value
		}
		return interval{e.Num, e.Num, math.Log2(math.Abs(e.Num))}, nil
	case RowCase:
		v := interval{math.Inf(1), math.Inf(-1), math.Inf(1)}
		for _, a := range e.Args {
			if a == nil {
				continue
			}
			w, err := a.bounds()
			if err != nil {
				return interval{}, err
			}
			v = interval{math.Min(v.lo, w.lo), math.Max(v.hi, w.hi), math.Min(v.tiny, w.tiny)}
		}
		if v.lo > v.hi { // every result NULL: the expression is always NULL
			return interval{0, 0, math.Inf(1)}, nil
		}
		return v, nil
	case RowOp:
		a, err := e.Args[0].bounds()
		if err != nil {
			return interval{}, err
		}
		b, err := e.Args[1].bounds()
		if err != nil {
			return interval{}, err
		}
		if e.Op == '*' && e.Args[0].String() == e.Args[1].String() {
			return e.squareBounds(a)
		}
		var v interval
		switch e.Op {
		case 'L': // an operand's value, exactly: no rounding
			v = interval{math.Min(a.lo, b.lo), math.Min(a.hi, b.hi), math.Min(a.tiny, b.tiny)}
		case 'G':
			v = interval{math.Max(a.lo, b.lo), math.Max(a.hi, b.hi), math.Min(a.tiny, b.tiny)}
		case '+':
			v = interval{directed(a.lo, b.lo, '+', big.ToNegativeInf), directed(a.hi, b.hi, '+', big.ToPositiveInf), math.Min(a.tiny, b.tiny) - 53}
		case '-':
			v = interval{directed(a.lo, b.hi, '-', big.ToNegativeInf), directed(a.hi, b.lo, '-', big.ToPositiveInf), math.Min(a.tiny, b.tiny) - 53}
		default:
			divisors := [][2]float64{{b.lo, b.hi}}
			if e.Op == '/' && b.lo <= 0 && b.hi >= 0 {
				if !e.Args[1].wholeNumbers() {
					return interval{}, fmt.Errorf("it divides by %s, whose bounds [%g, %g] contain 0", e.Args[1], b.lo, b.hi)
				}
				// A whole-number divisor is read as NULL unless at least 1 in
				// magnitude (NULL for 0, as MySQL divides): the quotient is
				// that of a divisor in [lo, −1] or [1, hi] (nullableDivisor).
				divisors = nil
				if b.lo <= -1 {
					divisors = append(divisors, [2]float64{b.lo, -1})
				}
				if b.hi >= 1 {
					divisors = append(divisors, [2]float64{1, b.hi})
				}
				if len(divisors) == 0 {
					return interval{}, errors.New("it divides by zero")
				}
			}
			v = interval{math.Inf(1), math.Inf(-1), a.tiny + b.tiny}
			if e.Op == '/' {
				v.tiny = a.tiny - math.Log2(math.Max(math.Abs(b.lo), math.Abs(b.hi)))
			}
			for _, x := range []float64{a.lo, a.hi} {
				for _, d := range divisors {
					for _, y := range d {
						v.lo = math.Min(v.lo, directed(x, y, e.Op, big.ToNegativeInf))
						v.hi = math.Max(v.hi, directed(x, y, e.Op, big.ToPositiveInf))
					}
				}
			}
			if v.tiny < rowTiny {
				return interval{}, fmt.Errorf("a nonzero value of %s could be as small as 2^%.0f, which double precision could round to 0", e, math.Floor(v.tiny))
			}
		}
		if math.Abs(v.lo) > rowHuge || math.Abs(v.hi) > rowHuge {
			return interval{}, fmt.Errorf("%s could reach %g in magnitude, beyond 2^1000", e, math.Max(math.Abs(v.lo), math.Abs(v.hi)))
		}
		return v, nil
	case RowIntDiv:
		return e.intDivBounds()
	case RowMonthDiff:
		return e.monthDiffBounds()
	case RowSecondDiff:
		return e.secondDiffBounds()
	case RowFunc:
		return e.funcBounds()
	}
	return interval{}, fmt.Errorf("sqlrewrite: unknown row expression kind %d", int(e.Kind))
}

// squareBounds is the interval of x * x, e, where both operands are the
// expression x of interval a: within one row they are the same expression
// of the same values (String writes every field that changes a value,
// and every row expression is a function of its row), so the product is
// x², as POW(x, 2) bounds it (powBounds: 0 at least when a holds 0, the
// products rounded outward as the database multiplies). (age - 50) *
// (age - 50) over age in [0, 100] is in [0, 2500], where the product of
// two independent intervals is [-2500, 2500].
func (e *RowExpr) squareBounds(a interval) (interval, error) {
	v := powBounds(a, 2)
	if v.lo == 0 && v.hi == 0 {
		v.tiny = math.Inf(1)
	}
	if v.hi > rowHuge {
		return interval{}, fmt.Errorf("%s could reach %g in magnitude, beyond 2^1000", e, v.hi)
	}
	if v.tiny < rowTiny {
		return interval{}, fmt.Errorf("a nonzero value of %s could be as small as 2^%.0f, which double precision could round to 0", e, math.Floor(v.tiny))
	}
	return v, nil
}

// intDivBounds is RowIntDiv's interval: the quotient of each endpoint
// rounded outward (directed), then rounded to an integer by the same
// monotone map as the database's result, which therefore lies between
// them whatever its division's rounding. Its nonzero values are
// integers, of magnitude at least 1.
func (e *RowExpr) intDivBounds() (interval, error) {
	if len(e.Args) != 1 || !(e.Num >= 1 && e.Num == math.Trunc(e.Num)) || e.Op != 't' && e.Op != 'f' {
		return interval{}, fmt.Errorf("sqlrewrite: bad integer division %s", e)
	}
	a, err := e.Args[0].bounds()
	if err != nil {
		return interval{}, err
	}
	round := math.Floor
	if e.Op == 't' {
		round = math.Trunc
	}
	lo := round(directed(a.lo, e.Num, '/', big.ToNegativeInf))
	hi := round(directed(a.hi, e.Num, '/', big.ToPositiveInf))
	return interval{lo, hi, 0}, nil
}

// monthDiffBounds is RowMonthDiff's interval: the months from the latest
// a to the earliest b and from the earliest a to the latest b, as the
// count never decreases as b grows or a shrinks.
func (e *RowExpr) monthDiffBounds() (interval, error) {
	lo, hi, err := e.operandRanges("month")
	if err != nil {
		return interval{}, err
	}
	return interval{float64(catalog.MonthsBetween(hi[0], lo[1])), float64(catalog.MonthsBetween(lo[0], hi[1])), 0}, nil
}

// secondDiffBounds is RowSecondDiff's interval: the differences of the
// operands' second numbers at their bounds (whole seconds, so that an
// exact difference between them truncates to an integer between them),
// the difference growing with b and shrinking with a.
func (e *RowExpr) secondDiffBounds() (interval, error) {
	lo, hi, err := e.operandRanges("second")
	if err != nil {
		return interval{}, err
	}
	return interval{float64(lo[1].Unix() - hi[0].Unix()), float64(hi[1].Unix() - lo[0].Unix()), 0}, nil
}

// operandRanges returns the earliest and latest times of the two date or
// timestamp operands of a difference (of months or seconds, which names
// it in errors).
func (e *RowExpr) operandRanges(of string) (lo, hi [2]time.Time, err error) {
	if len(e.Args) != 2 {
		return lo, hi, fmt.Errorf("sqlrewrite: bad %s difference %s", of, e)
	}
	for i, a := range e.Args {
		var ok bool
		if lo[i], hi[i], ok = a.timeRange(); !ok {
			return lo, hi, fmt.Errorf("sqlrewrite: a %s difference of %s, which is no date or timestamp", of, a)
		}
	}
	return lo, hi, nil
}

// timeRange returns the earliest and latest times a date or timestamp
// operand (RowTemporal or RowConst with Temporal) takes.
func (e *RowExpr) timeRange() (lo, hi time.Time, ok bool) {
	c := catalog.Column{Type: e.Temporal}
	switch {
	case !c.Temporal():
		return time.Time{}, time.Time{}, false
	case e.Kind == RowTemporal:
		return c.TimeOf(e.Lower), c.TimeOf(e.Upper), true
	case e.Kind == RowConst:
		return c.TimeOf(e.Num), c.TimeOf(e.Num), true
	}
	return time.Time{}, time.Time{}, false
}

// wholeNumbers reports whether every value e takes is a whole number:
// integer columns and constants, +, −, × and LEAST/GREATEST of whole
// numbers, the date numbers and their rounded quotients and month counts,
// and the functions that round (FLOOR, CEIL, SIGN, ROUND and TRUNCATE to
// d ≤ 0 digits) or keep whole numbers whole (ABS, POW, MOD by a whole
// number), a CASE whose results all are.
func (e *RowExpr) wholeNumbers() bool {
	switch e.Kind {
	case RowColumn:
		return e.Integer
	case RowConst:
		return e.Num == math.Trunc(e.Num)
	case RowTemporal, RowIntDiv, RowMonthDiff, RowSecondDiff:
		return true
	case RowOp:
		return strings.ContainsRune("+-*LG", rune(e.Op)) && e.Args[0].wholeNumbers() && e.Args[1].wholeNumbers()
	case RowCase:
		for _, a := range e.Args {
			if a != nil && !a.wholeNumbers() {
				return false
			}
		}
		return true
	case RowFunc:
		if isDatePartFunc(e.Func) {
			return true
		}
		switch e.Func {
		case FuncFloor, FuncCeil, FuncSign:
			return true
		case FuncRound, FuncTruncate:
			return e.Num <= 0
		case FuncAbs, FuncPow:
			return e.Args[0].wholeNumbers()
		case FuncMod:
			return e.Num == math.Trunc(e.Num) && e.Args[0].wholeNumbers()
		}
	}
	return false
}

// nullableDivisor reports whether e divides by a whole-number expression
// whose bounds contain 0, which Render reads as NULL unless at least 1 in
// magnitude (Bounds derives the quotient's interval so).
func (e *RowExpr) nullableDivisor() bool {
	if e.Kind != RowOp || e.Op != '/' {
		return false
	}
	b, err := e.Args[1].bounds()
	return err == nil && b.lo <= 0 && b.hi >= 0 && e.Args[1].wholeNumbers()
}

// nullColumns returns the columns whose NULLs are e's where the backend
// enforces column types (MySQL, MariaDB, PostgreSQL): as Render computes
// e, it is NULL on a row exactly when one of them is. That holds for a
// clamped column (NULL only for NULL), a constant (never), + − × and
// LEAST/GREATEST (NULL exactly when an operand is: Bounds keeps every
// result finite), a division by an expression whose interval excludes 0
// (never by zero), the integer divisions, and the functions defined on
// every double (ABS, SIGN, FLOOR, CEIL, ROUND, TRUNCATE, MOD by a
// nonzero constant, POW). ok is false where anything else can make e
// NULL: a CASE (a WHEN that chooses a NULL or a missing ELSE), a
// divisor read as NULL near 0 (nullableDivisor), a date (NULL when
// unreadable), SQRT, LN, LOG and EXP (whose domains MySQL answers with
// NULL outside).
func (e *RowExpr) nullColumns() (cols []string, ok bool) {
	switch e.Kind {
	case RowColumn:
		return []string{e.Column}, true
	case RowConst:
		return nil, e.Temporal == ""
	case RowOp:
		if len(e.Args) != 2 || !strings.ContainsRune("+-*/LG", rune(e.Op)) || e.nullableDivisor() {
			return nil, false
		}
		if e.Op == '/' {
			if b, err := e.Args[1].bounds(); err != nil || b.lo <= 0 && b.hi >= 0 {
				return nil, false
			}
		}
	case RowIntDiv:
	case RowFunc:
		switch e.Func {
		case FuncAbs, FuncSign, FuncFloor, FuncCeil, FuncRound, FuncTruncate, FuncMod, FuncPow:
		default:
			return nil, false
		}
	default:
		return nil, false
	}
	for _, a := range e.Args {
		if a == nil {
			return nil, false
		}
		c, ok := a.nullColumns()
		if !ok {
			return nil, false
		}
		cols = append(cols, c...)
	}
	slices.Sort(cols)
	return slices.Compact(cols), len(e.Args) > 0
}

// directed returns x op y rounded to float64 in mode m: exact arithmetic
// on the two float64 operands, then one rounding in mode m. A result below
// catalog.MinBoundMagnitude in magnitude (where float64 would leave the
// normal range) is rounded outward to 0 or ±MinBoundMagnitude.
func directed(x, y float64, op byte, m big.RoundingMode) float64 {
	a, b := new(big.Float).SetFloat64(x), new(big.Float).SetFloat64(y)
	z := new(big.Float).SetPrec(53).SetMode(m)
	switch op {
	case '+':
		z.Add(a, b)
	case '-':
		z.Sub(a, b)
	case '*':
		z.Mul(a, b)
	default:
		z.Quo(a, b)
	}
	f, _ := z.Float64()
	if z.Sign() != 0 && math.Abs(f) < catalog.MinBoundMagnitude {
		switch {
		case m == big.ToNegativeInf && z.Sign() < 0:
			return -catalog.MinBoundMagnitude
		case m == big.ToPositiveInf && z.Sign() > 0:
			return catalog.MinBoundMagnitude
		}
		return 0
	}
	if f == 0 {
		return 0 // not −0, which x − x rounds to toward −∞
	}
	return f
}

// widenTiny widens a bound of magnitude below catalog.MinBoundMagnitude
// outward (dir -1 for a lower bound, +1 for an upper) to 0 or to
// ±MinBoundMagnitude.
func widenTiny(b float64, dir int) float64 {
	if b == 0 || math.Abs(b) >= catalog.MinBoundMagnitude {
		return b
	}
	if (b > 0) == (dir > 0) {
		return math.Copysign(catalog.MinBoundMagnitude, b)
	}
	return 0
}

// String renders the expression for messages and plans.
func (e *RowExpr) String() string {
	switch e.Kind {
	case RowColumn:
		return e.Column
	case RowTemporal:
		if e.Seconds {
			return "unix_timestamp(" + e.Column + ")"
		}
		return temporalNumber[e.Temporal] + "(" + e.Column + ")"
	case RowConst:
		return formatLabel(Value{Num: e.Num})
	case RowOp:
		if f, ok := extremeNames[e.Op]; ok {
			return f + "(" + e.Args[0].String() + ", " + e.Args[1].String() + ")"
		}
		return "(" + e.Args[0].String() + " " + string(e.Op) + " " + e.Args[1].String() + ")"
	case RowMonthDiff:
		return "MONTHS(" + temporalOperandString(e.Args[0]) + ", " + temporalOperandString(e.Args[1]) + ")"
	case RowSecondDiff:
		return "SECONDS(" + temporalOperandString(e.Args[0]) + ", " + temporalOperandString(e.Args[1]) + ")"
	case RowFunc:
		return e.funcString()
	case RowIntDiv:
		f := map[byte]string{'t': "TRUNCATE", 'f': "FLOOR"}[e.Op]
		return f + "(" + e.Args[0].String() + " / " + formatLabel(Value{Num: e.Num}) + ")"
	}
	var sb strings.Builder
	sb.WriteString("CASE")
	for i, w := range e.When {
		conds := make([]string, len(w))
		for j, c := range w {
			conds[j] = describeCondition(c)
		}
		result := "NULL"
		if e.Args[i] != nil {
			result = e.Args[i].String()
		}
		sb.WriteString(" WHEN " + strings.Join(conds, " AND ") + " THEN " + result)
	}
	if last := e.Args[len(e.When)]; last != nil {
		sb.WriteString(" ELSE " + last.String())
	}
	sb.WriteString(" END")
	return sb.String()
}

// temporalOperandString renders a date or timestamp operand: a literal
// as its text, a column as its number.
func temporalOperandString(x *RowExpr) string {
	switch x.Kind {
	case RowConst:
		c := catalog.Column{Type: x.Temporal}
		return "'" + c.FormatTemporal(x.Num) + "'"
	}
	return x.String()
}

// DescribeTextFunction writes f of the column col as the statement's
// comparison, for EXPLAIN and messages: LOWER(col) = "s", LEFT(col, 3) =
// "abc", LOCATE("s", col) > 0.
func DescribeTextFunction(col string, f TextFunction) string {
	switch f.Func {
	case "left", "right":
		return fmt.Sprintf("%s(%s, %d) = %s", strings.ToUpper(f.Func), col, f.Length, strconv.Quote(f.Value))
	case "locate":
		return fmt.Sprintf("LOCATE(%s, %s) > 0", strconv.Quote(f.Value), col)
	}
	return fmt.Sprintf("%s(%s) = %s", strings.ToUpper(f.Func), col, strconv.Quote(f.Value))
}

// describeCondition renders a condition for messages and for
// RowExpr.String, which identifies derived columns and releases: it
// writes every field that changes which rows the condition holds for.
func describeCondition(c Condition) string {
	var s string
	switch {
	case c.IsNull && c.Complement:
		return c.Column + " IS NOT NULL"
	case c.IsNull:
		return c.Column + " IS NULL"
	case c.Cell != nil:
		s = fmt.Sprintf("%s IN date cell %d of %v", c.Column, c.Cell.Index, c.Cell.Axis)
	case c.Scalar != nil:
		s = DescribeScalarBound(c.Column, c.Temporal, c.Scalar)
	case c.Function != nil:
		s = DescribeTextFunction(c.Column, *c.Function)
	case c.Like != nil:
		col := c.Column
		if c.LikeCase != "" {
			col = strings.ToUpper(c.LikeCase) + "(" + col + ")"
		}
		s = col + " LIKE " + strconv.Quote(*c.Like)
	case c.Range != nil:
		end := func(x float64, micros int32, exact string) string {
			switch {
			case c.Temporal != "":
				col := catalog.Column{Type: c.Temporal}
				return "'" + col.FormatTemporalMicros(x, micros) + "'"
			case exact != "":
				return exact
			}
			return formatLabel(Value{Num: x})
		}
		var parts []string
		if c.Range.HasLower {
			op := ">="
			if c.Range.LowerOpen {
				op = ">"
			}
			parts = append(parts, c.Column+" "+op+" "+end(c.Range.Lower, c.Range.LowerMicros, c.Range.LowerExact))
		}
		if c.Range.HasUpper {
			op := "<="
			if c.Range.UpperOpen {
				op = "<"
			}
			parts = append(parts, c.Column+" "+op+" "+end(c.Range.Upper, c.Range.UpperMicros, c.Range.UpperExact))
		}
		s = strings.Join(parts, " AND ")
		if len(parts) == 0 {
			s = c.Column + " IS NOT NULL"
		}
	default:
		vals := make([]string, len(c.In))
		for i, v := range c.In {
			vals[i] = formatLabel(v)
			if !v.IsText && v.Decimal != "" {
				vals[i] = v.Decimal
			}
		}
		s = c.Column + " IN (" + strings.Join(vals, ", ") + ")"
	}
	if c.Complement {
		s = "(NOT (" + s + ") OR " + c.Column + " IS NULL)"
	}
	return s
}

// rowExprHint names the supported row expressions in refusals.
const rowExprHint = "aggregates take a declared column or a row expression of declared numeric columns and numbers with + - * /, " +
	"division by an expression whose bounds exclude 0 or of whole numbers (NULL when 0), CASE WHEN conditions THEN expression ... [ELSE expression] END, LEAST and GREATEST, COALESCE(col, number), " +
	"ABS, SIGN, FLOOR, CEIL, ROUND, TRUNCATE, MOD or % and DIV by a constant, POW(x, 2..4), SQRT, LN, LOG, LOG2, LOG10 and EXP, CAST to DOUBLE, SIGNED or DECIMAL, date parts, " +
	"DATEDIFF(a, b) and TIMESTAMPDIFF(unit, a, b) of date and timestamp columns and literals"

// rowExpr reads e as a RowExpr, refusing with the reason what it cannot
// bound.
func (sc *scope) rowExpr(e ast.ExprNode) (*RowExpr, error) {
	return sc.rowExprIn(e, e)
}

// cannotBound returns the refusal of an aggregate of top whose bounds
// cannot be derived, for a reason written by format and args, naming the
// supported row expressions.
func cannotBound(top ast.ExprNode) func(format string, args ...any) error {
	return func(format string, args ...any) error {
		return refuseQuery("an aggregate of %s, whose bounds cannot be derived: %s (%s)", restore(top), fmt.Sprintf(format, args...), rowExprHint)
	}
}

// rowExprIn is rowExpr on a part e of the aggregate's argument top (named
// in refusals).
func (sc *scope) rowExprIn(top, e ast.ExprNode) (*RowExpr, error) {
	why := cannotBound(top)
	if v, ok := literal(e); ok {
		if v.Null || v.IsText {
			return nil, why("%s is not a number", restore(unparen(e)))
		}
		if math.Abs(v.Num) > maxMagnitude || v.Num != 0 && math.Abs(v.Num) < catalog.MinBoundMagnitude {
			return nil, why("the constant %g is not 0 or of magnitude in [2^-400, 2^430]", v.Num)
		}
		return &RowExpr{Kind: RowConst, Num: v.Num}, nil
	}
	if c, ok := asCase(e); ok {
		e = c // IF, NULLIF and a simple CASE as the searched CASE they are
	}
	switch n := unparen(e).(type) {
	case *ast.ColumnNameExpr:
		col, err := sc.column(n.Name, "field list")
		if err != nil {
			return nil, err
		}
		lo, hi, ok := col.Bounds()
		if !ok && col.Temporal() {
			return nil, why("%s is a %s column (DATEDIFF(%s, ...) gives days, TIMESTAMPDIFF(unit, ..., %s) units)", col.Name, col.Type, col.Name, col.Name)
		}
		if !ok {
			return nil, why("%s is a text column", col.Name)
		}
		return &RowExpr{Kind: RowColumn, Column: col.Name, Lower: lo, Upper: hi, Integer: col.Type == catalog.Integer}, nil
	case *ast.UnaryOperationExpr:
		if n.Op == opcode.Minus {
			x, err := sc.rowExprIn(top, n.V)
			if err != nil {
				return nil, err
			}
			return &RowExpr{Kind: RowOp, Op: '-', Args: []*RowExpr{{Kind: RowConst}, x}}, nil
		}
	case *ast.BinaryOperationExpr:
		if isRowFunc(n) {
			return sc.rowFunc(top, n)
		}
		if isDatePart(n) {
			return sc.datePart(n)
		}
		ops := map[opcode.Op]byte{opcode.Plus: '+', opcode.Minus: '-', opcode.Mul: '*', opcode.Div: '/'}
		op, ok := ops[n.Op]
		if !ok {
			return nil, why("the operator %s", n.Op)
		}
		l, err := sc.rowExprIn(top, n.L)
		if err != nil {
			return nil, err
		}
		r, err := sc.rowExprIn(top, n.R)
		if err != nil {
			return nil, err
		}
		return &RowExpr{Kind: RowOp, Op: op, Args: []*RowExpr{l, r}}, nil
	case *ast.FuncCallExpr:
		if isDateDiff(n) {
			return sc.dateDiff(n)
		}
		if isTimestampDiff(n) {
			return sc.timestampDiff(n)
		}
		if isUnixTimestamp(n) {
			return sc.unixTimestamp(n)
		}
		if isCoalesce(n) {
			return sc.coalesce(top, n)
		}
		if isRowFunc(n) {
			return sc.rowFunc(top, n)
		}
		if isDatePart(n) {
			return sc.datePart(n)
		}
		if isExtreme(n) {
			var x *RowExpr
			for i, a := range n.Args {
				y, err := sc.rowExprIn(top, a)
				if err != nil {
					return nil, err
				}
				if i == 0 {
					x = y
				} else {
					x = &RowExpr{Kind: RowOp, Op: extremeOps[n.FnName.L], Args: []*RowExpr{x, y}}
				}
			}
			return x, nil
		}
	case *ast.FuncCastExpr:
		if isNumericCast(n) {
			return sc.numericCast(top, n)
		}
	case *ast.CaseExpr: // searched (asCase above)
		x := &RowExpr{Kind: RowCase}
		for _, w := range n.WhenClauses {
			conds, err := sc.conjunctionAt(w.Expr, rowCaseSite)
			if err != nil {
				return nil, err
			}
			res, err := sc.rowResult(top, w.Result)
			if err != nil {
				return nil, err
			}
			x.When, x.Args = append(x.When, conds), append(x.Args, res)
		}
		var els *RowExpr
		if n.ElseClause != nil {
			var err error
			if els, err = sc.rowResult(top, n.ElseClause); err != nil {
				return nil, err
			}
		}
		x.Args = append(x.Args, els)
		return x, nil
	}
	return nil, why("%s is not a column, a number, arithmetic or CASE", restore(unparen(e)))
}

// rowResult reads a CASE result: NULL (nil) or a row expression.
func (sc *scope) rowResult(top, e ast.ExprNode) (*RowExpr, error) {
	if v, ok := literal(e); ok && v.Null {
		return nil, nil
	}
	return sc.rowExprIn(top, e)
}

// Sourced returns a copy of e with its column names mapped by source
// (catalog name to backend name).
func (e *RowExpr) Sourced(source func(string) string) *RowExpr {
	if e == nil {
		return nil
	}
	out := *e
	if e.Kind == RowColumn || e.Kind == RowTemporal {
		out.Column = source(e.Column)
	}
	out.Args = make([]*RowExpr, len(e.Args))
	for i, a := range e.Args {
		out.Args[i] = a.Sourced(source)
	}
	out.When = make([][]Condition, len(e.When))
	for i, w := range e.When {
		for _, c := range w {
			c.Column = source(c.Column)
			out.When[i] = append(out.When[i], c)
		}
	}
	return &out
}

// rowExprAggregate answers an aggregate of a row expression that
// affineAggregate and conditionalAggregate do not (two or more columns,
// a CASE with an ELSE value or arithmetic results): SUM, AVG, VARIANCE,
// STDDEV, and MIN/MAX as the DP 0th/100th percentile (and, by
// rowExprFunction, MEDIAN, PERCENTILE_CONT and IQR), each read on
// the expression as on a column whose bounds are RowExpr.Bounds (the
// planner derives that column, planner.withRowExprs). ok is false when e
// is not such an aggregate (the caller's other rules apply).
//
// Guarantee: the releases are those of the same aggregates of a declared
// column with the derived bounds, with their guarantees: every mechanism
// clamps the computed value to the bounds it was given (Render), so its
// sensitivity holds whatever the expression computes; Bounds only makes
// that clamp a no-op for every value the database can compute.
func (qb *queryBuilder) rowExprAggregate(a *ast.AggregateFuncExpr) (*Expr, bool, error) {
	name := strings.ToLower(a.F)
	if name == "avg" && !a.Distinct && len(a.Args) == 1 && isCondition(a.Args[0]) && containsNode(a.Args[0], isColumn) {
		x, err := qb.sc.conditionShare(a.Args[0])
		if err != nil {
			return nil, true, err
		}
		return qb.rowExprItemOf(Aggregate{Func: Avg}, a, a.Args[0], x)
	}
	if a.Distinct || len(a.Args) != 1 || !isRowExpr(a.Args[0]) {
		return nil, false, nil
	}
	agg := Aggregate{Func: columnAggs[name]}
	switch name {
	case "min":
		agg.Func = Percentile
	case "max":
		agg.Func, agg.Quantile = Percentile, 1
	}
	if agg.Func == 0 {
		return nil, false, nil
	}
	return qb.rowExprItem(agg, a, a.Args[0])
}

// rowExprFunction is rowExprAggregate for MEDIAN, PERCENTILE_CONT and IQR
// of a row expression.
func (qb *queryBuilder) rowExprFunction(f *ast.FuncCallExpr) (*Expr, bool, error) {
	fa, ok := functionAggs[f.FnName.L]
	if !ok || f.Schema.L != "" || len(f.Args) != fa.args || len(f.Args) == 0 || !isRowExpr(f.Args[0]) {
		return nil, false, nil
	}
	agg := Aggregate{Func: fa.fn}
	switch fa.fn {
	case Median:
		agg.Quantile = 0.5
	case Percentile:
		q, err := quantileArgument(f.FnName.O, f.Args[1], 1)
		if err != nil {
			return nil, true, err
		}
		agg.Quantile = q
	case IQR:
	default:
		return nil, false, nil
	}
	return qb.rowExprItem(agg, f, f.Args[0])
}

// isRowExpr reports whether e is arithmetic, a CASE, LEAST or GREATEST,
// a DATEDIFF, a TIMESTAMPDIFF or a UNIX_TIMESTAMP over some column.
func isRowExpr(e ast.ExprNode) bool {
	return (isArithmetic(e) || isCase(e) || isExtreme(e) || isCoalesce(e) || isRowFunc(e) || isDatePart(e) || isNumericCast(e) || isDateDiff(e) || isTimestampDiff(e) || isUnixTimestamp(e)) && containsNode(e, isColumn)
}

// isCoalesce reports whether e is COALESCE(x, y) or IFNULL(x, y).
func isCoalesce(e ast.ExprNode) bool {
	f, ok := unparen(e).(*ast.FuncCallExpr)
	return ok && (f.FnName.L == "coalesce" || f.FnName.L == "ifnull") && f.Schema.L == "" && len(f.Args) == 2
}

// coalesce reads COALESCE(col, c) and IFNULL(col, c) of a numeric column
// and a number (Tableau's ZN, a missing value counted as 0): CASE WHEN col
// IS NOT NULL THEN col ELSE c END, an unreadable value (NULL; on SQLite
// text or a blob) being the one replaced.
func (sc *scope) coalesce(top ast.ExprNode, f *ast.FuncCallExpr) (*RowExpr, error) {
	c, isCol := unparen(f.Args[0]).(*ast.ColumnNameExpr)
	if !isCol {
		return nil, refuseQuery("an aggregate of %s, whose bounds cannot be derived: %s of %s (it takes a column and a number) (%s)", restore(top), strings.ToUpper(f.FnName.O), restore(f.Args[0]), rowExprHint)
	}
	x, err := sc.rowExprIn(top, c)
	if err != nil {
		return nil, err
	}
	if x.Kind != RowColumn {
		return nil, refuseQuery("an aggregate of %s, whose bounds cannot be derived: %s of the column %s, which is not a number (%s)", restore(top), strings.ToUpper(f.FnName.O), x.Column, rowExprHint)
	}
	v, isNum := literal(f.Args[1])
	if !isNum || v.Null || v.IsText {
		return nil, refuseQuery("an aggregate of %s, whose bounds cannot be derived: %s with %s in place of NULL (it takes a number) (%s)", restore(top), strings.ToUpper(f.FnName.O), restore(f.Args[1]), rowExprHint)
	}
	otherwise, err := sc.rowExprIn(top, f.Args[1])
	if err != nil {
		return nil, err
	}
	present := Condition{Column: x.Column, IsNull: true, Complement: true}
	return &RowExpr{Kind: RowCase, When: [][]Condition{{present}}, Args: []*RowExpr{x, otherwise}}, nil
}

// isUnixTimestamp reports whether e is UNIX_TIMESTAMP(x).
func isUnixTimestamp(e ast.ExprNode) bool {
	f, ok := unparen(e).(*ast.FuncCallExpr)
	return ok && f.FnName.L == "unix_timestamp" && f.Schema.L == "" && len(f.Args) == 1
}

// unixTimestamp reads UNIX_TIMESTAMP(col) of a date or timestamp column
// as its second number (a date's midnight: its day number times 86400; a
// timestamp's own, marked Seconds), a number whose bounds are the
// column's declared bounds in seconds, which is MySQL's value when the
// backend sessions read times in UTC (backend.time_zone, the default)
// and the session's time_zone is UTC too (MySQL reads a wall-clock value
// in the session's zone); in another zone the two differ by its offset,
// so it is refused there. A timestamp's fraction of a second is dropped,
// as in every second number (RowTemporal), where MariaDB's
// UNIX_TIMESTAMP of a DATETIME(n) keeps it.
func (sc *scope) unixTimestamp(f *ast.FuncCallExpr) (*RowExpr, error) {
	if !sc.clockIsUTC() {
		zone, session := sc.clockZone()
		if !session {
			return nil, refuseQuery("UNIX_TIMESTAMP(%s) with backend.time_zone %s (it is answered in UTC, where it is the second of the column's wall-clock time)", restore(f.Args[0]), sc.timeZone)
		}
		return nil, refuseQuery("UNIX_TIMESTAMP(%s) with the session's time_zone '%s' (it is answered in UTC, where it is the second of the column's wall-clock time; SET time_zone = DEFAULT)", restore(f.Args[0]), zone)
	}
	x, err := sc.temporalOperand("UNIX_TIMESTAMP", f.Args[0])
	if err != nil {
		return nil, err
	}
	if x.Kind != RowTemporal {
		return nil, refuseQuery("UNIX_TIMESTAMP of %s (its argument is a date or timestamp column)", restore(f.Args[0]))
	}
	if x.Temporal == catalog.Date {
		return &RowExpr{Kind: RowOp, Op: '*', Args: []*RowExpr{x, {Kind: RowConst, Num: catalog.SecondsPerDay}}}, nil
	}
	x.Seconds = true
	return x, nil
}

// extremeOps and extremeNames map LEAST and GREATEST to RowOp's Op and
// back.
var (
	extremeOps   = map[string]byte{"least": 'L', "greatest": 'G'}
	extremeNames = map[byte]string{'L': "LEAST", 'G': "GREATEST"}
)

// isExtreme reports whether e is LEAST or GREATEST of two or more
// arguments (AVG(LEAST(TIMESTAMPDIFF(MINUTE, a, b), 240)) caps each value
// at 240, and so the derived bounds).
func isExtreme(e ast.ExprNode) bool {
	f, ok := unparen(e).(*ast.FuncCallExpr)
	return ok && extremeOps[f.FnName.L] != 0 && f.Schema.L == "" && len(f.Args) >= 2
}

// isDateDiff reports whether e is DATEDIFF(a, b).
func isDateDiff(e ast.ExprNode) bool {
	f, ok := unparen(e).(*ast.FuncCallExpr)
	return ok && f.FnName.L == "datediff" && f.Schema.L == "" && len(f.Args) == 2
}

// dateDiff reads DATEDIFF(a, b), the days from the date of b to the date
// of a, as the difference of day numbers: each operand a date column
// (RowTemporal: NULL when the value is no date, so the expression is
// skipped, the nearer bound outside the column's bounds), a timestamp
// column (the floor of its second number over 86400: the day of its
// date), or a literal 'YYYY-MM-DD' or 'YYYY-MM-DD hh:mm:ss' (its date).
// Within the bounds it is MySQL's DATEDIFF; its bounds follow by interval
// arithmetic from the columns' (AVG(DATEDIFF(shipped, ordered)) is the
// mean delay in days).
func (sc *scope) dateDiff(f *ast.FuncCallExpr) (*RowExpr, error) {
	var ops [2]*RowExpr
	for i, a := range f.Args {
		x, err := sc.temporalOperand("DATEDIFF", a)
		if err != nil {
			return nil, err
		}
		switch {
		case x.Kind == RowConst && x.Temporal == catalog.Timestamp:
			x = &RowExpr{Kind: RowConst, Num: math.Floor(x.Num / catalog.SecondsPerDay)}
		case x.Kind == RowConst:
			x = &RowExpr{Kind: RowConst, Num: x.Num}
		case x.Kind == RowTemporal && x.Temporal == catalog.Timestamp:
			x = &RowExpr{Kind: RowIntDiv, Op: 'f', Num: catalog.SecondsPerDay, Args: []*RowExpr{x}}
		}
		ops[i] = x
	}
	return &RowExpr{Kind: RowOp, Op: '-', Args: ops[:]}, nil
}

// TimestampUnitSeconds and TimestampUnitMonths are the units of
// TIMESTAMPDIFF dpproxy computes, by name: the fixed-length ones in
// seconds, the calendar ones in months (catalog.MonthsBetween).
var (
	TimestampUnitSeconds = map[string]float64{
		"SECOND": 1, "MINUTE": 60, "HOUR": 3600, "DAY": catalog.SecondsPerDay, "WEEK": 7 * catalog.SecondsPerDay,
	}
	TimestampUnitMonths = map[string]float64{"MONTH": 1, "QUARTER": 3, "YEAR": 12}
)

// timestampDiffUnit reads TIMESTAMPDIFF's unit (all of MySQL's but
// MICROSECOND, which the second numbers do not hold).
func timestampDiffUnit(e ast.ExprNode) (string, error) {
	const units = "SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, QUARTER or YEAR"
	u, ok := e.(*ast.TimeUnitExpr)
	if !ok {
		return "", refuseQuery("TIMESTAMPDIFF with the unit %s (%s)", restore(e), units)
	}
	name := u.Unit.String()
	if TimestampUnitSeconds[name] == 0 && TimestampUnitMonths[name] == 0 {
		return "", refuseQuery("TIMESTAMPDIFF(%s, ...): the units are %s (dates and timestamps are read to the second)", name, units)
	}
	return name, nil
}

// isTimestampDiff reports whether e is TIMESTAMPDIFF(unit, a, b).
func isTimestampDiff(e ast.ExprNode) bool {
	f, ok := unparen(e).(*ast.FuncCallExpr)
	return ok && f.FnName.L == "timestampdiff" && f.Schema.L == "" && len(f.Args) == 3
}

// timestampDiff reads TIMESTAMPDIFF(unit, a, b), the whole units from a
// to b (truncated toward zero, as MySQL's), each operand a timestamp
// column (NULL when no timestamp, the nearer bound outside the bounds,
// its fraction of a second counted), a date column (its midnight, as
// MySQL reads a date) or a literal 'YYYY-MM-DD hh:mm:ss' or 'YYYY-MM-DD':
// for SECOND, MINUTE, HOUR, DAY and WEEK the whole seconds of the exact
// difference (RowSecondDiff) divided by the unit's seconds (RowIntDiv);
// for MONTH, QUARTER and YEAR the calendar months between them
// (RowMonthDiff), divided by 3 or 12.
// AVG(TIMESTAMPDIFF(MINUTE, started, ended)) is the mean duration in
// minutes, AVG(TIMESTAMPDIFF(YEAR, born, '2024-06-30')) the mean age.
func (sc *scope) timestampDiff(f *ast.FuncCallExpr) (*RowExpr, error) {
	unit, err := timestampDiffUnit(f.Args[0])
	if err != nil {
		return nil, err
	}
	var ops [2]*RowExpr
	for i, a := range f.Args[1:] {
		if ops[i], err = sc.temporalOperand("TIMESTAMPDIFF", a); err != nil {
			return nil, err
		}
	}
	x, per := &RowExpr{Kind: RowSecondDiff, Args: ops[:]}, TimestampUnitSeconds[unit]
	if months, ok := TimestampUnitMonths[unit]; ok {
		x, per = &RowExpr{Kind: RowMonthDiff, Args: ops[:]}, months
	}
	if per == 1 {
		return x, nil
	}
	return &RowExpr{Kind: RowIntDiv, Op: 't', Num: per, Args: []*RowExpr{x}}, nil
}

// temporalOperand reads an operand of DATEDIFF or TIMESTAMPDIFF: a date
// or timestamp column with bounds (RowTemporal), or a literal date or
// timestamp (RowConst of its day or second number, Temporal saying
// which), or a constant time the statement gives (constantTime: NOW(),
// CURDATE(), DATE '...', CURDATE() - INTERVAL 1 MONTH, read in the
// session's time zone when the proxy evaluates the statement), a date
// when MySQL types it so; one with a fraction of a second is refused.
func (sc *scope) temporalOperand(fn string, a ast.ExprNode) (*RowExpr, error) {
	const hint = "its arguments are date and timestamp columns, literals 'YYYY-MM-DD' or 'YYYY-MM-DD hh:mm:ss', and constant times such as NOW() and CURDATE()"
	if v, ok := literal(a); ok && v.IsText {
		typ := catalog.Date
		if len(strings.TrimSpace(v.Str)) != len("2006-01-02") {
			typ = catalog.Timestamp
		}
		c := catalog.Column{Type: typ}
		n, err := c.ParseTemporal(v.Str)
		if err != nil {
			return nil, refuseQuery("%s of %s: %v", fn, restore(a), err)
		}
		return &RowExpr{Kind: RowConst, Num: n, Temporal: typ}, nil
	}
	if t, isDate, handled, err := sc.constantTime(a); handled {
		switch {
		case err != nil:
			return nil, refuseQuery("%s of %s: %v", fn, restore(a), err)
		case t.Nanosecond() != 0:
			return nil, refuseQuery("%s of %s, a time with a fraction of a second (%s)", fn, restore(a), hint)
		case isDate:
			return &RowExpr{Kind: RowConst, Num: float64(floorInt(t.Unix(), catalog.SecondsPerDay)), Temporal: catalog.Date}, nil
		}
		return &RowExpr{Kind: RowConst, Num: float64(t.Unix()), Temporal: catalog.Timestamp}, nil
	}
	c, ok := unparen(a).(*ast.ColumnNameExpr)
	if !ok {
		return nil, refuseQuery("%s of %s (%s)", fn, restore(a), hint)
	}
	col, err := sc.column(c.Name, "field list")
	if err != nil {
		return nil, err
	}
	if !col.Temporal() || col.Lower == nil || col.Upper == nil {
		return nil, refuseQuery("%s of the %s column %s (%s)", fn, col.Type, col.Name, hint)
	}
	return &RowExpr{Kind: RowTemporal, Column: col.Name, Temporal: col.Type, Lower: *col.Lower, Upper: *col.Upper}, nil
}

// conditionShare reads the condition of AVG(condition) (MySQL's share of
// the rows where it holds: AVG(age > 30)), a condition on one column, as
// CASE WHEN condition THEN 1 WHEN col IS NOT NULL THEN 0 END: 1 where it
// holds, 0 where the column has a value and it does not, NULL (skipped)
// where the column is NULL, as MySQL evaluates it. Over two or more
// columns MySQL's FALSE AND NULL is FALSE, which this rule would read as
// NULL: refused, naming the CASE that says which.
func (sc *scope) conditionShare(e ast.ExprNode) (*RowExpr, error) {
	rc, err := sc.rangeCountAt(e, rowCaseSite)
	if err != nil {
		return nil, err
	}
	if rc.Boolean != nil {
		return booleanShare(e, rc.Boolean, sc.nullTest)
	}
	col := rc.Where[0].Column
	for _, c := range rc.Where {
		if c.Column != col {
			return nil, refuseQuery("AVG of %s, a condition on two or more columns (write AVG(CASE WHEN %s THEN 1 ELSE 0 END), or one column's condition)", restore(e), restore(e))
		}
	}
	present := sc.nullTest(col)
	present.Complement = true
	return &RowExpr{Kind: RowCase, When: [][]Condition{rc.Where, {present}}, Args: []*RowExpr{{Kind: RowConst, Num: 1}, {Kind: RowConst}, nil}}, nil
}

// nullTest is nullTest of the declared column named column, or of a row
// expression's derived column (a number).
func (sc *scope) nullTest(column string) Condition {
	if c, ok := sc.table.Column(column); ok {
		return nullTest(c)
	}
	return Condition{Column: column, IsNull: true}
}

// booleanShare is conditionShare of a condition p with OR or NOT on one
// column: CASE WHEN col IS NULL THEN v WHEN t₁ THEN 1 … WHEN tₖ THEN 1
// ELSE 0 END, where v is p's value on NULL in SQL's three-valued logic (1,
// 0 or NULL: truthOn) and t₁ ∨ … ∨ tₖ is p in disjunctive form with each
// NOT moved onto its leaf (a Complement), which on the rows that reach the
// terms, all with a value, is exact two-valued logic.
func booleanShare(e ast.ExprNode, p *Predicate, nullTest func(column string) Condition) (*RowExpr, error) {
	leaves := predicateLeaves(p, nil)
	col := leaves[0].Column
	for _, c := range leaves {
		if c.Column != col || c.Cell != nil {
			return nil, refuseQuery("AVG of %s, a condition on two or more columns (write AVG(CASE WHEN %s THEN 1 ELSE 0 END), or one column's condition)", restore(e), restore(e))
		}
	}
	terms, ok := disjunctive(p, false)
	if !ok {
		return nil, refuseQuery("AVG of %s, whose OR and NOT expand to more than %d alternatives (write SUM(%s) / COUNT(%s))", restore(e), maxShareTerms, restore(e), col)
	}
	x := &RowExpr{Kind: RowCase, When: [][]Condition{{nullTest(col)}}}
	switch truthOn(p, Value{Null: true}) {
	case sqlTrue:
		x.Args = append(x.Args, &RowExpr{Kind: RowConst, Num: 1})
	case sqlFalse:
		x.Args = append(x.Args, &RowExpr{Kind: RowConst})
	default:
		x.Args = append(x.Args, nil)
	}
	for _, t := range terms {
		x.When, x.Args = append(x.When, t), append(x.Args, &RowExpr{Kind: RowConst, Num: 1})
	}
	x.Args = append(x.Args, &RowExpr{Kind: RowConst})
	return x, nil
}

// maxShareTerms bounds the alternatives of booleanShare's disjunctive form.
const maxShareTerms = 16

// disjunctive returns p (its negation when negate) as an OR of ANDs of
// leaves, each NOT moved onto a leaf by De Morgan's laws (a leaf's
// negation is its Complement), exact for rows whose leaves are all true or
// false; ok is false beyond maxShareTerms alternatives.
func disjunctive(p *Predicate, negate bool) (terms [][]Condition, ok bool) {
	switch p.Op {
	case Leaf:
		c := *p.Leaf
		if negate {
			c.Complement = !c.Complement
		}
		return [][]Condition{{c}}, true
	case Not:
		return disjunctive(p.Args[0], !negate)
	}
	if (p.Op == Or) != negate { // an OR: the union of the alternatives
		for _, a := range p.Args {
			sub, ok := disjunctive(a, negate)
			if !ok || len(terms)+len(sub) > maxShareTerms {
				return nil, false
			}
			terms = append(terms, sub...)
		}
		return terms, true
	}
	terms = [][]Condition{nil} // an AND: every combination
	for _, a := range p.Args {
		sub, ok := disjunctive(a, negate)
		if !ok || len(terms)*len(sub) > maxShareTerms {
			return nil, false
		}
		var next [][]Condition
		for _, t := range terms {
			for _, u := range sub {
				next = append(next, append(slices.Clone(t), u...))
			}
		}
		terms = next
	}
	return terms, true
}

// rowExprItem adds agg of the row expression arg of the aggregate call.
func (qb *queryBuilder) rowExprItem(agg Aggregate, call, arg ast.ExprNode) (*Expr, bool, error) {
	x, err := qb.sc.rowExpr(arg)
	if err != nil {
		return nil, true, err
	}
	return qb.rowExprItemOf(agg, call, arg, x)
}

// rowExprItemOf adds agg of x, the row expression arg of the aggregate
// call.
func (qb *queryBuilder) rowExprItemOf(agg Aggregate, call, arg ast.ExprNode, x *RowExpr) (*Expr, bool, error) {
	if x.Kind == RowColumn { // CAST(col AS DOUBLE): the column itself
		agg.Column = x.Column
		return qb.item(agg, restore(call)), true, nil
	}
	if n := x.size(); n > maxRowExprSize {
		return nil, true, refuseQuery("an aggregate of a row expression of %d columns, numbers, operations and conditions (at most %d)", n, maxRowExprSize)
	}
	if _, _, err := x.Bounds(); err != nil {
		return nil, true, refuseQuery("an aggregate of %s, whose bounds cannot be derived: %v (%s)", restore(arg), err, rowExprHint)
	}
	agg.Column, agg.Expr = x.String(), x
	return qb.item(agg, restore(call)), true, nil
}

// maxRowExprSize is the most nodes (columns, numbers, operations, CASE
// conditions) of a row expression: the backends evaluate expressions
// recursively (MariaDB overran its thread stack on 1000 nested additions,
// an error after the budget was charged).
const maxRowExprSize = 64

// size counts the nodes of e.
func (e *RowExpr) size() int {
	if e == nil {
		return 0
	}
	n := 1
	for _, w := range e.When {
		n += len(w)
	}
	weight := 1
	if _, ok := extremeNames[e.Op]; ok && e.Kind == RowOp {
		weight = 2 // PostgreSQL's rendering writes each operand twice
	}
	if e.Kind == RowFunc && e.Func == FuncPow {
		weight = int(e.Num) // x·x·…: the operand written Num times
	}
	if e.nullableDivisor() {
		weight = 2 // the divisor is written twice (Render)
	}
	for _, a := range e.Args {
		n += weight * a.size()
	}
	return n
}
