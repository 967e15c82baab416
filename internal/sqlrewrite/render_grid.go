package sqlrewrite

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

// GridSums asks for exact integer sums over a public fixed-point grid, for
// mechanisms whose proof needs exact sums (piecewise.Variance, the edge
// releases of AVG and VARIANCE): every non-NULL value of Column is mapped
// to its grid index
//
//	k = FLOOR((clamp(c) − Lower)/Unit + 0.5), an integer in [0, Top],
//
// Unit a power of two and Top = (Upper − Lower)/Unit ≤ 2^30, and the fetch
// returns one row of GridSumWidth integers, which DecodeGridSums turns
// into n, Σk and Σk² (GridTotals). On PostgreSQL and MySQL/MariaDB they
// are n, Σk, Σk² themselves: k and k² (≤ 2^60) are BIGINTs and their SUMs
// NUMERIC or DECIMAL, exact at any size. On SQLite, which sums INTEGERs in
// int64 and raises an error on overflow (an error that would depend on the
// data), they are n, Σa, Σb, Σc, Σa², Σab, Σac, Σb², Σbc, Σc² for
// k = 2^20·a + 2^10·b + c with b, c in [0, 2^10) and a in [0, 2^10]: every
// per-row term is at most 2^20, so no sum overflows below 8.8·10^12 rows.
// The database's floating point touches only the per-row map, the same
// deterministic IEEE expression on every row. Every integer is read as
// text, never through a float64.
type GridSums struct {
	Column       string
	Lower, Upper float64
	Unit         float64
	// SumOnly asks for n and Σk alone (AVG's releases): Σk² is not
	// computed on PostgreSQL and MySQL/MariaDB, where summing k² in
	// DECIMAL costs more than the rest of the scan, and it is read as
	// absent (GridTotals.SumSquares nil) everywhere.
	SumOnly bool
	// Ranks, if set, sums only the values ranked Offset to
	// Offset+Limit−1 (0-based) in ascending order of the column, the
	// ranks of a Window with the same Offset and Limit (the PTR trimmed
	// mean's middle). It is not combined across partitions or groups.
	Ranks *RankSlice
	// FloatSum, on MySQL/MariaDB with no Ranks, sums the indices (Σk)
	// as DOUBLE, not as the DECIMAL sum of BIGINTs, which costs MariaDB
	// about as much as the rest of the scan. Every index is an integer of
	// at most 2^30, so every partial sum is exact while the sum stays
	// below 2^53, and the rounding of a sum of non-negative terms is
	// monotone, so a returned sum below 2^53 was computed exactly
	// (DecodeFloatGridSum); a larger one is not trusted, and the caller
	// asks again without FloatSum. The per-row index is the same double
	// either way (the BIGINT is its exact cast). Without SumOnly, Σk² is
	// still the DECIMAL sum of the BIGINT squares of those casts, the
	// same integers as without FloatSum (k² reaches 2^60, past a
	// DOUBLE's exact integers).
	FloatSum bool
}

// DecodeFloatGridSum reads the Σk of a FloatSum fetch (MariaDB prints a
// DOUBLE in its shortest round-trip form, 4.503599627370497e15 above
// 10^15): exact is false unless it is an integer below 2^53, which a
// FloatSum sum of indices then is exactly (GridSums.FloatSum).
func DecodeFloatGridSum(text string) (sum *big.Int, exact bool) {
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || !(f >= 0 && f < 1<<53) || f != math.Trunc(f) {
		return nil, false
	}
	return big.NewInt(int64(f)), true
}

// RankSlice is a range of 0-based ranks of a column in ascending order.
type RankSlice struct {
	Offset, Limit int64
}

// GridTotals are the exact n, Σk and Σk² of a GridSums fetch (Σk² nil
// for a SumOnly fetch).
type GridTotals struct {
	Count           int64
	Sum, SumSquares *big.Int
}

// GridPartBits is the width of the three parts a, b, c of a grid index
// k = 2^20·a + 2^10·b + c (SQLite's form).
const GridPartBits = 10

// GridSumWidth is the number of integers a GridSums fetch returns on d.
func GridSumWidth(d Dialect) int {
	if d == SQLite {
		return 10
	}
	return 3
}

