package exec

import (
	"slices"
	"testing"

	"github.com/dpproxy/dpproxy/internal/backend"
)

// TestScalarSubqueriesInWhereTrackTheTruth runs statements whose WHERE
// compares a column with a scalar subquery on SQLite, PostgreSQL and
// MariaDB at a large ε: the subquery is released first, its value bound
// as a constant of the statement's fetches, and each answer is near the
// count over the rows that value keeps. COUNT(*) / 800 of t's 2000 rows
// is the DECIMAL 2.5000, which an integer column compares with exactly
// (k >= 2.5 keeps k = 3 and 4, 800 rows; truncated to 2 it would keep
// 1200). An AVG over no row is NULL: the comparison, and its NOT, is
// UNKNOWN for every row, and the statement's COUNT is a noisy 0, charged
// as any. The analyst and every table are charged the statement's ε
// once. It failed before (1235: a subquery in WHERE).
func TestScalarSubqueriesInWhereTrackTheTruth(t *testing.T) {
	cat := scalarCatalog()
	rowsT, _ := scalarRows()
	var meanX float64
	for _, r := range rowsT {
		meanX += r[1]
	}
	meanX /= float64(len(rowsT))
	above := 0.0
	for _, r := range rowsT {
		if r[1] > meanX {
			above++
		}
	}
	// The median and mean of x over the rows with k >= 2.5.
	var kept []float64
	for _, r := range rowsT {
		if r[0] >= 2.5 {
			kept = append(kept, r[1])
		}
	}
	slices.Sort(kept)
	medianAbove, meanAbove := kept[len(kept)/2], 0.0
	for _, x := range kept {
		meanAbove += x / float64(len(kept))
	}
	const eps = 100.0
	cases := []scalarCase{
		{"SELECT COUNT(*) FROM t WHERE x > (SELECT AVG(x) FROM t)", [][]float64{{above}}, 25, []string{"t"}},
		{"SELECT COUNT(*) FROM t WHERE k >= (SELECT COUNT(*) / 800 FROM t)", [][]float64{{800}}, 2, []string{"t"}},
		{"SELECT COUNT(*) FROM t WHERE k = (SELECT COUNT(*) / 800 FROM t)", [][]float64{{0}}, 2, []string{"t"}},
		{"SELECT COUNT(*) FROM t WHERE (SELECT COUNT(*) / 800 FROM t) > k", [][]float64{{1200}}, 2, []string{"t"}},
		{"SELECT COUNT(*) FROM t WHERE k BETWEEN (SELECT COUNT(*) / 800 FROM t) AND 3", [][]float64{{400}}, 2, []string{"t"}},
		{"SELECT k, COUNT(*) FROM t WHERE k <> (SELECT COUNT(*) / 1000 FROM t) AND k < (SELECT COUNT(*) / 1000 + 3 FROM u) GROUP BY k",
			[][]float64{{0, 400}, {1, 400}, {2, 0}, {3, 400}, {4, 0}}, 2, []string{"t", "u"}},
		{"SELECT MEDIAN(x), AVG(x) FROM t WHERE k >= (SELECT COUNT(*) / 800 FROM t)", [][]float64{{medianAbove, meanAbove}}, 3, []string{"t"}},
		{"SELECT COUNT(*) FROM t WHERE x > (SELECT AVG(y) FROM u WHERE y > 5 AND y < 3)", [][]float64{{0}}, 2, []string{"t"}},
		// Nested: u's 500 rows give 0.5000, t's 1600 rows with k > 0.5
		// give 4.0000, which keeps k = 4.
		{"SELECT COUNT(*) FROM t WHERE k >= (SELECT COUNT(*) / 400 FROM t WHERE k > (SELECT COUNT(*) / 1000 FROM u))", [][]float64{{400}}, 2, []string{"t", "u"}},
		{"SELECT COUNT(*) FROM t WHERE NOT (x > (SELECT AVG(y) FROM u WHERE y > 5 AND y < 3)) OR k = 1", [][]float64{{400}}, 2, []string{"t"}},
	}
	for _, b := range testBackends {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			loadScalarTables(t, func(s string) error { _, err := db.Exec(s); return err })
			runScalarCases(t, newGroupedExecutor(t, backend.New(db, b.dialect, nil)), cat, eps, cases)
		})
	}
}

// TestScalarArithmeticInWhereTrackTheTruth runs statements whose WHERE
// compares a column with arithmetic of scalar subqueries and constants
// on SQLite, PostgreSQL and MariaDB at a large ε: the subqueries are
// released first, the value computed from them as MySQL computes it
// (post-processing) and bound as a constant of the statement's fetches.
// COUNT(*) / 20000 of t's 2000 rows is the DECIMAL 0.1000, and 0.1000 *
// 3 * 10 the DECIMAL 3.000000, which keeps k = 3 and 4 (800 rows); in
// DOUBLE it would be 3.0000000000000004 and keep 400. A division by zero
// is NULL, so the comparison is UNKNOWN, its NOT too. -2000 DIV 700 is
// -2, as in MySQL. It failed before (1235: a subquery inside an
// expression).
func TestScalarArithmeticInWhereTrackTheTruth(t *testing.T) {
	cat := scalarCatalog()
	rowsT, _ := scalarRows()
	var meanX float64
	for _, r := range rowsT {
		meanX += r[1] / float64(len(rowsT))
	}
	above := 0.0
	for _, r := range rowsT {
		if r[1] > 2*meanX-50 {
			above++
		}
	}
	const eps = 100.0
	cases := []scalarCase{
		{"SELECT COUNT(*) FROM t WHERE k >= (SELECT COUNT(*) / 20000 FROM t) * 3 * 10", [][]float64{{800}}, 2, []string{"t"}},
		{"SELECT COUNT(*) FROM t WHERE x > 2 * (SELECT AVG(x) FROM t) - 50", [][]float64{{above}}, 25, []string{"t"}},
		{"SELECT COUNT(*) FROM t WHERE k BETWEEN (SELECT COUNT(*) / 800 FROM t) - 1 AND (SELECT COUNT(*) / 800 FROM t) + 0.5", [][]float64{{800}}, 2, []string{"t"}},
		{"SELECT COUNT(*) FROM t WHERE k > (SELECT COUNT(*) / 800 FROM t) + (SELECT COUNT(*) / 1000 FROM u)", [][]float64{{400}}, 2, []string{"t", "u"}},
		{"SELECT COUNT(*) FROM t WHERE k < (SELECT COUNT(*) FROM t) / 0 OR k = 1", [][]float64{{400}}, 2, []string{"t"}},
		{"SELECT COUNT(*) FROM t WHERE NOT (k < (SELECT COUNT(*) FROM t) / 0)", [][]float64{{0}}, 2, []string{"t"}},
		{"SELECT COUNT(*) FROM t WHERE k >= -(SELECT COUNT(*) FROM t) DIV 700 + 4", [][]float64{{1200}}, 2, []string{"t"}},
	}
	for _, b := range testBackends {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			loadScalarTables(t, func(s string) error { _, err := db.Exec(s); return err })
			runScalarCases(t, newGroupedExecutor(t, backend.New(db, b.dialect, nil)), cat, eps, cases)
		})
	}
}
