package main

import (
	"database/sql"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestSelectLimitEndToEnd: SET SQL_SELECT_LIMIT, which Connector/J sends
// for Statement.setMaxRows, cuts private answers as it cuts the catalog
// engine's, and the cut answer is charged what the whole one is. The
// review's repro: under 3, the 6 groups of race came back whole.
func TestSelectLimitEndToEnd(t *testing.T) {
	p := startProxy(t, "", nil)
	db := p.connect(t, "demo", "demo")
	db.SetMaxOpenConns(1) // one session: SET must persist between statements

	remaining := func() float64 { t.Helper(); return remainingEpsilon(t, db) }
	spent := func(q string) (rows int, eps float64) {
		t.Helper()
		before := remaining()
		_, _, got := columnsOf(t, db, q)
		return len(got), before - remaining()
	}
	const grouped = "SELECT race, COUNT(*) FROM pums GROUP BY race"
	all, whole := spent(grouped)
	if all != 6 {
		t.Fatalf("%s: %d rows without sql_select_limit, want 6", grouped, all)
	}
	if _, err := db.Exec("SET SQL_SELECT_LIMIT = 3"); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]int{
		grouped:                               3,
		grouped + " ORDER BY race LIMIT 5":    5, // its own LIMIT wins
		"SELECT COUNT(*), AVG(age) FROM pums": 1,
		"SELECT FLOOR(age / 10) * 10 AS b, COUNT(*) FROM pums GROUP BY b":             3, // a histogram
		"SELECT 1 UNION SELECT 2 UNION SELECT 3 UNION SELECT 4":                       3,
		"SELECT * FROM information_schema.COLLATIONS":                                 3,
		"SELECT COUNT(*) FROM (SELECT race, COUNT(*) AS n FROM pums GROUP BY race) g": 1,
	} {
		if got, _ := spent(q); got != want {
			t.Errorf("%s: %d rows under sql_select_limit 3, want %d", q, got, want)
		}
	}
	if got, eps := spent(grouped); got != 3 || math.Abs(eps-whole) > 1e-9 {
		t.Errorf("%s under sql_select_limit 3: %d rows for epsilon %g, want 3 rows for the %g of the whole answer", grouped, got, eps, whole)
	}
	columnsOf(t, db, grouped)
	var found int64
	if err := db.QueryRow("SELECT FOUND_ROWS() LIMIT 1").Scan(&found); err != nil || found != 3 {
		t.Errorf("FOUND_ROWS() after the cut answer: %d, %v; want the 3 rows sent", found, err)
	}
	// A derived table is a subquery: not cut.
	if _, _, rows := columnsOf(t, db, "SELECT COUNT(*) FROM (SELECT race, COUNT(*) AS n FROM pums GROUP BY race) g"); len(rows) != 1 || rows[0][0] != "6" {
		t.Errorf("COUNT(*) of the 6 groups under sql_select_limit 3: %v, want 6", rows)
	}
	var limit sql.NullString
	if _, err := db.Exec("SET SQL_SELECT_LIMIT = DEFAULT"); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("SELECT @@sql_select_limit").Scan(&limit); err != nil || limit.String != "18446744073709551615" {
		t.Errorf("@@sql_select_limit after SET DEFAULT: %v, %v", limit, err)
	}
	if got, _ := spent(grouped); got != 6 {
		t.Errorf("%s after SET DEFAULT: %d rows, want 6", grouped, got)
	}
}

