package sqlrewrite_test

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	_ "github.com/dpproxy/dpproxy/internal/backend" // registers the SQLite unit key function
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// unitRow is one row of the unit test table: unit u (0: NULL), a value x
// unique to the row, and a filter column f.
type unitRow struct {
	u    int64
	x, f float64
}

// unitRows: unit i (1..40) has 1 + i%13 rows; unit 7 has 25; x = 100·u + j
// is unique to each row; six rows have a NULL unit.
func unitRows() []unitRow {
	var rows []unitRow
	for u := int64(1); u <= 40; u++ {
		m := 1 + u%13
		if u == 7 {
			m = 25
		}
		for j := range m {
			rows = append(rows, unitRow{u: u, x: float64(100*u + j), f: float64(j % 3)})
		}
	}
	for j := range 6 {
		rows = append(rows, unitRow{x: float64(-1 - j)})
	}
	return rows
}

func loadUnitRows(t *testing.T, db *sql.DB, d sqlrewrite.Dialect, double, table string, rows []unitRow) {
	t.Helper()
	if _, err := db.Exec(fmt.Sprintf("CREATE TABLE %s (u INTEGER, x %s, f %s)", table, double, double)); err != nil {
		t.Fatal(err)
	}
	insert := "INSERT INTO " + table + " (u, x, f) VALUES (?, ?, ?)"
	if d == sqlrewrite.PostgreSQL {
		insert = "INSERT INTO " + table + " (u, x, f) VALUES ($1, $2, $3)"
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		var u any
		if r.u != 0 {
			u = r.u
		}
		if _, err := tx.Exec(insert, u, r.x, r.f); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

func unitBound(k int64, salt int) *sqlrewrite.UnitBound {
	return &sqlrewrite.UnitBound{Column: "u", MaxRows: k, Order: []string{"x", "f"}, Salt: fmt.Sprintf("%032x", salt*7919+1)}
}

// keptValues runs a window over all of x under the bound and returns the
// kept values, sorted.
func keptValues(t *testing.T, db *sql.DB, d sqlrewrite.Dialect, table string, filter []sqlrewrite.Condition, u *sqlrewrite.UnitBound) []float64 {
	t.Helper()
	f := sqlrewrite.Fetch{Table: table, Filter: filter, Unit: u,
		Window: &sqlrewrite.Window{Column: "x", Lower: -1e6, Upper: 1e6, Offset: 0, Limit: 1 << 20}}
	q, args, err := sqlrewrite.Render(f, d)
	if err != nil {
		t.Fatal(err)
	}
	got, err := runFetch(db, f, q, args)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return got
}

// TestUnitBoundingOnDatabases checks on SQLite, PostgreSQL and MariaDB that
// the rendered bounding (1) keeps exactly min(m, k) of each unit's
// filtered rows and none with a NULL unit; (2) answers every fetch of one
// salt from the same rows (the summary's count and sum match the window's
// values); (3) is a per-unit choice: removing one unit's rows removes at
// most k kept rows, all of that unit, and keeps every other unit's choice
// (the neighbouring relation the mechanisms rely on); (4) changes with the
// salt; (5) bounds a derived column (a row expression) as the stored ones.
func TestUnitBoundingOnDatabases(t *testing.T) {
	for _, b := range doubleBackends {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			rows := unitRows()
			loadUnitRows(t, db, b.dialect, b.double, "dp_units", rows)
			var without []unitRow
			for _, r := range rows {
				if r.u != 7 {
					without = append(without, r)
				}
			}
			loadUnitRows(t, db, b.dialect, b.double, "dp_units_neighbour", without)
			filter := []sqlrewrite.Condition{{Column: "f", Range: &sqlrewrite.Range{HasUpper: true, Upper: 1}}}
			for _, k := range []int64{1, 3, 30} {
				for salt := range 3 {
					u := unitBound(k, salt)
					kept := keptValues(t, db, b.dialect, "dp_units", filter, u)
					perUnit := map[int64]int64{}
					for _, x := range kept {
						if x < 0 {
							t.Fatalf("k=%d: kept a row with a NULL unit (%v)", k, x)
						}
						perUnit[int64(x)/100]++
					}
					filtered := map[int64]int64{}
					for _, r := range rows {
						if r.u != 0 && r.f <= 1 {
							filtered[r.u]++
						}
					}
					for unit, m := range filtered {
						if perUnit[unit] != min(m, k) {
							t.Errorf("k=%d salt %d: unit %d kept %d of %d rows", k, salt, unit, perUnit[unit], m)
						}
					}
					// (2) One salt, one bounded table: the summary agrees with the window.
					sf := sqlrewrite.Fetch{Table: "dp_units", Filter: filter, Unit: u, Summary: []sqlrewrite.SummaryTerm{
						{Kind: sqlrewrite.CountAll}, {Kind: sqlrewrite.ClampedSum, Column: "x", Lower: -1e6, Upper: 1e6}}}
					q, args, err := sqlrewrite.Render(sf, b.dialect)
					if err != nil {
						t.Fatal(err)
					}
					got, err := runFetch(db, sf, q, args)
					if err != nil {
						t.Fatalf("%s: %v", q, err)
					}
					var sum float64
					for _, x := range kept {
						sum += x
					}
					if got[0] != float64(len(kept)) || got[1] != sum {
						t.Errorf("k=%d: summary %v, window count %d sum %v", k, got, len(kept), sum)
					}
					// (5) A derived column (a row expression) is bounded as a
					// stored one: the same rows, with its values computed from
					// them, the bound ordered by it too (as exec orders by
					// every column of the table, derived ones included).
					du := *u
					du.Order = append(slices.Clone(u.Order), "y")
					df := sqlrewrite.Fetch{Table: "dp_units", Filter: filter, Unit: &du,
						Derived: []sqlrewrite.DerivedColumn{{Name: "y", Expr: &sqlrewrite.RowExpr{Kind: sqlrewrite.RowOp, Op: '+', Args: []*sqlrewrite.RowExpr{
							{Kind: sqlrewrite.RowColumn, Column: "x", Lower: -1e6, Upper: 1e6}, {Kind: sqlrewrite.RowConst, Num: 0.5}}}}},
						Window: &sqlrewrite.Window{Column: "y", Lower: -2e6, Upper: 2e6, Offset: 0, Limit: 1 << 20}}
					q, args, err = sqlrewrite.Render(df, b.dialect)
					if err != nil {
						t.Fatal(err)
					}
					derived, err := runFetch(db, df, q, args)
					if err != nil {
						t.Fatalf("%s: %v", q, err)
					}
					want := make([]float64, len(kept))
					for i, x := range kept {
						want[i] = x + 0.5
					}
					if !slices.Equal(derived, want) {
						t.Errorf("k=%d salt %d: the derived column's bounded values %v, want the kept rows' %v", k, salt, derived, want)
					}
					// (3) The neighbour without unit 7 keeps the same rows of every other unit.
					neighbour := keptValues(t, db, b.dialect, "dp_units_neighbour", filter, u)
					var rest []float64
					for _, x := range kept {
						if int64(x)/100 != 7 {
							rest = append(rest, x)
						}
					}
					if !slices.Equal(rest, neighbour) || len(kept)-len(neighbour) > int(k) {
						t.Errorf("k=%d salt %d: removing unit 7 changed other units' rows or more than k rows (%d → %d)", k, salt, len(kept), len(neighbour))
					}
				}
			}
			// (4) Another salt chooses other rows of unit 7.
			a := keptValues(t, db, b.dialect, "dp_units", nil, unitBound(3, 1))
			c := keptValues(t, db, b.dialect, "dp_units", nil, unitBound(3, 2))
			if slices.Equal(a, c) {
				t.Errorf("two salts kept the same rows")
			}
		})
	}
}

