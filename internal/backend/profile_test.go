package backend

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// fetchCounter counts the backend's "backend fetch" debug records: one per
// query sent.
type fetchCounter struct{ n atomic.Int64 }

func (c *fetchCounter) Enabled(context.Context, slog.Level) bool { return true }
func (c *fetchCounter) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "backend fetch" {
		c.n.Add(1)
	}
	return nil
}
func (c *fetchCounter) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *fetchCounter) WithGroup(string) slog.Handler      { return c }

// TestProfileEqualsFetches: on SQLite, PostgreSQL and MariaDB, over a
// column holding hostile values (NULL, values outside the bounds, huge
// magnitudes, fractions, subnormals; NaN and ±Inf on PostgreSQL; text in
// both numeric columns on SQLite), every summary term, the grid median's
// histogram, grouped windows of values and of grid indices and the grid
// sums that a profile serves equal what their own fetches return (counts,
// bins, windows and grid sums exactly; float sums to the database's
// rounding), and after the profile none of them sends a query.
func TestProfileEqualsFetches(t *testing.T) {
	for _, b := range []struct {
		name    string
		dialect sqlrewrite.Dialect
		open    func(testing.TB) *sql.DB
		double  string
		hostile []string
	}{
		{"sqlite", sqlrewrite.SQLite, testdb.SQLite, "REAL", []string{"('abc', 3)", "(7, 'x')", "(X'00', 1)", "(1e999, 2)", "(-1e999, 2)"}},
		{"postgres", sqlrewrite.PostgreSQL, testdb.Postgres, "DOUBLE PRECISION", []string{"('NaN', 3)", "('Infinity', 2)", "('-Infinity', 1)", "(7, 'NaN')"}},
		{"mysql", sqlrewrite.MySQL, testdb.MySQL, "DOUBLE", nil},
	} {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			rows := []string{"(NULL, 1)", "(NULL, NULL)", "(5, NULL)", "(-7, 4)", "(250, 5)", "(1e300, 1e300)", "(-1e300, -1e300)",
				"(1e-300, 2)", "(-1e-300, 2)", "(5e-324, 1)", "(3.5, 0.1)", "(99.75, 0.2)", "(100, 7)", "(100.5, 8)", "(0, 9)", "(150, 2000)"}
			for i := range 500 {
				rows = append(rows, fmt.Sprintf("(%d, %d.25)", (i*37)%103-1, i%13))
			}
			rows = append(rows, b.hostile...)
			for _, s := range []string{"CREATE TABLE dp_profile (a " + b.double + ", b " + b.double + ")",
				"INSERT INTO dp_profile (a, b) VALUES " + strings.Join(rows, ", ")} {
				if _, err := db.Exec(s); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
			}
			filter := []sqlrewrite.Condition{{Column: "b", Range: &sqlrewrite.Range{Upper: 1000, HasUpper: true}}}
			scope := sqlrewrite.Fetch{Table: "dp_profile", Filter: filter}
			a := func(k sqlrewrite.TermKind) sqlrewrite.SummaryTerm {
				return sqlrewrite.SummaryTerm{Kind: k, Column: "a", Lower: 0, Upper: 100}
			}
			bt := func(k sqlrewrite.TermKind) sqlrewrite.SummaryTerm {
				return sqlrewrite.SummaryTerm{Kind: k, Column: "b", Lower: -10, Upper: 10}
			}
			terms := []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}, {Kind: sqlrewrite.CountNumbers, Column: "a"}, a(sqlrewrite.ClampedSum),
				a(sqlrewrite.ClampedSumSquares), {Kind: sqlrewrite.CountNonNull, Column: "a"}, bt(sqlrewrite.ClampedSum), {Kind: sqlrewrite.CountNumbers, Column: "b"},
				bt(sqlrewrite.ClampedSumSquares)}
			profile := &sqlrewrite.Profile{Column: "a", Lower: 0, Upper: 100, Terms: terms[4:]}
			hist := &sqlrewrite.Histogram{Column: "a", Lower: 0, Upper: 101, Bins: 101}
			if !sqlrewrite.ProfileHistogram(profile, hist) {
				t.Fatal("the unit histogram of [0, 100] is not computed from the profile")
			}
			windows := []sqlrewrite.Window{{Offset: 0, Limit: 7}, {Offset: 200, Limit: 50}, {Offset: 480, Limit: 100}, {Offset: 3, Limit: 40, GridUnit: 1.0 / 64}}
			grid := &sqlrewrite.GridSums{Column: "a", Lower: 0, Upper: 100, Unit: 1.0 / 64}

			type answers struct {
				summary []float64
				hist    []int64
				windows [][]float64
				grid    sqlrewrite.GridTotals
			}
			read := func(withProfile bool) (answers, int64) {
				counter := &fetchCounter{}
				snap, err := New(db, b.dialect, slog.New(counter)).Snapshot(context.Background(), "")
				if err != nil {
					t.Fatal(err)
				}
				defer snap.Close()
				ctx := context.Background()
				if withProfile {
					f := scope
					f.Profile = profile
					if err := snap.Profile(ctx, f); err != nil {
						t.Fatal(err)
					}
				}
				before := counter.n.Load()
				var out answers
				f := scope
				f.Summary = terms
				if out.summary, err = snap.Summary(ctx, f); err != nil {
					t.Fatal(err)
				}
				f = scope
				f.Histogram = hist
				if out.hist, err = snap.Histogram(ctx, f); err != nil {
					t.Fatal(err)
				}
				for _, w := range windows {
					w.Column, w.Lower, w.Upper, w.Grouped = "a", 0, 100, withProfile
					f = scope
					f.Window = &w
					v, err := snap.Window(ctx, f)
					if err != nil {
						t.Fatal(err)
					}
					out.windows = append(out.windows, v)
				}
				f = scope
				f.GridSums = grid
				if withProfile {
					out.grid, err = snap.GridSumsGrouped(ctx, f)
				} else {
					out.grid, err = snap.GridSums(ctx, f)
				}
				if err != nil {
					t.Fatal(err)
				}
				return out, counter.n.Load() - before
			}
			direct, _ := read(false)
			profiled, sent := read(true)
			if sent != 0 {
				t.Errorf("%d queries sent after the profile, want 0", sent)
			}
			for i, term := range terms {
				d, p := direct.summary[i], profiled.summary[i]
				if d != p && math.Abs(d-p) > 1e-12*math.Max(math.Abs(d), 1) {
					t.Errorf("term %+v: profile %v, summary %v", term, p, d)
				}
			}
			if direct.summary[0] < 500 || direct.summary[1] >= direct.summary[0] {
				t.Errorf("counts %v: the filter or the NULLs were not applied", direct.summary[:2])
			}
			if !slices.Equal(profiled.hist, direct.hist) {
				t.Errorf("histogram: profile %v, fetch %v", profiled.hist, direct.hist)
			}
			for i := range windows {
				if !slices.Equal(profiled.windows[i], direct.windows[i]) {
					t.Errorf("window %+v: profile %v, fetch %v", windows[i], profiled.windows[i], direct.windows[i])
				}
			}
			if profiled.grid.Count != direct.grid.Count || profiled.grid.Sum.Cmp(direct.grid.Sum) != 0 || profiled.grid.SumSquares.Cmp(direct.grid.SumSquares) != 0 {
				t.Errorf("grid sums: profile %v, fetch %v", profiled.grid, direct.grid)
			}

			// Grouped by the bins of b's histogram (a real-valued column):
			// the summary terms (b's sums carried) and that histogram.
			binned := &sqlrewrite.Histogram{Column: "b", Lower: -10, Upper: 10, Bins: 16}
			bins := &sqlrewrite.Profile{Column: "b", Lower: -10, Upper: 10, Bins: 16, Terms: []sqlrewrite.SummaryTerm{terms[2], terms[3], terms[4], terms[5], terms[7]}}
			counter := &fetchCounter{}
			snap, err := New(db, b.dialect, slog.New(counter)).Snapshot(context.Background(), "")
			if err != nil {
				t.Fatal(err)
			}
			defer snap.Close()
			f := scope
			f.Profile = bins
			if err := snap.Profile(context.Background(), f); err != nil {
				t.Fatal(err)
			}
			before := counter.n.Load()
			f = scope
			f.Summary = []sqlrewrite.SummaryTerm{terms[6], terms[0], terms[5], terms[7], terms[2], terms[1]} // b's readable count, COUNT(*), b's sums, a's sum and readable count
			sums, err := snap.Summary(context.Background(), f)
			if err != nil {
				t.Fatal(err)
			}
			if sums[0] > sums[1] || sums[1] < 500 {
				t.Errorf("binned profile: %v readable b of %v rows", sums[0], sums[1])
			}
			f = scope
			f.Histogram = binned
			binHist, err := snap.Histogram(context.Background(), f)
			if err != nil {
				t.Fatal(err)
			}
			if n := counter.n.Load() - before; n != 1 { // a's readable count is neither derived nor carried
				t.Errorf("%d queries after the binned profile, want 1 (a's count)", n)
			}
			plain, err := New(db, b.dialect, nil).Snapshot(context.Background(), "")
			if err != nil {
				t.Fatal(err)
			}
			defer plain.Close()
			fs := scope
			fs.Summary = []sqlrewrite.SummaryTerm{terms[6], terms[0], terms[5], terms[7], terms[2], terms[1]}
			wantSums, err := plain.Summary(context.Background(), fs)
			if err != nil {
				t.Fatal(err)
			}
			wantHist, err := plain.Histogram(context.Background(), f)
			if err != nil {
				t.Fatal(err)
			}
			for i := range sums {
				if d, p := wantSums[i], sums[i]; d != p && math.Abs(d-p) > 1e-12*math.Max(math.Abs(d), 1) {
					t.Errorf("binned profile, term %d: %v, summary %v", i, p, d)
				}
			}
			if !slices.Equal(binHist, wantHist) {
				t.Errorf("binned histogram: profile %v, fetch %v", binHist, wantHist)
			}
		})
	}
}
