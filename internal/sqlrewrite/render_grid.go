package sqlrewrite

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// GridSums asks for exact integer sums over a public fixed-point grid, for
// mechanisms whose proof needs exact sums (piecewise.Variance): every
// non-NULL value of Column is mapped to its grid index
//
//	k = FLOOR((clamp(c) − Lower)/Unit + 0.5), an integer in [0, Top],
//
// Unit a power of two and Top = (Upper − Lower)/Unit ≤ 2^30, and the fetch
// returns one row of GridSumColumns integers: n, Σa, Σb, Σc, Σa², Σab, Σac,
// Σb², Σbc, Σc², where k = 2^20·a + 2^10·b + c with b, c in [0, 2^10) and
// a in [0, 2^10] (DecodeGridSums recombines Σk and Σk²). Every per-row
// term is at most 2^20, so each sum is at most n·2^20: an exact integer on
// every backend for n < 2^43 rows (SQLite sums INTEGERs in int64 and
// raises an error on overflow, an error that would depend on the data;
// with 10-bit parts it cannot happen below 8.8·10^12 rows, where 15-bit
// parts overflowed from 2^33; PostgreSQL and MariaDB sum in NUMERIC and
// DECIMAL), and the database's floating point touches only the per-row
// map, which is the same deterministic IEEE expression on every row.
type GridSums struct {
	Column       string
	Lower, Upper float64
	Unit         float64
}

// GridPartBits is the width of the three parts a, b, c of a grid index
// k = 2^20·a + 2^10·b + c.
const GridPartBits = 10

// GridSumColumns is the number of integers a GridSums fetch returns.
const GridSumColumns = 10

// DecodeGridSums recombines a GridSums fetch's integers into the count n,
// Σk = 2^20·Σa + 2^10·Σb + Σc and
// Σk² = 2^40·Σa² + 2^31·Σab + 2^21·Σac + 2^20·Σb² + 2^11·Σbc + Σc².
func DecodeGridSums(x []int64) (n int64, sum, squares *big.Int, err error) {
	if len(x) != GridSumColumns {
		return 0, nil, nil, fmt.Errorf("sqlrewrite: %d grid sums, want %d", len(x), GridSumColumns)
	}
	combine := func(terms []int64, shifts []uint) *big.Int {
		total := new(big.Int)
		for i, v := range terms {
			total.Add(total, new(big.Int).Lsh(big.NewInt(v), shifts[i]))
		}
		return total
	}
	sum = combine(x[1:4], []uint{20, 10, 0})
	squares = combine(x[4:10], []uint{40, 31, 21, 20, 11, 0})
	return x[0], sum, squares, nil
}

// maxGridTop bounds the grid indices so that they fit three 10-bit parts.
const maxGridTop = 1 << 30

// checkGrid validates a grid: finite bounds, a power-of-two unit, and at
// most 2^30 steps.
func checkGrid(lo, hi, unit float64) error {
	frac, _ := math.Frexp(unit)
	if math.IsNaN(lo) || math.IsInf(lo, 0) || math.IsInf(hi, 0) || !(lo <= hi) || !(unit > 0) || frac != 0.5 ||
		math.Floor((hi-lo)/unit+0.5) > maxGridTop {
		return fmt.Errorf("sqlrewrite: grid needs finite bounds and a power-of-two unit with at most 2^30 steps, got [%g, %g] by %g", lo, hi, unit)
	}
	return nil
}

// gridIndex renders the grid index of the quoted column: the clamped value
// minus lo, divided by unit (exact: a power of two), plus ½, floored and
// cast to the dialect's integer type. It is the expression of
// piecewise.VarianceGrid.Index.
func (r *renderer) gridIndex(col string, lo, hi, unit float64) (string, error) {
	if err := checkGrid(lo, hi, unit); err != nil {
		return "", err
	}
	v, err := r.clamp(col, lo, hi)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("CAST(FLOOR((%s - %s) / %s + 0.5) AS %s)", v, realLiteral(lo), realLiteral(unit), r.spec.integer), nil
}

// gridSums renders
//
//	SELECT COUNT(*), COALESCE(SUM(a), 0), COALESCE(SUM(b), 0), COALESCE(SUM(c), 0),
//	       COALESCE(SUM(a * a), 0), COALESCE(SUM(a * b), 0), COALESCE(SUM(a * c), 0),
//	       COALESCE(SUM(b * b), 0), COALESCE(SUM(b * c), 0), COALESCE(SUM(c * c), 0)
//	FROM (SELECT k DIV 2^20 AS a, (k DIV 2^10) % 2^10 AS b, k % 2^10 AS c
//	      FROM (SELECT gridIndex(c) AS k FROM t WHERE F AND readable(c)) AS g) AS s
//
// with the integer division of the dialect (k ≥ 0, so it truncates to the
// floor everywhere).
func (r *renderer) gridSums(f Fetch) (string, error) {
	g := f.GridSums
	col, err := r.spec.ident(g.Column)
	if err != nil {
		return "", err
	}
	k, err := r.gridIndex(col, g.Lower, g.Upper, g.Unit)
	if err != nil {
		return "", err
	}
	from, err := r.from(f, r.readable(col))
	if err != nil {
		return "", err
	}
	div := " / "
	if r.spec.name == "mysql" {
		div = " DIV "
	}
	part := strconv.Itoa(1 << GridPartBits)
	high := strconv.Itoa(1 << (2 * GridPartBits))
	sums := []string{"COUNT(*)"}
	for _, term := range []string{"a", "b", "c", "a * a", "a * b", "a * c", "b * b", "b * c", "c * c"} {
		sums = append(sums, "COALESCE(SUM("+term+"), 0)")
	}
	return "SELECT " + strings.Join(sums, ", ") + " FROM (SELECT k" + div + high + " AS a, (k" + div + part + ") % " + part +
		" AS b, k % " + part + " AS c FROM (SELECT " + k + " AS k" + from + ") AS g) AS s", nil
}
