package exec

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestSelectedKeysReadBackExactly: a selected key's counts and sums (the
// grouped fetch, keyed by the value read in Go) and its filtered fetches
// (windows of MAX and high percentiles: column = key in SQL) must read the
// same rows. Each case holds a frequent key and, with the hostile row, one
// row whose value the database keeps apart from it but a lossy reading
// would merge with it: 2⁵³+1 beside 2⁵³ (BIGINT), 1e-400 beside 0
// (NUMERIC), a fraction beside an integer (DECIMAL), a blob 'abc' beside
// text 'abc' and an integer among text (SQLite). Merged, the key's count
// exceeded its window and the statement failed (charged) because of one
// row the selection never released; read exactly, the hostile value is in
// no group and every statement answers. Integers beyond 2⁵³ are no keys
// at all (none reads back exactly), so there nothing is released.
func TestSelectedKeysReadBackExactly(t *testing.T) {
	sqlite := func(t *testing.T) (*sql.DB, sqlrewrite.Dialect) { return testdb.SQLite(t), sqlrewrite.SQLite }
	postgres := func(t *testing.T) (*sql.DB, sqlrewrite.Dialect) { return testdb.Postgres(t), sqlrewrite.PostgreSQL }
	mariadb := func(t *testing.T) (*sql.DB, sqlrewrite.Dialect) { return testdb.MySQL(t), sqlrewrite.MySQL }
	cases := []struct {
		name            string
		open            func(t *testing.T) (*sql.DB, sqlrewrite.Dialect)
		keyType         string
		text            bool
		frequent, alien string
		groups          int
	}{
		{"sqlite integer beyond 2^53", sqlite, "INTEGER", false, "9007199254740992", "9007199254740993", 0},
		{"postgres bigint beyond 2^53", postgres, "BIGINT", false, "9007199254740992", "9007199254740993", 0},
		{"postgres numeric underflow", postgres, "NUMERIC", false, "0", "1e-400", 1},
		{"mariadb bigint beyond 2^53", mariadb, "BIGINT", false, "9007199254740992", "9007199254740993", 0},
		{"mariadb decimal fraction", mariadb, "DECIMAL(30,10)", false, "1000000", "1000000.0000000001", 1},
		{"sqlite blob among text", sqlite, "TEXT", true, "'abc'", "X'616263'", 1},
		{"sqlite integer among text", sqlite, "", true, "'abc'", "5", 1},
	}
	queries := []string{
		"SELECT k, MAX(x) FROM t GROUP BY k",
		"SELECT k, PERCENTILE_CONT(x, 0.99), COUNT(*) FROM t GROUP BY k",
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db, dialect := c.open(t)
			xType := "DOUBLE PRECISION"
			if dialect == sqlrewrite.MySQL {
				xType = "DOUBLE"
			}
			var rows []string
			for i := range 400 {
				rows = append(rows, fmt.Sprintf("(%s, %d)", c.frequent, i%100))
			}
			rows = append(rows, fmt.Sprintf("(%s, 99)", c.alien))
			for _, s := range []string{"CREATE TABLE t (k " + c.keyType + ", x " + xType + ")", "INSERT INTO t (k, x) VALUES " + strings.Join(rows, ", ")} {
				if _, err := db.Exec(s); err != nil {
					t.Fatal(err)
				}
			}
			lo, hi := 0.0, 100.0
			keyType := catalog.Integer
			if c.text {
				keyType = catalog.Text
			}
			cat := &catalog.Config{Tables: []catalog.Table{{Name: "t", Source: "t", Columns: []catalog.Column{
				{Name: "k", Source: "k", Type: keyType, PartitionSelection: true},
				{Name: "x", Source: "x", Type: catalog.Real, Lower: &lo, Upper: &hi},
			}}}}
			e := newGroupedExecutor(t, backend.New(db, dialect, nil))
			for _, q := range queries {
				qp := planGrouped(t, cat, q, 2)
				for seed := range 5 {
					res, err := e.RunQuery(context.Background(), "a", qp, rand.NewChaCha8([32]byte{byte(seed), 7}))
					if err != nil {
						t.Fatalf("%s (seed %d): %v", q, seed, err)
					}
					if len(res.Rows) != c.groups {
						t.Fatalf("%s (seed %d): %d groups released, want %d: %v", q, seed, len(res.Rows), c.groups, res.Rows)
					}
				}
			}
		})
	}
}

