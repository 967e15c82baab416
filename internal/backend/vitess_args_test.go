package backend

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestVitessGroupedSumsWithArguments: behind Vitess (DPPROXY_TEST_VITESS_DSN,
// a vtgate over a sharded keyspace; scripts/vitess.sh) the grouped fetches
// whose text carries strings (a text filter, a LIKE pattern, a text
// dimension's CASE) return each cell's exact n, Σk and Σk² and its sums,
// as computed in Go. Sent as server-side prepared statements, vtgate
// answered them in the binary protocol and, where it evaluates the
// COALESCE above its Aggregate, labelled the 8-byte group key a 4-byte
// INT, so every later column was read from the wrong bytes: counts of
// c·2^32, sums from the low bits of the truth, or a failure that
// depended on them (an independent review). The strings hold quotes,
// backslashes, NUL, LIKE wildcards and non-Latin text, which must reach
// the shards unchanged.
func TestVitessGroupedSumsWithArguments(t *testing.T) {
	dsn := os.Getenv("DPPROXY_TEST_VITESS_DSN")
	if dsn == "" {
		t.Skip("DPPROXY_TEST_VITESS_DSN is not set; skipping the Vitess test")
	}
	ctx := context.Background()
	db := testdb.Open(t, "mysql", dsn)
	var suffix [4]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		t.Fatal(err)
	}
	table := "va_" + hex.EncodeToString(suffix[:])
	sites := []string{"beta", "alpha", "O'Brien", `a\b`, "nul\x00byte", "%_", "日本", `q"uote\'`}
	type row struct {
		site        string
		sex, age    int
		income      float64
		grid, gridI int64 // age's and income's grid indices
	}
	const incomeUnit = 1.0 / 64
	var rows []row
	var values []string
	for i := range 3000 {
		r := row{site: sites[i%len(sites)], sex: i % 3 % 2, age: (i * 37) % 101, income: float64((i*7919)%200000) + float64(i%64)/64}
		r.grid = int64(r.age)
		r.gridI = int64(math.Floor(r.income/incomeUnit + 0.5))
		rows = append(rows, r)
		values = append(values, fmt.Sprintf("(%d, '%s', %d, %d, %v)", i+1, mysqlQuote(r.site), r.sex, r.age, r.income))
	}
	for _, q := range []string{
		"ALTER VSCHEMA ON " + table + " ADD VINDEX hash(id) USING hash",
		"CREATE TABLE " + table + " (id BIGINT NOT NULL PRIMARY KEY, site VARCHAR(32) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, sex INT, age INT, income DOUBLE)",
		"INSERT INTO " + table + " (id, site, sex, age, income) VALUES " + strings.Join(values, ", "),
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%.80s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		for _, q := range []string{"DROP TABLE IF EXISTS " + table, "ALTER VSCHEMA DROP TABLE " + table} {
			if _, err := db.Exec(q); err != nil {
				t.Errorf("cleanup: %s: %v", q, err)
			}
		}
	})

	b := New(db, sqlrewrite.MySQL, nil)
	b.SetDefaultIsolation() // backend.isolation none, as the README's Vitess section says
	snap, err := b.Snapshot(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	if !b.vitess {
		t.Fatalf("%s is not a vtgate", dsn)
	}
	like := "%'B%"
	siteValues := make([]sqlrewrite.Value, len(sites))
	for i, s := range sites {
		siteValues[i] = sqlrewrite.Value{Str: s, IsText: true}
	}
	sexDim := []sqlrewrite.CellDim{{Column: "sex", Values: []sqlrewrite.Value{{Num: 0}, {Num: 1}}}}
	siteDim := []sqlrewrite.CellDim{{Column: "site", Values: siteValues, ByValue: true, Exact: true}}
	for _, c := range []struct {
		name   string
		filter []sqlrewrite.Condition
		dims   []sqlrewrite.CellDim
		in     func(row) bool
	}{
		{"site = 'beta' by sex", []sqlrewrite.Condition{{Column: "site", In: siteValues[:1], Text: true}}, sexDim,
			func(r row) bool { return r.site == "beta" }},
		{"site LIKE by sex", []sqlrewrite.Condition{{Column: "site", Like: &like, Text: true}}, sexDim,
			func(r row) bool { return r.site == "O'Brien" }},
		{"by site", nil, siteDim, func(row) bool { return true }},
		{"site IN (quotes, backslash, NUL) by site", []sqlrewrite.Condition{{Column: "site", In: siteValues[2:6], Text: true}}, siteDim,
			func(r row) bool {
				return r.site == sites[2] || r.site == sites[3] || r.site == sites[4] || r.site == sites[5]
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cells := len(c.dims[0].Values)
			cellOf := func(r row) int {
				if c.dims[0].Column == "site" {
					for i, s := range sites {
						if s == r.site {
							return i
						}
					}
				}
				return r.sex
			}
			n := make([]int64, cells)
			ages, incomes := make([]float64, cells), make([]float64, cells)
			sumK, sumK2 := make([]*big.Int, cells), make([]*big.Int, cells)
			sumKI := make([]*big.Int, cells)
			for i := range cells {
				sumK[i], sumK2[i], sumKI[i] = new(big.Int), new(big.Int), new(big.Int)
			}
			for _, r := range rows {
				if !c.in(r) {
					continue
				}
				i := cellOf(r)
				n[i]++
				ages[i] += float64(r.age)
				incomes[i] += r.income
				sumK[i].Add(sumK[i], big.NewInt(r.grid))
				sumK2[i].Add(sumK2[i], big.NewInt(r.grid*r.grid))
				sumKI[i].Add(sumKI[i], big.NewInt(r.gridI))
			}
			var total int64
			for _, v := range n {
				total += v
			}
			if total == 0 {
				t.Fatal("no row passes the filter; the test proves nothing")
			}
			summary, err := snap.GroupedSummary(ctx, sqlrewrite.Fetch{Table: table, Filter: c.filter, Grouped: &sqlrewrite.GroupedSummary{Dims: c.dims,
				Terms: []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}, {Kind: sqlrewrite.ClampedSum, Column: "age", Lower: 0, Upper: 100},
					{Kind: sqlrewrite.ClampedSum, Column: "income", Lower: 0, Upper: 500000}}}})
			if err != nil {
				t.Fatalf("grouped summary: %v", err)
			}
			for i := range cells {
				if got := summary[i]; got[0] != float64(n[i]) || got[1] != ages[i] || math.Abs(got[2]-incomes[i]) > 1e-9*incomes[i] {
					t.Errorf("grouped summary cell %d: got %v, want [%d %v %v]", i, got, n[i], ages[i], incomes[i])
				}
			}
			for _, g := range []sqlrewrite.GridSums{
				{Column: "age", Lower: 0, Upper: 100, Unit: 1, SumOnly: true},
				{Column: "age", Lower: 0, Upper: 100, Unit: 1},
				{Column: "income", Lower: 0, Upper: 500000, Unit: incomeUnit, SumOnly: true},
			} {
				got, err := snap.GroupedGridSums(ctx, sqlrewrite.Fetch{Table: table, Filter: c.filter,
					GroupedGrid: &sqlrewrite.GroupedGridSums{Dims: c.dims, Grid: g}})
				if err != nil {
					t.Fatalf("grouped grid sums of %s (sum only %v): %v", g.Column, g.SumOnly, err)
				}
				for i := range cells {
					want := sqlrewrite.GridTotals{Count: n[i], Sum: sumK[i]}
					if g.Column == "income" {
						want.Sum = sumKI[i]
					}
					if !g.SumOnly {
						want.SumSquares = sumK2[i]
					}
					if got[i].Count != want.Count || got[i].Sum.Cmp(want.Sum) != 0 || (got[i].SumSquares == nil) != (want.SumSquares == nil) ||
						want.SumSquares != nil && got[i].SumSquares.Cmp(want.SumSquares) != 0 {
						t.Errorf("grid sums of %s (sum only %v), cell %d: got n=%d Σk=%v Σk²=%v, want %d, %v, %v", g.Column, g.SumOnly, i,
							got[i].Count, got[i].Sum, got[i].SumSquares, want.Count, want.Sum, want.SumSquares)
					}
				}
			}
		})
	}
}