// TestUnitBoundingIsUniform: over 600 salts with k = 1, each of unit 7's 25
// rows (values 700..724, all passing no filter) is the kept one with
// probability 1/25 whatever its value: a chi-square test at false-rejection
// rate 1e-6 on SQLite. With a bound ordered by the value (the leak the
// keyed shuffle prevents) the same test fails, which the second half checks.
func TestUnitBoundingIsUniform(t *testing.T) {
	db := testdb.SQLite(t)
	loadUnitRows(t, db, sqlrewrite.SQLite, "REAL", "dp_units", unitRows())
	filter := []sqlrewrite.Condition{{Column: "u", In: []sqlrewrite.Value{{Num: 7}}}}
	counts := make([]int, 25)
	const salts = 600
	for s := range salts {
		kept := keptValues(t, db, sqlrewrite.SQLite, "dp_units", filter, unitBound(1, s+10))
		if len(kept) != 1 {
			t.Fatalf("kept %v", kept)
		}
		counts[int(kept[0])-700]++
	}
	probs := make([]float64, 25)
	for i := range probs {
		probs[i] = 1.0 / 25
	}
	stat, critical, err := privtest.ChiSquare(counts, probs, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	if stat > critical {
		t.Errorf("kept rows not uniform: χ² = %v > %v; counts %v", stat, critical, counts)
	}
	t.Logf("χ² = %.1f (critical %.1f at 1e-6); counts %v", stat, critical, counts)
	// A value-ordered choice keeps the smallest value every time: rejected.
	biased := make([]int, 25)
	biased[0] = salts
	if stat, critical, _ := privtest.ChiSquare(biased, probs, 1e-6); stat <= critical {
		t.Errorf("the test cannot see a value-ordered choice")
	}
}

// TestUnitSortKeyGuardInOracleMode: the guard on a person id's sort key
// (MySQLSortLength bytes) measures bytes whatever the session's sql_mode.
// MariaDB's ORACLE mode makes LENGTH count characters: ids of 7,000
// three-byte characters and a letter (21,001 bytes) passed the guard, and
// the window functions, which compare the first MySQLSortLength bytes of
// the sort key, split each of the two persons holding them into many
// (COUNT(*) under a bound of one row a person answered 208 where the two
// long ids' rows are to be read by no fetch). The backend pins the sql_mode as well (backend.MySQLSQLMode);
// this runs the fetch on a connection in ORACLE mode directly.
func TestUnitSortKeyGuardInOracleMode(t *testing.T) {
	dsn := testdb.MySQLDSN(t)
	direct := testdb.Open(t, "mysql", dsn)
	var version string
	if err := direct.QueryRow("SELECT VERSION()").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.ToLower(version), "mariadb") {
		t.Skipf("sql_mode ORACLE is MariaDB's; the server is %s", version)
	}
	testdb.LongCJKUnitIDs(t, direct)
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Params = map[string]string{"sql_mode": "'ORACLE'"}
	oracle := testdb.Open(t, "mysql", cfg.FormatDSN())
	f := sqlrewrite.Fetch{Table: "lv3", Unit: &sqlrewrite.UnitBound{Column: "pid", MaxRows: 1, Order: []string{"amt"}, Salt: fmt.Sprintf("%032x", 1)},
		Summary: []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}}}
	q, args, err := sqlrewrite.Render(f, sqlrewrite.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	// As the backend runs it (backend.maxSortLength).
	q = fmt.Sprintf("SET STATEMENT max_sort_length = %d FOR %s", sqlrewrite.MySQLSortLength, q)
	got, err := runFetch(oracle, f, q, args)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if len(got) != 1 || got[0] != 200 {
		t.Errorf("COUNT(*) under a bound of 1 row per person = %v, want [200] (the two ids of 21,001 bytes are read by no fetch)", got)
	}
}

// doubleBackends are the three databases the rendered SQL is run on, each
// with its dialect, a fresh database of it and its name for a double
// column.
var doubleBackends = []struct {
	name    string
	dialect sqlrewrite.Dialect
	open    func(testing.TB) *sql.DB
	double  string
}{
	{"sqlite", sqlrewrite.SQLite, testdb.SQLite, "REAL"},
	{"postgres", sqlrewrite.PostgreSQL, testdb.Postgres, "DOUBLE PRECISION"},
	{"mysql", sqlrewrite.MySQL, testdb.MySQL, "DOUBLE"},
}