// DecodeGridSums turns a GridSums fetch's integers on d into n, Σk, Σk²
// (0 for a SumOnly fetch on PostgreSQL and MySQL: GridTotals.Of drops it):
// as they are, or on SQLite Σk = 2^20·Σa + 2^10·Σb + Σc and
// Σk² = 2^40·Σa² + 2^31·Σab + 2^21·Σac + 2^20·Σb² + 2^11·Σbc + Σc².
func DecodeGridSums(d Dialect, x []*big.Int) (GridTotals, error) {
	if len(x) != GridSumWidth(d) {
		return GridTotals{}, fmt.Errorf("sqlrewrite: %d grid sums, want %d", len(x), GridSumWidth(d))
	}
	if !x[0].IsInt64() {
		return GridTotals{}, fmt.Errorf("sqlrewrite: grid count %v", x[0])
	}
	out := GridTotals{Count: x[0].Int64(), Sum: new(big.Int).Set(x[1]), SumSquares: new(big.Int).Set(x[2])}
	if d == SQLite {
		combine := func(terms []*big.Int, shifts []uint) *big.Int {
			total := new(big.Int)
			for i, v := range terms {
				total.Add(total, new(big.Int).Lsh(v, shifts[i]))
			}
			return total
		}
		out.Sum, out.SumSquares = combine(x[1:4], []uint{20, 10, 0}), combine(x[4:10], []uint{40, 31, 21, 20, 11, 0})
	}
	return out, nil
}

