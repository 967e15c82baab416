package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestCountDistinctWithinTheDeclaredValues: COUNT(DISTINCT col) and its
// 95% interval (DP_INTERVAL_LOW, DP_INTERVAL_HIGH) stay within [0, D], D
// the distinct values col's declaration allows: 3 for cat (values
// [1, 2, 3, null]), 101 for age (integer in [0, 100]), 10 for d (a date in
// 2018-01-01..10); on a unit table and a row-level one, alone and per
// group of GROUP BY, at ε = 0.2 over 4 releases, where the noise (scale
// 20) took COUNT(DISTINCT cat) to 93 and COUNT(DISTINCT age) to 163 in a
// review. A real column's count is not limited (its D is not finite).
// The SHOW WARNINGS note names the limit.
func TestCountDistinctWithinTheDeclaredValues(t *testing.T) {
	db := testdb.SQLite(t)
	var rows []string
	for p := range 40 {
		rows = append(rows, fmt.Sprintf("(%d, %d, %d, '2018-01-%02d', %g)", p, 1+p%3, p%50, 1+p%10, float64(p)/40))
	}
	for _, s := range []string{"CREATE TABLE v (person INTEGER, cat INTEGER, age INTEGER, d TEXT, r REAL)",
		"INSERT INTO v VALUES " + strings.Join(rows, ", "), "CREATE TABLE v_rows AS SELECT * FROM v"} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	columns := `
      - {name: cat, type: integer, lower: 1, upper: 3, values: [1, 2, 3, null]}
      - {name: age, type: integer, lower: 0, upper: 100}
      - {name: d, type: date, lower: 2018-01-01, upper: 2018-01-10}
      - {name: r, type: real, lower: 0, upper: 1}
`
	cat := filterConfig(t, `
  - name: v0
    source: v
    privacy_unit: person
    max_groups_per_unit: 3
    columns:`+columns+`
  - name: v
    source: v_rows
    columns:`+columns)
	e := newGroupedExecutor(t, backend.New(db, sqlrewrite.SQLite, nil))
	limits := map[string]float64{"cat": 3, "age": 101, "d": 10}
	clamped := map[string]bool{}
	for _, table := range []string{"v0", "v"} {
		for _, group := range []string{"", "cat"} {
			var sel []string
			if group != "" {
				sel = append(sel, group)
			}
			for _, c := range []string{"cat", "age", "d", "r"} {
				a := "COUNT(DISTINCT " + c + ")"
				sel = append(sel, a, "DP_INTERVAL_LOW("+a+")", "DP_INTERVAL_HIGH("+a+")")
			}
			q := "SELECT " + strings.Join(sel, ", ") + " FROM " + table
			if group != "" {
				q += " GROUP BY " + group
			}
			for seed := range 20 {
				res, err := e.RunQuery(context.Background(), "a", planGrouped(t, cat, q, 0.2), rand.NewChaCha8([32]byte{byte(seed)}))
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				out := res.Rows
				if out == nil {
					out = [][]any{res.Row}
				}
				for _, row := range out {
					if group != "" {
						row = row[1:]
					}
					for i, c := range []string{"cat", "age", "d", "r"} {
						d, limited := limits[c]
						for j, v := range row[3*i : 3*i+3] {
							x, ok := number(v)
							if !ok || x < 0 || limited && x > d {
								t.Fatalf("%s, seed %d: COUNT(DISTINCT %s) value or interval end %d is %v, want in [0, %g]", q, seed, c, j, v, d)
							}
							if x == d {
								clamped[c] = true
							}
							if c == "r" && x > 40 {
								clamped[c] = true
							}
						}
					}
				}
				if seed == 0 && group == "" {
					var note string
					for _, w := range res.Warnings {
						if strings.HasPrefix(w.Message, "COUNT(DISTINCT cat)") {
							note = w.Message
						}
					}
					if !strings.Contains(note, "of the values cat's declaration allows, at most 3)") {
						t.Errorf("%s: the note %q does not name the limit", q, note)
					}
				}
			}
		}
	}
	for _, c := range []string{"cat", "age", "d", "r"} {
		if !clamped[c] {
			t.Errorf("no released COUNT(DISTINCT %s) reached its limit: the test does not exercise the clamp", c)
		}
	}
}
