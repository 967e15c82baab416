package sqlrewrite

import (
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// readsOnceExprs are row expressions of every node RowExpr.nullColumns
// accepts, over the columns of TestReadsOnceCountsOnMariaDB's table: x
// DOUBLE, y BIGINT, z DECIMAL, w INT (a divisor whose bounds exclude 0)
// and s VARCHAR (text read as a number by the clamp).
func readsOnceExprs() map[string]*RowExpr {
	col := func(name string, lo, hi float64) *RowExpr {
		return &RowExpr{Kind: RowColumn, Column: name, Lower: lo, Upper: hi}
	}
	op := func(o byte, a, b *RowExpr) *RowExpr { return &RowExpr{Kind: RowOp, Op: o, Args: []*RowExpr{a, b}} }
	num := func(v float64) *RowExpr { return &RowExpr{Kind: RowConst, Num: v} }
	fn := func(f string, n float64, ties byte, a *RowExpr) *RowExpr {
		return &RowExpr{Kind: RowFunc, Func: f, Num: n, Op: ties, Args: []*RowExpr{a}}
	}
	x, y, z, w, s := col("x", -100, 100), col("y", 0, 1000), col("z", -1e6, 1e6), col("w", 1, 10), col("s", 0, 100)
	return map[string]*RowExpr{
		"x + y":              op('+', x, y),
		"x - z * y":          op('-', x, op('*', z, y)),
		"x / w":              op('/', x, w),
		"LEAST(x, s)":        op('L', x, s),
		"GREATEST(y, z)":     op('G', y, z),
		"y DIV 3":            {Kind: RowIntDiv, Op: 't', Num: 3, Args: []*RowExpr{y}},
		"FLOOR(z / 7)":       {Kind: RowIntDiv, Op: 'f', Num: 7, Args: []*RowExpr{z}},
		"ABS(x) + SIGN(z)":   op('+', fn(FuncAbs, 0, 0, x), fn(FuncSign, 0, 0, z)),
		"FLOOR(x) - CEIL(s)": op('-', fn(FuncFloor, 0, 0, x), fn(FuncCeil, 0, 0, s)),
		"ROUND(x, 1) + ROUND(z, -2)": op('+', fn(FuncRound, 1, tiesEven, x),
			fn(FuncRound, -2, tiesAway, z)),
		"TRUNCATE(x, -1) * MOD(y, 7)":    op('*', fn(FuncTruncate, -1, 0, x), fn(FuncMod, 7, 0, y)),
		"POW(x, 2) + s":                  op('+', fn(FuncPow, 2, 0, x), s),
		"(x + y) * 2 - ABS(z) / w":       op('-', op('*', op('+', x, y), num(2)), op('/', fn(FuncAbs, 0, 0, z), w)),
		"a constant: 2 * 3":              op('*', num(2), num(3)),
		"a constant and a column: 2 * w": op('*', num(2), w),
		"a column read twice: x * x + x": op('+', op('*', x, x), x),
	}
}

// TestNullColumnsRefuses: nullColumns refuses the expressions that can be
// NULL where none of their columns is (or whose NULLs it does not decide):
// a CASE, a division by a whole number that may be 0 (read as NULL below
// 1 in magnitude) or by an expression whose bounds hold 0, a date, SQRT,
// LN, LOG, EXP and the date parts.
func TestNullColumnsRefuses(t *testing.T) {
	col := func(name string, lo, hi float64) *RowExpr {
		return &RowExpr{Kind: RowColumn, Column: name, Lower: lo, Upper: hi}
	}
	x, n := col("x", 1, 100), &RowExpr{Kind: RowColumn, Column: "n", Lower: -5, Upper: 5, Integer: true}
	day := &RowExpr{Kind: RowTemporal, Column: "d", Temporal: catalog.Date, Lower: 0, Upper: 20000}
	fn := func(f string, num float64, a *RowExpr) *RowExpr {
		return &RowExpr{Kind: RowFunc, Func: f, Num: num, Args: []*RowExpr{a}}
	}
	for name, e := range map[string]*RowExpr{
		"CASE":              {Kind: RowCase, When: [][]Condition{{{Column: "x", Range: &Range{Lower: 50, HasLower: true}}}}, Args: []*RowExpr{x, nil}},
		"x / n":             {Kind: RowOp, Op: '/', Args: []*RowExpr{x, n}},
		"x / (x - 50)":      {Kind: RowOp, Op: '/', Args: []*RowExpr{x, {Kind: RowOp, Op: '-', Args: []*RowExpr{x, {Kind: RowConst, Num: 50}}}}},
		"a date":            day,
		"DATEDIFF":          {Kind: RowIntDiv, Op: 'f', Num: 1, Args: []*RowExpr{day}},
		"SQRT(x)":           fn(FuncSqrt, 0, x),
		"LN(x)":             fn(FuncLn, 0, x),
		"LOG(2, x)":         fn(FuncLog, 2, x),
		"EXP(x)":            fn(FuncExp, 0, x),
		"YEAR(d)":           fn(FuncYear, 0, day),
		"x + SQRT(x)":       {Kind: RowOp, Op: '+', Args: []*RowExpr{x, fn(FuncSqrt, 0, x)}},
		"an unknown op":     {Kind: RowOp, Op: '%', Args: []*RowExpr{x, x}},
		"an operation of 1": {Kind: RowOp, Op: '+', Args: []*RowExpr{x}},
	} {
		if cols, ok := e.nullColumns(); ok {
			t.Errorf("%s: nullColumns %v, want a refusal", name, cols)
		}
	}
}

// TestReadsOnceCountsOnMariaDB: where a fetch reads its row expression
// once per row (readsOnce), MySQL merges the derived table and counts the
// rows where the expression's columns are not NULL (nullColumns) instead
// of filtering on the expression. On MariaDB, over columns of every
// numeric type and a text column holding NULL, zeros of both signs, tiny,
// huge and out-of-bounds values, for an expression of every node
// nullColumns accepts: the expression is NULL exactly where one of those
// columns is, and the grid sums without squares, alone and grouped, as
// DECIMAL and as DOUBLE (FloatSum), return the counts and sums of the
// fenced fetch that filters on the expression (the same grid with Σk²,
// which reads it three times).
func TestReadsOnceCountsOnMariaDB(t *testing.T) {
	db := testdb.MySQL(t)
	if _, err := db.Exec("CREATE TABLE dp_once (x DOUBLE, y BIGINT, z DECIMAL(65, 30), w INT, s VARCHAR(20), g INT)"); err != nil {
		t.Fatal(err)
	}
	columns := [][]string{
		{"NULL", "0", "-0e0", "1e-200", "-1e-200", "3.8e-121", "1e300", "-1e300", "50.5", "-7.25", "99.99999999999999"},
		{"NULL", "0", "1", "-1", "9223372036854775807", "-9223372036854775808", "7", "-3", "1000", "999"},
		{"NULL", "0", "0.000000000000000000000000000001", "-12.5", "3.3", "99999999999999999999999999999999999.999999999999999999999999999999", "-1000000.000000000000000000000000000001"},
		{"NULL", "0", "1", "2", "-5", "10", "11"},
		{"NULL", "''", "'abc'", "'12.5'", "'-3'", "'1e400'", "' 7'", "'0x10'"},
		{"NULL", "1", "2", "3"},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var rows []string
	for range 600 {
		var row []string
		for _, vs := range columns {
			row = append(row, vs[rng.IntN(len(vs))])
		}
		rows = append(rows, "("+strings.Join(row, ", ")+")")
	}
	if _, err := db.Exec("INSERT INTO dp_once VALUES " + strings.Join(rows, ", ")); err != nil {
		t.Fatal(err)
	}
	r := &renderer{spec: dialects[MySQL], dialect: MySQL}
	for name, e := range readsOnceExprs() {
		cols, ok := e.nullColumns()
		if !ok {
			t.Errorf("%s: nullColumns refuses it", name)
			continue
		}
		lo, hi, err := e.Bounds()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		text, err := r.rowExpr(e)
		if err != nil {
			t.Fatal(err)
		}
		known := "FALSE"
		for _, c := range cols {
			known += " OR `" + c + "` IS NULL"
		}
		var differ int
		if err := db.QueryRow("SELECT COUNT(*) FROM dp_once WHERE (" + text + ") IS NULL <> (" + known + ")").Scan(&differ); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if differ > 0 {
			t.Errorf("%s: NULL on %d rows where %s is not, or the reverse", name, differ, known)
		}

		unit := math.Pow(2, math.Ceil(math.Log2((hi-lo)/(1<<20))))
		for _, float := range []bool{false, true} {
			once := GridSums{Column: "dpproxy_e0", Lower: lo, Upper: hi, Unit: unit, SumOnly: true, FloatSum: float}
			fenced := once
			fenced.SumOnly = false
			dims := []CellDim{{Column: "g", Values: []Value{{Num: 1}, {Num: 2}, {Num: 3}}}}
			derived := []DerivedColumn{{Name: "dpproxy_e0", Expr: e}}
			for _, grouped := range []bool{false, true} {
				fetch := func(g GridSums) Fetch {
					f := Fetch{Table: "dp_once", Derived: derived, GridSums: &g}
					if grouped {
						f = Fetch{Table: "dp_once", Derived: derived, GroupedGrid: &GroupedGridSums{Dims: dims, Grid: g}}
					}
					return f
				}
				label := fmt.Sprintf("%s, float %v, grouped %v", name, float, grouped)
				got, gotQuery := readsOnceTotals(t, db, fetch(once), grouped)
				want, wantQuery := readsOnceTotals(t, db, fetch(fenced), grouped)
				if strings.Contains(gotQuery, "LIMIT") || !strings.Contains(wantQuery, "LIMIT 18446744073709551615") {
					t.Errorf("%s: fenced without Σk², unfenced with it:\n%s\n%s", label, gotQuery, wantQuery)
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s: %v, fenced %v\n%s\n%s", label, got, want, gotQuery, wantQuery)
				}
			}
		}
	}
}

// readsOnceTotals runs a grid sums fetch and returns its rows as "keys n
// Σk" (Σk² left out), sorted, without the groups of no row (n = 0),
// which an unfenced grouped fetch returns and a fenced one leaves out;
// and its text.
func readsOnceTotals(t *testing.T, db *sql.DB, f Fetch, grouped bool) ([]string, string) {
	t.Helper()
	q, args, err := Render(f, MySQL)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	keys := 0
	if grouped {
		keys = 1
	}
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, keys+3)
		dest := make([]any, len(vals))
		for i := range vals {
			dest[i] = &vals[i]
		}
		if err := rows.Scan(dest...); err != nil {
			t.Fatal(err)
		}
		if vals[keys].String == "0" {
			continue
		}
		var row []string
		for _, v := range vals[:keys+2] {
			row = append(row, fmt.Sprintf("%s/%v", v.String, v.Valid))
		}
		out = append(out, strings.Join(row, " "))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out, q
}