// TestSelectedKeysOfEveryNumericType: partition selection over an
// integer-declared key whose backend column is BIGINT UNSIGNED or FLOAT
// (MariaDB) or real (PostgreSQL), on a row-level table and on a unit
// table (the key bounded per unit, UnitBound.Key), releases exactly the
// frequent integer keys, each labelled with its own value and answered
// over its own rows. go-sql-driver reads BIGINT UNSIGNED as uint64 and
// FLOAT as float32, which the key reading refused, so nothing was ever
// released; and MariaDB prints a FLOAT to 6 significant digits, lib/pq
// reads a real from its shortest float4 text as a float64, so 1234567
// and 1234568 both read as 1234570 (123456792 as 123456790), a key that
// column = key selects no row of. Values that are no key (a fraction,
// an integer beyond 2⁵³) are in no group.
func TestSelectedKeysOfEveryNumericType(t *testing.T) {
	postgres := func(t *testing.T) (*sql.DB, sqlrewrite.Dialect) { return testdb.Postgres(t), sqlrewrite.PostgreSQL }
	mariadb := func(t *testing.T) (*sql.DB, sqlrewrite.Dialect) { return testdb.MySQL(t), sqlrewrite.MySQL }
	floats := []string{"1234567", "1234568", "123456792", "-16777216", "1234567.5"}
	for _, c := range []struct {
		name     string
		open     func(t *testing.T) (*sql.DB, sqlrewrite.Dialect)
		keyType  string
		values   []string // 300 rows each
		released []string
	}{
		{"mariadb bigint unsigned", mariadb, "BIGINT UNSIGNED", []string{"42", "9007199254740991", "18446744073709551615"}, []string{"42", "9007199254740991"}},
		{"mariadb float", mariadb, "FLOAT", floats, floats[:4]},
		{"postgres real", postgres, "REAL", floats, floats[:4]},
	} {
		t.Run(c.name, func(t *testing.T) {
			db, dialect := c.open(t)
			xType := "DOUBLE PRECISION"
			if dialect == sqlrewrite.MySQL {
				xType = "DOUBLE"
			}
			var rows []string
			for i, v := range c.values {
				for j := range 300 {
					rows = append(rows, fmt.Sprintf("(%d, %s, %d)", 1000*i+j, v, j%100))
				}
			}
			for _, s := range []string{"CREATE TABLE t (u INTEGER, k " + c.keyType + ", x " + xType + ")", "INSERT INTO t (u, k, x) VALUES " + strings.Join(rows, ", ")} {
				if _, err := db.Exec(s); err != nil {
					t.Fatal(err)
				}
			}
			lo, hi := 0.0, 100.0
			cols := []catalog.Column{
				{Name: "k", Source: "k", Type: catalog.Integer, PartitionSelection: true},
				{Name: "x", Source: "x", Type: catalog.Real, Lower: &lo, Upper: &hi},
			}
			cat := &catalog.Config{Tables: []catalog.Table{
				{Name: "t", Source: "t", Columns: cols},
				{Name: "tu", Source: "t", PrivacyUnit: "u", MaxRowsPerUnit: 1, MaxGroupsPerUnit: 1, Columns: cols},
			}}
			e := newGroupedExecutor(t, backend.New(db, dialect, nil))
			for _, table := range []string{"t", "tu"} {
				q := "SELECT k, COUNT(*), MAX(x) FROM " + table + " GROUP BY k ORDER BY k"
				res, err := e.RunQuery(context.Background(), "a", planGrouped(t, cat, q, 4), rand.NewChaCha8([32]byte{9}))
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				var got []string
				for _, r := range res.Rows {
					label := fmt.Sprint(r[0])
					if f, ok := r[0].(float64); ok {
						label = strconv.FormatFloat(f, 'f', -1, 64)
					}
					got = append(got, label)
					n, isInt := r[1].(int64)
					if f, ok := r[1].(float64); ok {
						n, isInt = int64(f), true
					}
					if !isInt || n < 240 || n > 360 {
						t.Errorf("%s: key %s: COUNT(*) = %v, want 300 ± 60 (its own rows)", q, label, r[1])
					}
				}
				want := slices.Clone(c.released)
				slices.SortFunc(want, func(a, b string) int {
					x, _ := strconv.ParseFloat(a, 64)
					y, _ := strconv.ParseFloat(b, 64)
					return cmp.Compare(x, y)
				})
				if !slices.Equal(got, want) {
					t.Errorf("%s: released keys %v, want %v (rows %v)", q, got, want, res.Rows)
				}
			}
		})
	}
}
