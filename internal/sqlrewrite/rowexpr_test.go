package sqlrewrite_test

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

func rcol(name string, lo, hi float64) *sqlrewrite.RowExpr {
	return &sqlrewrite.RowExpr{Kind: sqlrewrite.RowColumn, Column: name, Lower: lo, Upper: hi}
}

func rnum(v float64) *sqlrewrite.RowExpr {
	return &sqlrewrite.RowExpr{Kind: sqlrewrite.RowConst, Num: v}
}

func rop(o byte, a, b *sqlrewrite.RowExpr) *sqlrewrite.RowExpr {
	return &sqlrewrite.RowExpr{Kind: sqlrewrite.RowOp, Op: o, Args: []*sqlrewrite.RowExpr{a, b}}
}

func rcase(results ...*sqlrewrite.RowExpr) *sqlrewrite.RowExpr {
	when := make([][]sqlrewrite.Condition, len(results)-1)
	for i := range when {
		when[i] = []sqlrewrite.Condition{{Column: "c", In: []sqlrewrite.Value{{Num: float64(i)}}}}
	}
	return &sqlrewrite.RowExpr{Kind: sqlrewrite.RowCase, When: when, Args: results}
}

// TestRowExprBoundsVectors checks RowExpr.Bounds on hand-computed vectors:
// exact endpoints where the arithmetic is exact, outward rounding where it
// is not (0.1 + 0.2 is 0.3000000000000000166…, between the float64s 0.3
// and 0.30000000000000004), and the refusals with their reasons.
func TestRowExprBoundsVectors(t *testing.T) {
	age, income := rcol("age", 0, 100), rcol("income", 0, 500000)
	checkBounds(t, []boundsCase{
		{"age + income", rop('+', age, income), 0, 500100, ""},
		// A single value c (here SIGN-like constants times a column's
		// zero, exact) is widened toward 0 by one, or to 0, or to the
		// next double (singleValueBounds); 0 stays [0, 0].
		{"5 + 0 * age", rop('+', rnum(5), rop('*', rnum(0), age)), 4, 5, ""},
		{"-3 + 0 * age", rop('+', rnum(-3), rop('*', rnum(0), age)), -3, -2, ""},
		{"0.5 + 0 * age", rop('+', rnum(0.5), rop('*', rnum(0), age)), 0, 0.5, ""},
		{"-0.5 + 0 * age", rop('+', rnum(-0.5), rop('*', rnum(0), age)), -0.5, 0, ""},
		{"2^60 + 0 * age", rop('+', rnum(0x1p60), rop('*', rnum(0), age)), 0x1p60 - 128, 0x1p60, ""},
		{"0 * age", rop('*', rnum(0), age), 0, 0, ""},
		{"income - 10 * age", rop('-', income, rop('*', rnum(10), age)), -1000, 500000, ""},
		{"age * 2 + income / 1000", rop('+', rop('*', age, rnum(2)), rop('/', income, rnum(1000))), 0, 700, ""},
		{"0.1 + 0.2", rop('+', rnum(0.1), rnum(0.2)), 0.3, 0.30000000000000004, ""},
		{"1 / 3", rop('/', rnum(1), rnum(3)), 0.3333333333333333, 0.33333333333333337, ""},
		{"[1,3] / [2,4]", rop('/', rcol("a", 1, 3), rcol("b", 2, 4)), 0.25, 1.5, ""},
		{"[-2,3] * [-5,4]", rop('*', rcol("a", -2, 3), rcol("b", -5, 4)), -15, 12, ""},
		// x * x of one expression is its square, not a product of two
		// independent intervals ([-2500, 2500]), as POW(x, 2).
		{"(age - 50) * (age - 50)", rop('*', rop('-', age, rnum(50)), rop('-', age, rnum(50))), 0, 2500, ""},
		{"(age + 10) * (age + 10)", rop('*', rop('+', age, rnum(10)), rop('+', age, rnum(10))), 100, 12100, ""},
		{"(age - 200) * (age - 200)", rop('*', rop('-', age, rnum(200)), rop('-', age, rnum(200))), 10000, 40000, ""},
		{"[-2,3] * [-2,3] (one column)", rop('*', rcol("a", -2, 3), rcol("a", -2, 3)), 0, 9, ""},
		{"[-2,3] * [-2,3] (two columns)", rop('*', rcol("a", -2, 3), rcol("b", -2, 3)), -6, 9, ""},
		{"(age - 50) * (age - 49)", rop('*', rop('-', age, rnum(50)), rop('-', age, rnum(49))), -2550, 2550, ""},
		{"0.1 * 0.1", rop('*', rnum(0.1), rnum(0.1)), 0.01, 0.010000000000000002, ""},
		{"[0,1e120] * itself", rop('*', rcol("a", 0, 1e120), rcol("a", 0, 1e120)), 0, 0, "exceed 2^430"},
		{"[-2,3] - [-5,4]", rop('-', rcol("a", -2, 3), rcol("b", -5, 4)), -6, 8, ""},
		{"income / (age + 1)", rop('/', income, rop('+', age, rnum(1))), 0, 500000, ""},
		{"CASE age THEN income ELSE 0", rcase(income, rnum(0)), 0, 500000, ""},
		{"CASE THEN age, THEN -3, no ELSE", rcase(age, rnum(-3), nil), -3, 100, ""},
		{"CASE all NULL", rcase(nil, nil), 0, 0, ""},
		{"income / age", rop('/', income, age), 0, 0, "whose bounds [0, 100] contain 0"},
		{"income / whole age: NULL for 0", rop('/', income, &sqlrewrite.RowExpr{Kind: sqlrewrite.RowColumn, Column: "age", Upper: 100, Integer: true}), 0, 500000, ""},
		{"income / whole [-5, 10]", rop('/', income, &sqlrewrite.RowExpr{Kind: sqlrewrite.RowColumn, Column: "k", Lower: -5, Upper: 10, Integer: true}), -500000, 500000, ""},
		{"income / (whole [-5, 10] - 12)", rop('/', income, rop('-', &sqlrewrite.RowExpr{Kind: sqlrewrite.RowColumn, Column: "k", Lower: -5, Upper: 10, Integer: true}, rnum(12))), -500000 / 2.0, 0, ""},
		{"income / whole [0, 0]", rop('/', income, &sqlrewrite.RowExpr{Kind: sqlrewrite.RowColumn, Column: "z", Integer: true}), 0, 0, "divides by zero"},
		{"income / (whole age + 0.5)", rop('/', income, rop('+', &sqlrewrite.RowExpr{Kind: sqlrewrite.RowColumn, Column: "age", Upper: 100, Integer: true}, rnum(0.5))), 0, 1000000, ""},
		{"income / 0", rop('/', income, rnum(0)), 0, 0, "divides by zero"},
		{"income / [-1, 1]", rop('/', income, rcol("a", -1, 1)), 0, 0, "contain 0"},
		{"[0,1] * [0,1] * [0,1]", rop('*', rop('*', rcol("a", 0, 1), rcol("b", 0, 1)), rcol("c", 0, 1)), 0, 0, "could round to 0"},
		{"[0,1e120]^2", rop('*', rcol("a", 0, 1e120), rcol("b", 0, 1e120)), 0, 0, "exceed 2^430"},
		{"[1,1e120]^3", rop('*', rop('*', rcol("a", 1, 1e120), rcol("b", 1, 1e120)), rcol("c", 1, 1e120)), 0, 0, "beyond 2^1000"},
	})
}