// mysqlQuote escapes s for a single-quoted MySQL string literal.
func mysqlQuote(s string) string {
	return strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\x00", `\0`).Replace(s)
}

// TestSnapshotNeedsTheFlavor: on the MySQL dialect no snapshot starts
// while the server's version cannot be read, so no fetch is rendered with
// bind arguments for a server that may be vtgate (render).
func TestSnapshotNeedsTheFlavor(t *testing.T) {
	db := sql.OpenDB(noVersionConnector{})
	defer db.Close()
	b := New(db, sqlrewrite.MySQL, nil)
	b.SetDefaultIsolation()
	snap, err := b.Snapshot(context.Background(), "")
	if err == nil {
		snap.Close()
		t.Fatal("a snapshot started without the server's version")
	}
}

// noVersionConnector opens connections that begin transactions but
// answer no query.
type noVersionConnector struct{}

func (noVersionConnector) Connect(context.Context) (driver.Conn, error) { return noVersionConn{}, nil }
func (noVersionConnector) Driver() driver.Driver                        { return nil }

type noVersionConn struct{}

func (noVersionConn) Prepare(string) (driver.Stmt, error) {
	return nil, errors.New("no queries")
}
func (noVersionConn) Close() error              { return nil }
func (noVersionConn) Begin() (driver.Tx, error) { return noVersionConn{}, nil }
func (noVersionConn) Commit() error             { return nil }
func (noVersionConn) Rollback() error           { return nil }
