package sqlrewrite

import (
	"fmt"
	"math"
	"strconv"
)

// GridSums asks for exact integer sums over a public fixed-point grid, for
// mechanisms whose proof needs exact sums (piecewise.Variance): every
// non-NULL value of Column is mapped to its grid index
//
//	k = FLOOR((clamp(c) − Lower)/Unit + 0.5), an integer in [0, Top],
//
// Unit a power of two and Top = (Upper − Lower)/Unit ≤ 2^30, and the fetch
// returns one row of six integers: n, Σa, Σb, Σa², Σab, Σb², where
// k = 2^15·a + b with 0 ≤ b < 2^15 (so Σk = 2^15·Σa + Σb and
// Σk² = 2^30·Σa² + 2^16·Σab + Σb²). Every per-row term is at most 2^30,
// so each sum is an exact integer on every backend for n < 2^33 (SQLite
// sums INTEGERs exactly in int64; PostgreSQL and MariaDB in NUMERIC and
// DECIMAL), and the database's floating point touches only the per-row
// map, which is the same deterministic IEEE expression on every row.
type GridSums struct {
	Column       string
	Lower, Upper float64
	Unit         float64
}

// GridSplit is the split of a grid index k = GridSplit·a + b.
const GridSplit = 1 << 15

// maxGridTop bounds the grid indices so that every per-row term fits 2^30.
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
//	SELECT COUNT(*), COALESCE(SUM(a), 0), COALESCE(SUM(b), 0),
//	       COALESCE(SUM(a * a), 0), COALESCE(SUM(a * b), 0), COALESCE(SUM(b * b), 0)
//	FROM (SELECT k DIV 2^15 AS a, k MOD 2^15 AS b
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
	split := strconv.Itoa(GridSplit)
	return "SELECT COUNT(*), COALESCE(SUM(a), 0), COALESCE(SUM(b), 0), COALESCE(SUM(a * a), 0), " +
		"COALESCE(SUM(a * b), 0), COALESCE(SUM(b * b), 0) FROM (SELECT k" + div + split + " AS a, k % " + split +
		" AS b FROM (SELECT " + k + " AS k" + from + ") AS g) AS s", nil
}
