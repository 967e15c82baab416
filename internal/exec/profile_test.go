package exec

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// queryCounter counts the backend's "backend fetch" debug records: one per
// query sent.
type queryCounter struct{ n atomic.Int64 }

func (c *queryCounter) Enabled(context.Context, slog.Level) bool { return true }
func (c *queryCounter) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "backend fetch" {
		c.n.Add(1)
	}
	return nil
}
func (c *queryCounter) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *queryCounter) WithGroup(string) slog.Handler      { return c }

// TestOneScanStatements runs AVG, VARIANCE (whose mechanisms read a
// summary, a grid-median histogram and, for piecewise Laplace, grid sums
// and windows of the column), AVG of a real column (its profile grouped by
// histogram bin) and the README's mixed statement on SQLite,
// PostgreSQL and MariaDB, over a table with NULLs, values outside the
// bounds (and text on SQLite), twice with the same noise: with the plan's
// profile, and without it (every fetch sent as before). The answers are
// identical (integer data: the database's float sums are exact, as the
// profile's are), and the profile sends one query for AVG and VARIANCE,
// for SUM and AVG of other columns (their exact grid sums carried), and
// two for the mixed statement (the profile and the median window of
// income), where the old path sent at least two and three.
func TestOneScanStatements(t *testing.T) {
	lo, hiAge, hiIncome := 0.0, 100.0, 500000.0
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "pums", Source: "pums", Columns: []catalog.Column{
		{Name: "age", Source: "age", Type: catalog.Integer, Lower: &lo, Upper: &hiAge},
		{Name: "income", Source: "income", Type: catalog.Real, Lower: &lo, Upper: &hiIncome},
	}}}}
	r := rand.New(rand.NewChaCha8([32]byte{7}))
	var rows []string
	for range 3000 {
		age, income := fmt.Sprint(18+r.IntN(75)), fmt.Sprint(r.IntN(100000))
		switch r.IntN(40) {
		case 0:
			age = "NULL"
		case 1:
			income = "NULL"
		case 2:
			age = "-5"
		case 3:
			age = "130"
		case 4:
			income = "900000"
		}
		rows = append(rows, "("+age+", "+income+")")
	}
	for _, b := range []struct {
		name    string
		dialect sqlrewrite.Dialect
		open    func(testing.TB) *sql.DB
		hostile string
	}{
		{"sqlite", sqlrewrite.SQLite, testdb.SQLite, ", ('x', 5), (40, 'y')"},
		{"postgres", sqlrewrite.PostgreSQL, testdb.Postgres, ""},
		{"mysql", sqlrewrite.MySQL, testdb.MySQL, ""},
	} {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			for _, s := range []string{"CREATE TABLE pums (age INTEGER, income DOUBLE PRECISION)",
				"INSERT INTO pums (age, income) VALUES " + strings.Join(rows, ", ") + b.hostile} {
				if _, err := db.Exec(s); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
			}
			counter := &queryCounter{}
			e := newGroupedExecutor(t, backend.New(db, b.dialect, slog.New(counter)))
			for _, tc := range []struct {
				q          string
				want, less int64 // queries with the profile, and at least without
			}{
				// AVG and VARIANCE read the exact grid sums of their
				// column, which for a column with few values group by it:
				// the profile is that one query.
				{"SELECT AVG(age) FROM pums", 1, 1},
				{"SELECT VARIANCE(age) FROM pums", 1, 1},
				{"SELECT COUNT(*), AVG(age), VARIANCE(age), STDDEV(age), SUM(income), MEDIAN(income) FROM pums WHERE age BETWEEN 20 AND 60", 2, 2},
				// A grid median's histogram: the profile carries the count,
				// and AVG(income)'s exact n and Σk (GridIndexSum).
				{"SELECT COUNT(*), AVG(income), MEDIAN(age) FROM pums WHERE age > 30", 1, 3},
				// Grouped by age (its grid sums): income's n and Σk are
				// carried exactly; MEDIAN(income) is a window.
				{"SELECT SUM(income), SUM(age), MEDIAN(income) FROM pums", 2, 3},
				{"SELECT AVG(age), VARIANCE(age), MEDIAN(age) FROM pums", 1, 2},
			} {
				st, err := sqlrewrite.NewParser(cat).Parse(tc.q)
				if err != nil {
					t.Fatal(err)
				}
				plan, err := planner.New(cat).Plan(st.(*sqlrewrite.Select), planner.Settings{Epsilon: 1, Mechanism: "auto"})
				if err != nil || (plan.Profile == nil) != (tc.less == 0) {
					t.Fatalf("%s: %v, or profile %v (want one: %v)", tc.q, err, plan.Profile, tc.less > 0)
				}
				run := func(plan *planner.Plan, seed byte) (*Result, int64) {
					before := counter.n.Load()
					res, err := e.Run(context.Background(), "a", plan, rand.NewChaCha8([32]byte{seed}))
					if err != nil {
						t.Fatalf("%s: %v", tc.q, err)
					}
					return res, counter.n.Load() - before
				}
				old := *plan
				old.Profile = nil
				for seed := range byte(3) {
					with, sent := run(plan, seed)
					without, sentBefore := run(&old, seed)
					if sent != tc.want || sentBefore < tc.less {
						t.Errorf("%s: %d queries with the profile (want %d), %d without (want ≥ %d)", tc.q, sent, tc.want, sentBefore, tc.less)
					}
					if !reflect.DeepEqual(with.Row, without.Row) {
						t.Errorf("%s, seed %d: with the profile %v, without %v", tc.q, seed, with.Row, without.Row)
					}
				}
			}
			e.Wait()
		})
	}
}
