package exec

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestSelectedKeyCappedAtMaxGroups: GROUP BY a private key alone answers
// at most planner.MaxGroups of the values partition selection releases,
// the first in sorted order, and says so in a warning, as beside declared
// keys; the cut counts only released values (the 200 values of one row,
// which sort first, are not released and take no place). The table holds
// planner.MaxGroups + 40 frequent names (key00000, …, each far above the
// threshold) and k, the name's number. Without the cap every released
// value was answered: 10,040 rows, with memory growing with them. With
// WHERE k >= 5000 only 5,040 values pass: all are answered, no warning.
// EXPLAIN states the cap (10,000 alone, 5,000 beside sex), which it did
// not mention.
func TestSelectedKeyCappedAtMaxGroups(t *testing.T) {
	const keys, rare = planner.MaxGroups + 40, 200
	for _, c := range []struct {
		name    string
		open    func(t *testing.T) *sql.DB
		dialect sqlrewrite.Dialect
	}{
		{"sqlite", func(t *testing.T) *sql.DB { return testdb.SQLite(t) }, sqlrewrite.SQLite},
		{"postgres", func(t *testing.T) *sql.DB { return testdb.Postgres(t) }, sqlrewrite.PostgreSQL},
		{"mariadb", func(t *testing.T) *sql.DB { return testdb.MySQL(t) }, sqlrewrite.MySQL},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := c.open(t)
			lo, hi := 0.0, 100000.0
			cat := &catalog.Config{Tables: []catalog.Table{{Name: "p", Source: "p", Columns: []catalog.Column{
				{Name: "name", Source: "name", Type: catalog.Text, PartitionSelection: true},
				{Name: "k", Source: "k", Type: catalog.Integer, Lower: &lo, Upper: &hi},
				{Name: "sex", Source: "sex", Type: catalog.Text, Values: []string{"F", "M"}},
			}}}}
			qp := planGrouped(t, cat, "SELECT name, COUNT(*) FROM p GROUP BY name", 40)
			sel := qp.Selection
			if p := sel.KeepProbability(1); p > 1e-6 {
				t.Fatalf("a value of one row is released with probability %g: the rare values prove nothing", p)
			}
			perKey := int(sel.Threshold) + int(math.Ceil(20*sel.Scale()))
			textType := "TEXT"
			if c.dialect == sqlrewrite.MySQL {
				textType = "VARCHAR(20)"
			}
			if _, err := db.Exec("CREATE TABLE p (name " + textType + ", k BIGINT, sex " + textType + ")"); err != nil {
				t.Fatal(err)
			}
			var rows []string
			flush := func() {
				if _, err := db.Exec("INSERT INTO p (name, k, sex) VALUES " + strings.Join(rows, ", ")); err != nil {
					t.Fatal(err)
				}
				rows = rows[:0]
			}
			for k := range keys {
				for j := range perKey {
					rows = append(rows, fmt.Sprintf("('key%05d', %d, '%s')", k, k, []string{"F", "M"}[j%2]))
				}
				if len(rows) >= 3000 {
					flush()
				}
			}
			for i := range rare {
				rows = append(rows, fmt.Sprintf("('a%05d', 0, 'F')", i))
			}
			flush()
			e := newGroupedExecutor(t, backend.New(db, c.dialect, nil))
			run := func(q string) *Result {
				t.Helper()
				res, err := e.RunQuery(context.Background(), "a", planGrouped(t, cat, q, 40), rand.NewChaCha8([32]byte{41}))
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				return res
			}
			// EXPLAIN states the cap the statement applies.
			explained := func(q string, limit int) {
				t.Helper()
				_, rows := planGrouped(t, cat, q, 40).Explain()
				want := fmt.Sprintf("at most %d released values are answered (the first in sorted order", limit)
				for _, r := range rows {
					if r[1] == "selection" && strings.Contains(fmt.Sprint(r[6]), want) {
						return
					}
				}
				t.Errorf("EXPLAIN %s: no selection step stating %q: %v", q, want, rows)
			}
			truncated := func(res *Result) string {
				for _, w := range res.Warnings {
					if strings.Contains(w.Message, "values passed partition selection; only the first") {
						return w.Level + ": " + w.Message
					}
				}
				return ""
			}

			res := run("SELECT name, COUNT(*) FROM p GROUP BY name")
			explained("SELECT name, COUNT(*) FROM p GROUP BY name", planner.MaxGroups)
			if len(res.Rows) != planner.MaxGroups {
				t.Fatalf("%d rows answered, want the cap %d", len(res.Rows), planner.MaxGroups)
			}
			for i, row := range res.Rows {
				if want := fmt.Sprintf("key%05d", i); row[0] != want {
					t.Fatalf("row %d is %v, want %s: the first released values in sorted order", i, row, want)
				}
			}
			w := truncated(res)
			if !strings.HasPrefix(w, "Warning: GROUP BY name: more than 10000 values passed partition selection; only the first 10000 in sorted order are answered (at most 10000 groups") {
				t.Errorf("truncation warning %q", w)
			}
			if !strings.HasPrefix(res.Warnings[0].Message, "GROUP BY name: more than 10000 key(s) released by partition selection") {
				t.Errorf("selection note %q", res.Warnings[0].Message)
			}

			res = run("SELECT name, COUNT(*) FROM p WHERE k >= 5000 GROUP BY name")
			if len(res.Rows) != keys-5000 || truncated(res) != "" {
				t.Errorf("WHERE k >= 5000: %d rows, truncation %q; want every one of the %d released values, no truncation", len(res.Rows), truncated(res), keys-5000)
			}

			if c.dialect != sqlrewrite.SQLite {
				return
			}
			// Beside a declared key of two values: half as many values.
			res = run("SELECT name, sex, COUNT(*) FROM p GROUP BY name, sex")
			explained("SELECT name, sex, COUNT(*) FROM p GROUP BY name, sex", planner.MaxGroups/2)
			if len(res.Rows) != planner.MaxGroups || res.Rows[len(res.Rows)-1][0] != fmt.Sprintf("key%05d", planner.MaxGroups/2-1) {
				t.Errorf("GROUP BY name, sex: %d rows, the last %v; want %d, the last of key%05d", len(res.Rows), res.Rows[len(res.Rows)-1], planner.MaxGroups, planner.MaxGroups/2-1)
			}
			if w := truncated(res); !strings.Contains(w, "only the first 5000 in sorted order are answered, each with the 2 groups of the declared keys") {
				t.Errorf("GROUP BY name, sex: truncation warning %q", w)
			}
		})
	}
}