// TestRowExprBoundsContainComputedValues is the property that matters:
// for random row expressions over random declared bounds, every value
// float64 arithmetic computes from operands inside their bounds (the
// endpoints, 0, and uniform draws; each CASE branch, the same for two
// copies of one expression, as in one row) lies inside Bounds. Squares
// x * x of one expression are among them.
// Seeded; deterministic, so it cannot fail at random.
func TestRowExprBoundsContainComputedValues(t *testing.T) {
	rng := rand.New(rand.NewSource(18))
	bound := func() (float64, float64) {
		a := (rng.Float64()*2 - 1) * math.Pow(10, float64(rng.Intn(13)-6))
		if rng.Intn(4) == 0 {
			a = 0
		}
		return a, a + rng.Float64()*math.Pow(10, float64(rng.Intn(13)-6))
	}
	type colv struct {
		e      *sqlrewrite.RowExpr
		lo, hi float64
	}
	var gen func(depth int, cols []colv) *sqlrewrite.RowExpr
	gen = func(depth int, cols []colv) *sqlrewrite.RowExpr {
		switch k := rng.Intn(6); {
		case depth == 0 || k == 0:
			return cols[rng.Intn(len(cols))].e
		case k == 1:
			return rnum(float64(rng.Intn(2001)-1000) / float64(1+rng.Intn(16)))
		case k == 2:
			return rcase(gen(depth-1, cols), gen(depth-1, cols))
		case k == 3 && rng.Intn(3) == 0:
			x := gen(depth-1, cols) // a square, x * x (squareBounds)
			return rop('*', x, x)
		default:
			return rop("+-*/"[rng.Intn(4)], gen(depth-1, cols), gen(depth-1, cols))
		}
	}
	// eval computes e as the database does, each CASE taking branch pick.
	var eval func(e *sqlrewrite.RowExpr, vals map[string]float64, pick int) (float64, bool)
	eval = func(e *sqlrewrite.RowExpr, vals map[string]float64, pick int) (float64, bool) {
		switch e.Kind {
		case sqlrewrite.RowColumn:
			return vals[e.Column], true
		case sqlrewrite.RowConst:
			return e.Num, true
		case sqlrewrite.RowCase:
			a := e.Args[pick%len(e.Args)]
			if a == nil {
				return 0, false
			}
			return eval(a, vals, pick/2)
		}
		a, okA := eval(e.Args[0], vals, pick)
		b, okB := eval(e.Args[1], vals, pick/3)
		if e.Args[0].String() == e.Args[1].String() {
			b, okB = a, okA // the same expression of one row: its CASEs take the same branches
		}
		switch e.Op {
		case '+':
			return a + b, okA && okB
		case '-':
			return a - b, okA && okB
		case '*':
			return a * b, okA && okB
		}
		return a / b, okA && okB
	}
	checked := 0
	for trial := 0; trial < 3000; trial++ {
		var cols []colv
		for _, name := range []string{"a", "b", "c"} {
			lo, hi := bound()
			cols = append(cols, colv{rcol(name, lo, hi), lo, hi})
		}
		e := gen(3, cols)
		lo, hi, err := e.Bounds()
		if err != nil {
			continue
		}
		checked++
		for s := 0; s < 60; s++ {
			vals := map[string]float64{}
			for _, c := range cols {
				switch rng.Intn(4) {
				case 0:
					vals[c.e.Column] = c.lo
				case 1:
					vals[c.e.Column] = c.hi
				default:
					vals[c.e.Column] = c.lo + rng.Float64()*(c.hi-c.lo)
				}
			}
			v, ok := eval(e, vals, rng.Intn(1<<20))
			if ok && !(v >= lo && v <= hi) {
				t.Fatalf("%s with %v computes %v, outside its bounds [%v, %v]", e, vals, v, lo, hi)
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d of 3000 random expressions had bounds", checked)
	}
}

// boundsCase is a row expression and the bounds it should derive, or the
// error (err, a part of its message) it should refuse with.
type boundsCase struct {
	name   string
	e      *sqlrewrite.RowExpr
	lo, hi float64
	err    string
}

// checkBounds checks RowExpr.Bounds on every case.
func checkBounds(t *testing.T, cases []boundsCase) {
	t.Helper()
	for _, c := range cases {
		lo, hi, err := c.e.Bounds()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want one containing %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || lo != c.lo || hi != c.hi {
			t.Errorf("%s: [%v, %v] (%v), want [%v, %v]", c.name, lo, hi, err, c.lo, c.hi)
		}
	}
}