// TestSelectLimitZeroSpendsNothing: under sql_select_limit 0 a private
// SELECT is answered as with LIMIT 0, as MySQL reads the variable: its
// columns, no row, nothing read or spent. It was charged for the row the
// cut then dropped (COUNT(*): epsilon 0.1; a histogram built its synopsis).
func TestSelectLimitZeroSpendsNothing(t *testing.T) {
	p := startProxy(t, "", nil)
	db := p.connect(t, "demo", "demo")
	db.SetMaxOpenConns(1) // one session: SET must persist between statements

	remaining := func() float64 { t.Helper(); return remainingEpsilon(t, db) }
	statements := []string{
		"SELECT COUNT(*) FROM pums",
		"SELECT COUNT(*), AVG(age), MEDIAN(income), SUM(income) FROM pums",
		"SELECT race, COUNT(*) FROM pums GROUP BY race",
		"SELECT race, MEDIAN(income) FROM pums GROUP BY race HAVING COUNT(*) > 10 ORDER BY race",
		"SELECT FLOOR(age / 10) * 10 AS b, COUNT(*) FROM pums GROUP BY b",
	}
	type columns struct{ names, types []string }
	announced := map[string]columns{}
	for _, q := range statements {
		names, types, _ := columnsOf(t, db, q+" LIMIT 0")
		announced[q] = columns{names, types}
	}
	if _, err := db.Exec("SET SQL_SELECT_LIMIT = 0"); err != nil {
		t.Fatal(err)
	}
	for _, q := range statements {
		before := remaining()
		names, types, rows := columnsOf(t, db, q)
		if spent := before - remaining(); spent != 0 || len(rows) != 0 {
			t.Errorf("%s under sql_select_limit 0: %d rows for epsilon %g, want none for nothing", q, len(rows), spent)
		}
		if got := (columns{names, types}); fmt.Sprint(got) != fmt.Sprint(announced[q]) {
			t.Errorf("%s under sql_select_limit 0: columns %v, want those of LIMIT 0, %v", q, got, announced[q])
		}
	}
	// A statement's own LIMIT wins: it is answered and charged.
	before := remaining()
	if _, _, rows := columnsOf(t, db, "SELECT COUNT(*) FROM pums LIMIT 1"); len(rows) != 1 || before-remaining() <= 0 {
		t.Errorf("SELECT COUNT(*) FROM pums LIMIT 1 under sql_select_limit 0: %d rows for epsilon %g, want 1 row, charged", len(rows), before-remaining())
	}
}

// TestLimitZeroFormsSpendNothing and TestLimitZeroFormsSpendNothingOnPostgres:
// statements that have no row whatever the data, by an explicit LIMIT 0 or
// under sql_select_limit 0, answer their columns and no row and spend
// nothing (limitZeroScenario).
func TestLimitZeroFormsSpendNothing(t *testing.T) {
	p := startProxy(t, "", nil)
	db := p.connect(t, "demo", "demo")
	db.SetMaxOpenConns(1) // one session: SET must persist between statements
	limitZeroScenario(t, db)
}

func TestLimitZeroFormsSpendNothingOnPostgres(t *testing.T) {
	dsn := testdb.PostgresDSN(t)
	p := startProxy(t, "", nil, "--config", groupedDeployment(t, "postgres", dsn, "postgres", dsn))
	db := p.connect(t, "gina", "gina-pw")
	db.SetMaxOpenConns(1)
	limitZeroScenario(t, db)
}

