package main

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestSynopsisRangeEndsOnBinEdges: t.x is a real column over [0, 10] with a
// synopsis of 10 bins, edges on the whole numbers, and in the g = 0 rows x
// holds the whole numbers 0..9, 400 rows each. COUNT(*) WHERE x BETWEEN 2
// AND 5 answered about 1200 (truth 1600) and x <= 5 about 2000 (truth
// 2400), from the synopsis with no note: the closed end 5 was read as open,
// and every row with x = 5, in the bin [5, 6), was left out. Such a count
// is now a fresh Laplace count (ε = 1, scale 1: within 20 of the truth
// fails with probability e^-20), charged, with a note saying why; x < 5
// and x >= 5 are answered from the synopsis, free, with no note (Greedy-H
// at ε = 0.5 over 10 bins errs by a few tens; 200 is half a bin); an end
// inside a bin is counted in proportion and says so; a range count with
// an end on an edge that takes the edge value is refused (1235), as
// equality on a real column is.
func TestSynopsisRangeEndsOnBinEdges(t *testing.T) {
	for _, b := range visitsBackends {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			direct := testdb.Open(t, b.driver, dsn)
			if _, err := direct.Exec("CREATE TABLE t (y DOUBLE PRECISION, x DOUBLE PRECISION, g INTEGER)"); err != nil {
				t.Fatal(err)
			}
			var values []string
			for i := range 4000 {
				values = append(values, fmt.Sprintf("(%d, %d, 0)", i%100, i%10))
				if i%10 == 9 {
					// Rows of another predicate, x inside bins.
					values = append(values, fmt.Sprintf("(%d, %g, 1)", i%100, float64(i%10)+0.5))
				}
				if len(values) >= 500 {
					if _, err := direct.Exec("INSERT INTO t VALUES " + strings.Join(values, ", ")); err != nil {
						t.Fatal(err)
					}
					values = values[:0]
				}
			}
			if len(values) > 0 {
				if _, err := direct.Exec("INSERT INTO t VALUES " + strings.Join(values, ", ")); err != nil {
					t.Fatal(err)
				}
			}
			_, db := startCarolProxy(t, b.driver, dsn, "{default_epsilon: 1, max_epsilon: 10}", "epsilon: 100, delta: 0", `  - name: t
    epsilon: 100
    columns:
      - {name: y, type: real, lower: 0, upper: 100}
      - {name: x, type: real, lower: 0, upper: 10, histogram: {epsilon: 0.5, bins: 10}}
      - {name: g, type: integer, lower: 0, upper: 3}
`)
			spent := 0.0
			for _, tc := range []struct {
				where string
				truth int64
				tol   float64
				// fresh: a Laplace count at ε = 1 whose note has this;
				// else from the synopsis, with the proportion note or not.
				fresh      string
				proportion bool
			}{
				{where: "x BETWEEN 2 AND 5", truth: 1600, tol: 20, fresh: "x <= 5 ends exactly on an edge of the synopsis bins of the real column x (width 1)"},
				{where: "x <= 5", truth: 2400, tol: 20, fresh: "x <= 5 ends exactly on an edge"},
				{where: "x > 5", truth: 1600, tol: 20, fresh: "x > 5 ends exactly on an edge"},
				{where: "x < 5", truth: 2000, tol: 200},
				{where: "x >= 5", truth: 2000, tol: 200},
				{where: "x >= 2 AND x < 6", truth: 1600, tol: 200},
				{where: "x BETWEEN 2 AND 5.5", truth: 1600, tol: 400, proportion: true},
			} {
				q := "SELECT COUNT(*) FROM t WHERE " + tc.where + " AND g = 0"
				got := queryCount(t, db, q)
				ws := strings.Join(sessionWarnings(t, db), "\n")
				if tc.fresh != "" {
					spent++
					if !strings.Contains(ws, "COUNT(*) is a fresh Laplace count, charged, not an answer from the synopsis of x: ") || !strings.Contains(ws, tc.fresh) {
						t.Errorf("%s: SHOW WARNINGS lacks the fresh-count note with %q:\n%s", q, tc.fresh, ws)
					}
				} else {
					if spent == float64(int(spent)) {
						spent += 0.5 // the first answer from the synopsis of x | g = 0 builds it
					}
					if !strings.Contains(ws, "answered from synopsis") || strings.Contains(ws, "counted in proportion") != tc.proportion {
						t.Errorf("%s: SHOW WARNINGS, want an answer from the synopsis, proportion note %v:\n%s", q, tc.proportion, ws)
					}
				}
				t.Logf("%s = %d (truth %d)", q, got, tc.truth)
				if math.Abs(float64(got-tc.truth)) > tc.tol {
					t.Errorf("%s = %d, want %d ± %g", q, got, tc.truth, tc.tol)
				}
				checkRemaining(t, db, 100-spent)
			}
			var n int64
			err := db.QueryRow("SELECT SUM(x <= 5) FROM t WHERE g = 0").Scan(&n)
			if code := mysqlCode(err); code != 1235 || !strings.Contains(err.Error(), "write x < 5") {
				t.Errorf("SUM(x <= 5): got %v (code %d), want 1235 naming x < 5", err, code)
			}
			checkRemaining(t, db, 100-spent)
		})
	}
}