// Of returns the totals a fetch of g reads: without Σk² if g is SumOnly
// (whose query computes none, or one shared with a full fetch).
func (t GridTotals) Of(g *GridSums) GridTotals {
	if g.SumOnly {
		t.SumSquares = nil
	}
	return t
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
// mech.Grid.Index, written for the fewest operations per row: no
// subtraction when lo is 0 (v − 0 is v, −0 included), and the division
// as a multiplication by 1/unit where that is a float64 (both are the one
// rounding of the same real number v·2^−e, so they agree on every value,
// subnormal results included; about 10% of the index's cost on MariaDB).
// On MySQL the constants are DOUBLE literals: a DECIMAL one (0.5) is
// converted to a double on every row (the same value, at 1.2–1.6× the
// cost of AVG's and VARIANCE's grid sums on MariaDB).
func (r *renderer) gridIndex(col string, lo, hi, unit float64) (string, error) {
	k, err := r.floorIndex(col, lo, hi, unit)
	if err != nil {
		return "", err
	}
	return "CAST(" + k + " AS " + r.spec.integer + ")", nil
}

// floorIndex renders gridIndex before its cast: on MySQL a DOUBLE, the
// integer the cast gives exactly (≤ 2^30), which GridSums.FloatSum sums.
func (r *renderer) floorIndex(col string, lo, hi, unit float64) (string, error) {
	if err := checkGrid(lo, hi, unit); err != nil {
		return "", err
	}
	v, err := r.gridClamp(col, lo, hi, unit)
	if err != nil {
		return "", err
	}
	literal := realLiteral
	if r.dialect == MySQL {
		literal = doubleLiteral
	}
	if lo != 0 {
		v = "(" + v + " - " + literal(lo) + ")"
	} else {
		v = "(" + v + ")"
	}
	scaled := v + " / " + literal(unit)
	if inverse := 1 / unit; !math.IsInf(inverse, 0) {
		scaled = v + " * " + literal(inverse)
	}
	return fmt.Sprintf("FLOOR(%s + %s)", scaled, literal(0.5)), nil
}

// gridClamp renders the clamped value of a grid index: clamp, except on
// MySQL where the flush of values of magnitude below m =
// catalog.MinBoundMagnitude to 0 (mysqlClamp's CASE) cannot change an
// index, which is then of the plain LEAST(GREATEST(c, lo), hi): 0.9× the
// CASE's cost per row on MariaDB (bench/RESULTS-latency.md). Values of
// magnitude at least m are clamped alike by both forms; one below m
// (−0 included) gives the index of 0 either way when
//   - lo is 0 and unit ≥ 4m: a negative one is clamped to 0 (or −0), a
//     positive one v has v/unit < ¼, so ⌊v/unit + ½⌋ = 0 after every
//     rounding (each is monotone), as for 0;
//   - lo ≤ −2^−340: v − lo rounds to −lo, as 0 − lo is, |v| being below
//     half an ulp of lo (at least 2^−394 below |lo|'s binade).
func (r *renderer) gridClamp(col string, lo, hi, unit float64) (string, error) {
	v, err := r.clamp(col, lo, hi)
	if err == nil && r.dialect == MySQL && plainGridClamp(lo, unit) {
		v = "LEAST(GREATEST(" + col + ", " + doubleLiteral(lo) + "), " + doubleLiteral(hi) + ")"
	}
	return v, err
}

// plainGridClamp reports whether gridClamp drops the flush of a grid from
// lo by unit on MySQL.
func plainGridClamp(lo, unit float64) bool {
	return lo == 0 && unit >= 4*catalog.MinBoundMagnitude || lo <= -0x1p-340
}

// gridClampReadsOnce reports whether gridClamp reads its column once on
// MySQL, as LEAST(GREATEST(c, lo), hi): where the clamp to [lo, hi]
// flushes no value (flushes) or the grid drops the flush (plainGridClamp).
func gridClampReadsOnce(lo, hi, unit float64) bool {
	return !flushes(lo, hi) || plainGridClamp(lo, unit)
}

// GroupedGridSums asks for the GridSums of Grid in every cell of a product
// domain, in one GROUP BY computed by the database: the fetch returns
// (k_1, …, k_d, the GridSumWidth integers) for the non-empty cells, the
// keys as in GroupedSummary. Each cell's integers are the GridSums fetch
// of the same rows with the cell's conditions added to the filter: one
// scan for every group of a GROUP BY instead of one each.
type GroupedGridSums struct {
	Dims []CellDim
	Grid GridSums
}

// groupedGridSums renders a GroupedGridSums fetch: the GridSums query with
// the cells' keys beside each index, grouped by them,
//
//	SELECT g1, g2, COUNT(*), COALESCE(SUM(k), 0), COALESCE(SUM(k * k), 0)
//	FROM (SELECT key1 AS g1, key2 AS g2, gridIndex(c) AS k FROM t WHERE F AND readable(c)) AS g
//	GROUP BY 1, 2
//
// (on SQLite the ten sums of the parts of k, as gridSums).
func (r *renderer) groupedGridSums(f Fetch) (string, error) {
	gg := f.GroupedGrid
	if len(gg.Dims) == 0 {
		return "", errors.New("sqlrewrite: grouped grid sums need dimensions")
	}
	if gg.Grid.Ranks != nil {
		return "", errors.New("sqlrewrite: grouped grid sums cannot take ranks")
	}
	inner, keys, group, err := r.groupedKeys(gg.Dims)
	if err != nil {
		return "", err
	}
	k, from, err := r.gridIndexFrom(f, gg.Grid)
	if err != nil {
		return "", err
	}
	sums, source := r.gridTotals(gg.Grid, keys, "(SELECT "+strings.Join(append(inner, k...), ", ")+from+") AS g", len(k) > 1)
	return "SELECT " + strings.Join(append(keys, sums...), ", ") + " FROM " + source + " GROUP BY " + strings.Join(group, ", "), nil
}

// gridIndexFrom renders the select list of the grid indices, "index AS k"
// of g's column, and the FROM and WHERE of f's rows whose value is
// readable (with g.Ranks, ordered and limited to those ranks). Where f
// reads the column once per row (readsOnce), the index alone reads it:
// the rows are not filtered on it (k is NULL where it is, and adds to no
// sum), and the list has a second item, n, 1 where the columns it is
// computed from are all not NULL (RowExpr.nullColumns), which is where
// it is readable, and NULL elsewhere, so that COUNT(n) counts the rows
// of a readable value (no n where it reads no column and is never NULL:
// COUNT(*) counts them).
func (r *renderer) gridIndexFrom(f Fetch, g GridSums) (k []string, from string, err error) {
	col, err := r.column(g.Column)
	if err != nil {
		return nil, "", err
	}
	index := r.gridIndex
	if g.FloatSum {
		if r.dialect != MySQL || g.Ranks != nil {
			return nil, "", errors.New("sqlrewrite: float grid sums are for every rank on MySQL")
		}
		index = r.floorIndex
	}
	i, err := index(col, g.Lower, g.Upper, g.Unit)
	if err != nil {
		return nil, "", err
	}
	k, readable := []string{i + " AS k"}, r.readable(col)
	if r.readsOnce(f) {
		readable = ""
		cols, _ := f.Derived[slices.IndexFunc(f.Derived, func(d DerivedColumn) bool { return d.Name == g.Column })].Expr.nullColumns()
		known := make([]string, len(cols))
		for j, c := range cols {
			q, err := r.ident(c)
			if err != nil {
				return nil, "", err
			}
			known[j] = q + " IS NOT NULL"
		}
		if len(known) > 0 {
			k = append(k, "CASE WHEN "+strings.Join(known, " AND ")+" THEN 1 END AS n")
		}
	}
	if from, err = r.from(f, readable); err != nil || g.Ranks == nil {
		return k, from, err
	}
	if g.Ranks.Offset < 0 || g.Ranks.Limit < 1 {
		return nil, "", fmt.Errorf("sqlrewrite: ranks need offset ≥ 0 and limit ≥ 1, got %d and %d", g.Ranks.Offset, g.Ranks.Limit)
	}
	from, ranks, err := r.ranked(f, g.Column, from, g.Ranks.Offset, g.Ranks.Limit)
	return k, from + ranks, err
}

// gridTotals returns the aggregates of a GridSums fetch over indices, a
// derived table of the grid indices k (and the key columns keys, and with
// counted the indicator n that COUNT reads on MySQL: gridIndexFrom), and
// the table they read: n, Σk, Σk² (0 with SumOnly) on PostgreSQL and
// MySQL/MariaDB (with FloatSum, k is the DOUBLE index and Σk² the sum of
// the squares of its BIGINT casts); on SQLite the ten sums of the parts
// a, b, c of k, over a derived table that splits it.
func (r *renderer) gridTotals(g GridSums, keys []string, indices string, counted bool) (sums []string, source string) {
	if r.dialect != SQLite {
		count := "COUNT(*)"
		if counted {
			count = "COUNT(n)"
		}
		squares := "COALESCE(SUM(k * k), 0)"
		switch {
		case g.SumOnly:
			squares = "0"
		case g.FloatSum:
			squares = "COALESCE(SUM(CAST(k AS " + r.spec.integer + ") * CAST(k AS " + r.spec.integer + ")), 0)"
		}
		return []string{count, "COALESCE(SUM(k), 0)", squares}, indices
	}
	part := strconv.Itoa(1 << GridPartBits)
	high := strconv.Itoa(1 << (2 * GridPartBits))
	source = "(SELECT " + strings.Join(append(slices.Clone(keys), "k / "+high+" AS a", "(k / "+part+") % "+part+" AS b", "k % "+part+" AS c"), ", ") +
		" FROM " + indices + ") AS s"
	sums = []string{"COUNT(*)"}
	for _, term := range []string{"a", "b", "c", "a * a", "a * b", "a * c", "b * b", "b * c", "c * c"} {
		sums = append(sums, "COALESCE(SUM("+term+"), 0)")
	}
	return sums, source
}

// gridSums renders, on PostgreSQL and MySQL/MariaDB,
//
//	SELECT COUNT(*), COALESCE(SUM(k), 0), COALESCE(SUM(k * k), 0)
//	FROM (SELECT gridIndex(c) AS k FROM t WHERE F AND readable(c)) AS g
//
// (0 for the last with SumOnly; with Ranks, the inner query ends in the
// ORDER BY, LIMIT and OFFSET of a Window of those ranks)
// and on SQLite
//
//	SELECT COUNT(*), COALESCE(SUM(a), 0), COALESCE(SUM(b), 0), COALESCE(SUM(c), 0),
//	       COALESCE(SUM(a * a), 0), COALESCE(SUM(a * b), 0), COALESCE(SUM(a * c), 0),
//	       COALESCE(SUM(b * b), 0), COALESCE(SUM(b * c), 0), COALESCE(SUM(c * c), 0)
//	FROM (SELECT k / 2^20 AS a, (k / 2^10) % 2^10 AS b, k % 2^10 AS c
//	      FROM (SELECT gridIndex(c) AS k FROM t WHERE F AND readable(c)) AS g) AS s
//
// (k ≥ 0, so the integer division truncates to the floor).
func (r *renderer) gridSums(f Fetch) (string, error) {
	k, from, err := r.gridIndexFrom(f, *f.GridSums)
	if err != nil {
		return "", err
	}
	sums, source := r.gridTotals(*f.GridSums, nil, "(SELECT "+strings.Join(k, ", ")+from+") AS g", len(k) > 1)
	return "SELECT " + strings.Join(sums, ", ") + " FROM " + source, nil
}