// limitZeroScenario checks the forms a review found charged without an
// answer, or refused: a derived table with a LIMIT of its own, whose
// LIMIT 0 form is refused, under sql_select_limit 0 (charged 0.1, cut to
// no row); an outer query over a grouped subquery with LIMIT 0 (charged,
// its EXPLAIN releasing); WITH ROLLUP and a window function with LIMIT 0
// (1235 from the catalog engine's zero-row probe, the second with
// go-mysql-server's garbled "#%!d(MISSING)").
func limitZeroScenario(t *testing.T, db *sql.DB) {
	t.Helper()
	remaining := func() float64 { t.Helper(); return remainingEpsilon(t, db) }
	const (
		topTwo = "SELECT * FROM (SELECT race, COUNT(*) n FROM pums GROUP BY race ORDER BY n DESC LIMIT 2) g"
		outer  = "SELECT COUNT(*) FROM (SELECT race, COUNT(*) AS n FROM pums GROUP BY race) g"
		rollup = "SELECT race, COUNT(*) FROM pums GROUP BY race WITH ROLLUP"
		ranked = "SELECT race, COUNT(*), RANK() OVER (ORDER BY COUNT(*)) FROM pums GROUP BY race"
	)
	check := func(q string, want []string) {
		t.Helper()
		before := remaining()
		r, err := db.Query(q)
		if err != nil {
			t.Errorf("%s: %v", q, err)
			return
		}
		names, _ := r.Columns()
		n := 0
		for r.Next() {
			n++
		}
		r.Close()
		if spent := before - remaining(); spent != 0 || n != 0 || fmt.Sprint(names) != fmt.Sprint(want) {
			t.Errorf("%s: %d rows, columns %v, for epsilon %g; want no row, columns %v, for nothing", q, n, names, spent, want)
		}
	}
	withLimit := map[string][]string{
		outer:  {"COUNT(*)"},
		rollup: {"race", "COUNT(*)"},
		ranked: {"race", "COUNT(*)", "RANK() OVER (ORDER BY COUNT(*))"},
	}
	for q, want := range withLimit {
		check(q+" LIMIT 0", want)
	}
	_, _, rows := columnsOf(t, db, "EXPLAIN "+outer+" LIMIT 0")
	if total := rows[len(rows)-1]; total[1] != "total" || total[4] != "0" {
		t.Errorf("EXPLAIN %s LIMIT 0: total %v, want epsilon 0", outer, total)
	}
	if _, err := db.Exec("SET SQL_SELECT_LIMIT = 0"); err != nil {
		t.Fatal(err)
	}
	check(topTwo, []string{"race", "n"})
	for q, want := range withLimit {
		check(q, want)
	}
	if _, err := db.Exec("SET SQL_SELECT_LIMIT = DEFAULT"); err != nil {
		t.Fatal(err)
	}
}

// TestSelectLimitZeroKeepsConstantColumns: under sql_select_limit 0 a
// constant SELECT the session answers (dpproxy's budget functions and
// settings, session functions, literals, expressions of them) announces
// the columns it announces without the cut, each definition (type,
// flags, length, decimals, collation) as its one row gives it, in both
// protocols; every column was type NULL (checked: this failed), where a
// private answer cut alike keeps its types.
func TestSelectLimitZeroKeepsConstantColumns(t *testing.T) {
	p := startProxy(t, "", nil)
	c := dialClient(t, p.addr, "demo", "demo", "dpproxy")
	statements := []string{
		"SELECT dp_remaining_epsilon()",
		"SELECT dp_remaining_epsilon(), dp_remaining_delta(), @dp_epsilon, @dp_mechanism, DATABASE(), USER(), CONNECTION_ID(), NULL, 'x', 7, 2.5",
		"SELECT ROUND(dp_remaining_epsilon(), 2), @@version, FOUND_ROWS()",
	}
	defs := func(q string, binary bool) (string, int) {
		t.Helper()
		var r *gomysql.Result
		var err error
		if binary {
			var st *client.Stmt
			if st, err = c.Prepare(q); err == nil {
				defer st.Close()
				r, err = st.Execute()
			}
		} else {
			r, err = c.Execute(q)
		}
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var out []string
		for _, f := range r.Fields {
			out = append(out, fmt.Sprintf("%s type %d flags %d charset %d length %d decimals %d", f.Name, f.Type, f.Flag, f.Charset, f.ColumnLength, f.Decimal))
		}
		return strings.Join(out, "; "), len(r.RowDatas)
	}
	want := map[string]string{}
	for _, q := range statements {
		want[q], _ = defs(q, false)
	}
	if _, err := c.Execute("SET SQL_SELECT_LIMIT = 0"); err != nil {
		t.Fatal(err)
	}
	for _, q := range statements {
		for _, binary := range []bool{false, true} {
			if got, rows := defs(q, binary); got != want[q] || rows != 0 {
				t.Errorf("%s under sql_select_limit 0 (binary %v): %d rows, columns\n%s\nwant none, columns\n%s", q, binary, rows, got, want[q])
			}
		}
	}
}
