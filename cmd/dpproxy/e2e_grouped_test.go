package main

import (
	"bufio"
	"database/sql"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/demo"
	"github.com/dpproxy/dpproxy/internal/testdb"
	"github.com/dpproxy/dpproxy/internal/wire"
)

// groupedDeployment loads the demo table and demo.Visits into the backend
// and writes a configuration with the demo's columns and declared domains
// (sex, educ, race, married), and visits with its visit_date a date column
// bounded by [2018-01-01, 2024-12-31], the ledger in the same database.
func groupedDeployment(t *testing.T, driver, dsn, ledgerDriver, ledgerDSN string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command(binary, "load-demo", "--driver", driver, "--dsn", dsn).CombinedOutput(); err != nil {
		t.Fatalf("load-demo: %v\n%s", err, out)
	}
	if err := demo.LoadVisits(t.Context(), testdb.Open(t, driver, dsn), driver, "visits", demo.Visits(datesSeed)); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "dpproxy.yaml")
	yaml := fmt.Sprintf(`
backend: {driver: %s, dsn: %q}
ledger: {driver: %s, dsn: %q}
privacy: {default_epsilon: 0.1, max_epsilon: 50, default_delta: 1.0e-7, max_delta: 1.0e-4}
users:
  - {name: gina, password_hash: %q, epsilon: 100000, delta: 0.5}
  - {name: hank, password_hash: %q, epsilon: 100, delta: 1.0e-6}
tables:
  - name: pums
    columns:
      - {name: age, type: integer, lower: 0, upper: 100}
      - {name: sex, type: integer, lower: 0, upper: 1, values: [0, 1]}
      - {name: educ, type: integer, lower: 1, upper: 16, values: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]}
      - {name: race, type: integer, lower: 1, upper: 6, values: [1, 2, 3, 4, 5, 6]}
      - {name: income, type: real, lower: 0, upper: 500000}
      - {name: married, type: integer, lower: 0, upper: 1, values: [0, 1]}
  - name: pums_keys
    source: pums
    columns:
      - {name: age, type: integer, lower: 0, upper: 100, partition_selection: true}
      - {name: income, type: real, lower: 0, upper: 500000}
      - {name: sex, type: integer, lower: 0, upper: 1, values: [0, 1]}
  - name: visits
    columns:
      - {name: age, type: integer, lower: 0, upper: 100}
      - {name: spend, type: real, lower: 0, upper: 1000}
      - {name: visit_date, type: date, lower: 2018-01-01, upper: 2024-12-31}
`, driver, dsn, ledgerDriver, ledgerDSN, wire.FormatNativePasswordHash(wire.NativePasswordHash("gina-pw")), wire.FormatNativePasswordHash(wire.NativePasswordHash("hank-pw")))
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return config
}

// groupedDeploymentOn is groupedDeployment on a fresh database of the
// backend driver names (sqlite: a file; postgres and mysql: the test
// servers'), the ledger beside the data (on SQLite in a file of its own):
// the backend's DSN and the configuration file.
func groupedDeploymentOn(t *testing.T, driver string) (dsn, config string) {
	t.Helper()
	switch driver {
	case "sqlite":
		dsn = filepath.Join(t.TempDir(), "data.db")
	case "postgres":
		dsn = testdb.PostgresDSN(t)
	default:
		dsn = testdb.MySQLDSN(t)
	}
	ledgerDriver, ledgerDSN := driver, dsn
	if driver == "sqlite" {
		ledgerDSN = filepath.Join(t.TempDir(), "ledger.db")
	}
	return dsn, groupedDeployment(t, driver, dsn, ledgerDriver, ledgerDSN)
}

// exactSession starts the proxy on config and connects as gina with one
// connection at ε = 40 per statement, where a count's discrete Laplace
// noise is nonzero with probability below 2e-17.
func exactSession(t *testing.T, config string) *sql.DB {
	t.Helper()
	p := startProxy(t, "", nil, "--config", config)
	db := p.connect(t, "gina", "gina-pw")
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("SET @dp_epsilon = 40"); err != nil {
		t.Fatal(err)
	}
	return db
}

// corpusEntry is one line of testdata/corpus/analyst_bi.txt.
type corpusEntry struct {
	sql string
	// rows and cols are the expected shape (atMost: at most rows rows);
	// code is the expected error number, 0 if the query is answered.
	rows, cols int
	atMost     bool
	code       uint16
}

var corpusLine = regexp.MustCompile(`^(?:rows(<?=)(\d+) cols=(\d+)|error=(\d+)) \| (.+)$`)

func readCorpus(t *testing.T) []corpusEntry {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "corpus", "analyst_bi.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := corpusLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("bad corpus line %q", line)
		}
		e := corpusEntry{sql: m[5], atMost: m[1] == "<="}
		if m[4] != "" {
			code, _ := strconv.Atoi(m[4])
			e.code = uint16(code)
		} else {
			e.rows, _ = strconv.Atoi(m[2])
			e.cols, _ = strconv.Atoi(m[3])
		}
		out = append(out, e)
	}
	return out
}

// runCorpus runs every stride-th corpus query through the proxy and
// checks its outcome and shape; it returns how many were run and answered.
func runCorpus(t *testing.T, db *sql.DB, stride int) (run, answered int) {
	for i, e := range readCorpus(t) {
		if i%stride != 0 {
			continue
		}
		run++
		rows, err := db.Query(e.sql)
		if err != nil {
			if got := mysqlCode(err); got != e.code {
				t.Errorf("%s: error %v, want %s", e.sql, err, describeEntry(e))
			}
			continue
		}
		cols, _ := rows.Columns()
		n := 0
		for rows.Next() {
			n++
		}
		if err := rows.Err(); err != nil {
			t.Errorf("%s: %v", e.sql, err)
		}
		rows.Close()
		ok := e.code == 0 && len(cols) == e.cols && (n == e.rows || e.atMost && n <= e.rows)
		if !ok {
			t.Errorf("%s: %d rows × %d columns, want %s", e.sql, n, len(cols), describeEntry(e))
		}
		answered++
	}
	return run, answered
}

func describeEntry(e corpusEntry) string {
	if e.code != 0 {
		return fmt.Sprintf("error %d", e.code)
	}
	op := "="
	if e.atMost {
		op = "<="
	}
	return fmt.Sprintf("rows%s%d cols=%d", op, e.rows, e.cols)
}

// TestCorpusOnSQLite runs the whole corpus of analyst and BI-tool
// queries through the real proxy; PostgreSQL and MariaDB run every
// fourth (groupedScenario).
func TestCorpusOnSQLite(t *testing.T) {
	dir := t.TempDir()
	config := groupedDeployment(t, "sqlite", filepath.Join(dir, "data.db"), "sqlite", filepath.Join(dir, "ledger.db"))
	p := startProxy(t, "", nil, "--config", config)
	db := p.connect(t, "gina", "gina-pw")
	db.SetMaxOpenConns(1)
	run, answered := runCorpus(t, db, 1)
	t.Logf("corpus: %d of %d queries answered (%.0f%%)", answered, run, 100*float64(answered)/float64(run))
	groupedScenario(t, db)
	rowExprScenario(t, db)
	keysOnlyScenario(t, p)
}

func TestGroupedOnPostgres(t *testing.T) {
	dsn := testdb.PostgresDSN(t)
	p := startProxy(t, "", nil, "--config", groupedDeployment(t, "postgres", dsn, "postgres", dsn))
	db := p.connect(t, "gina", "gina-pw")
	db.SetMaxOpenConns(1)
	runCorpus(t, db, 4)
	groupedScenario(t, db)
	rowExprScenario(t, db)
	keysOnlyScenario(t, p)
}

func TestGroupedOnMariaDB(t *testing.T) {
	dsn := testdb.MySQLDSN(t)
	p := startProxy(t, "", nil, "--config", groupedDeployment(t, "mysql", dsn, "mysql", dsn))
	db := p.connect(t, "gina", "gina-pw")
	db.SetMaxOpenConns(1)
	runCorpus(t, db, 4)
	groupedScenario(t, db)
	rowExprScenario(t, db)
	keysOnlyScenario(t, p)
}

// groupTruth is the exact per-race count, mean age and income sum of the
// demo rows with age ≥ 80.
func groupTruth() (count, meanAge, sumIncome [7]float64) {
	for _, r := range demo.PUMS() {
		if r.Age >= 80 {
			count[r.Race]++
			meanAge[r.Race] += float64(r.Age)
			sumIncome[r.Race] += r.Income
		}
	}
	for i := range meanAge {
		meanAge[i] /= count[i]
	}
	return count, meanAge, sumIncome
}

var noteInterval = regexp.MustCompile(`^Note 1003 race = (\d): (COUNT\(\*\)|AVG\(age\)|SUM\(income\)): .*95% interval \[([-0-9.e+]+), ([-0-9.e+]+)\]`)

// groupedScenario: at ε = 40 a grouped chart query answers every race,
// the empty ones (no row of that race with age ≥ 80) included, each
// count, mean and sum within its stated 95% interval of the truth (at
// most 4 misses: the sums' and means' intervals cover with probability
// 0.95); it costs ε once (parallel composition), and EXPLAIN shows the
// per-group cost.
func groupedScenario(t *testing.T, db *sql.DB) {
	count, meanAge, sumIncome := groupTruth()
	empty := 0
	for race := 1; race <= 6; race++ {
		if count[race] == 0 {
			empty++
		}
	}
	if empty == 0 {
		t.Fatal("fixture: every race has a row with age ≥ 80; the test needs an empty group")
	}
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), "SET @dp_epsilon = 40"); err != nil {
		t.Fatal(err)
	}
	var before, after float64
	if err := conn.QueryRowContext(t.Context(), "SELECT dp_remaining_epsilon()").Scan(&before); err != nil {
		t.Fatal(err)
	}
	const q = "SELECT race, COUNT(*), AVG(age), SUM(income) FROM pums WHERE age >= 80 GROUP BY race ORDER BY race"
	rows, err := conn.QueryContext(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	var races []int
	for rows.Next() {
		var race int
		var n int64
		var avg, sum sql.NullFloat64
		if err := rows.Scan(&race, &n, &avg, &sum); err != nil {
			t.Fatal(err)
		}
		races = append(races, race)
	}
	rows.Close()
	if fmt.Sprint(races) != "[1 2 3 4 5 6]" {
		t.Fatalf("races %v, want every declared race, empty ones included", races)
	}
	checked, outside := 0, 0
	for _, w := range warnings(t, conn) {
		m := noteInterval.FindStringSubmatch(w)
		if m == nil {
			continue
		}
		race, _ := strconv.Atoi(m[1])
		lo, _ := strconv.ParseFloat(m[3], 64)
		hi, _ := strconv.ParseFloat(m[4], 64)
		truth := map[string]float64{"COUNT(*)": count[race], "AVG(age)": meanAge[race], "SUM(income)": sumIncome[race]}[m[2]]
		if math.IsNaN(truth) {
			continue // the mean of an empty group
		}
		checked++
		if truth < lo-1e-6 || truth > hi+1e-6 {
			outside++
			t.Logf("race %d %s: truth %g outside [%g, %g]", race, m[2], truth, lo, hi)
		}
	}
	if checked < 6*2+(6-empty) {
		t.Errorf("only %d released values had an interval in SHOW WARNINGS", checked)
	}
	// About 12 of the values have intervals that cover with probability
	// 0.95 exactly (sums, means; the counts' cover with probability near
	// 1 at this ε): 5 or more misses has probability about 2e-4.
	if outside > 4 {
		t.Errorf("%d of %d values outside their 95%% intervals", outside, checked)
	}
	if err := conn.QueryRowContext(t.Context(), "SELECT dp_remaining_epsilon()").Scan(&after); err != nil {
		t.Fatal(err)
	}
	if spent := before - after; math.Abs(spent-40) > 1e-6 {
		t.Errorf("the grouped statement spent ε = %g, want 40 once (parallel composition over 6 groups)", spent)
	}
	partitionSelection(t, conn)
	explain, err := conn.QueryContext(t.Context(), "EXPLAIN "+q)
	if err != nil {
		t.Fatal(err)
	}
	defer explain.Close()
	found := false
	for explain.Next() {
		var step int
		var kind, what, mechanism, detail string
		var eps, delta float64
		if err := explain.Scan(&step, &kind, &what, &mechanism, &eps, &delta, &detail); err != nil {
			t.Fatal(err)
		}
		if kind == "groups" && mechanism == "parallel composition" && eps == 40 && strings.Contains(what, "race(6) = 6 groups") {
			found = true
		}
	}
	if !found {
		t.Error("EXPLAIN does not show the groups and their per-group cost")
	}
}

// partitionSelection groups by age, which has no declared domain but
// allows partition selection, at ε = 40 (20 for the selection, δ = 5e-8):
// the threshold is then 3 and the noise scale 0.05, so the released ages
// are exactly those with at least 3 rows (each other outcome has
// probability below 1e-8), read through the key-count fetch of the
// backend; the statement costs ε = 40 once.
func partitionSelection(t *testing.T, conn *sql.Conn) {
	var rowsPerAge [101]int
	for _, r := range demo.PUMS() {
		rowsPerAge[r.Age]++
	}
	var want []int
	for age, n := range rowsPerAge {
		if n >= 3 {
			want = append(want, age)
		}
	}
	rows, err := conn.QueryContext(t.Context(), "SELECT age, COUNT(*) AS n, AVG(income) FROM pums_keys GROUP BY age")
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for rows.Next() {
		var age, n int
		var avg sql.NullFloat64
		if err := rows.Scan(&age, &n, &avg); err != nil {
			t.Fatal(err)
		}
		got = append(got, age)
	}
	rows.Close()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("partition selection released ages %v, want those with at least 3 rows %v", got, want)
	}
	found := false
	for _, w := range warnings(t, conn) {
		if strings.Contains(w, "released by partition selection") && strings.Contains(w, "reaches 3") {
			found = true
		}
	}
	if !found {
		t.Error("SHOW WARNINGS does not describe the partition selection")
	}
	// Beside a declared key: the same ages (selection on the counts summed
	// over sex), each with both declared sexes, empty cells included.
	rows, err = conn.QueryContext(t.Context(), "SELECT age, sex, COUNT(*) AS n, AVG(income) FROM pums_keys GROUP BY age, sex")
	if err != nil {
		t.Fatal(err)
	}
	var cells, wantCells [][2]int
	for rows.Next() {
		var age, sex, n int
		var avg sql.NullFloat64
		if err := rows.Scan(&age, &sex, &n, &avg); err != nil {
			t.Fatal(err)
		}
		cells = append(cells, [2]int{age, sex})
	}
	rows.Close()
	var bySex [101][2]int
	for _, r := range demo.PUMS() {
		bySex[r.Age][r.Sex]++
	}
	split := 0 // selected ages whose every sex has fewer than 3 rows
	for _, age := range want {
		wantCells = append(wantCells, [2]int{age, 0}, [2]int{age, 1})
		if bySex[age][0] < 3 && bySex[age][1] < 3 {
			split++
		}
	}
	if split == 0 {
		t.Error("fixture: no selected age has fewer than 3 rows in each sex; the check cannot tell summed from per-cell selection")
	}
	if fmt.Sprint(cells) != fmt.Sprint(wantCells) {
		t.Errorf("GROUP BY age, sex released cells %v, want every selected age × both sexes %v", cells, wantCells)
	}
}

// keysOnlyScenario asks for the values of pums_keys.age, a key chosen by
// partition selection, with no aggregate beside it (README: all of the
// statement's ε and δ select the keys), as hank, whose budget is ε = 100,
// δ = 1e-6. At ε = 20, δ = 5e-8 the selection is the one partitionSelection
// runs (threshold 3, noise scale 0.05), so the released ages are exactly
// those with at least 3 rows. GROUP BY age, DISTINCT age and their ORDER
// BY and LIMIT each answer and charge ε = 20 and δ = 5e-8 exactly once;
// with the budget spent, the next is refused with 1226 and charges
// nothing (the budget is reserved before the key counts are read).
func keysOnlyScenario(t *testing.T, p *proxyProcess) {
	db := p.connect(t, "hank", "hank-pw")
	db.SetMaxOpenConns(1)
	for _, s := range []string{"SET @dp_epsilon = 20", "SET @dp_delta = 5e-8"} {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	var rowsPerAge [101]int
	for _, r := range demo.PUMS() {
		rowsPerAge[r.Age]++
	}
	var want []int
	for age, n := range rowsPerAge {
		if n >= 3 {
			want = append(want, age)
		}
	}
	var top3 []int
	for i := len(want) - 1; i >= 0 && len(top3) < 3; i-- {
		top3 = append(top3, want[i])
	}
	remaining := func() (float64, float64) {
		_, v := queryRow(t, db, "SELECT dp_remaining_epsilon(), dp_remaining_delta()")
		return v[0], v[1]
	}
	ages := func(q string) ([]int, error) {
		rows, err := db.Query(q)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var got []int
		for rows.Next() {
			var age int
			var x sql.NullString
			dest := []any{&age}
			if cols, _ := rows.Columns(); len(cols) == 2 {
				dest = append(dest, &x)
			}
			if err := rows.Scan(dest...); err != nil {
				return nil, err
			}
			got = append(got, age)
		}
		return got, rows.Err()
	}
	for _, c := range []struct {
		sql  string
		want []int
	}{
		{"SELECT age FROM pums_keys GROUP BY age", want},
		{"SELECT age, 'x' FROM pums_keys GROUP BY age", want},
		{"SELECT DISTINCT age FROM pums_keys", want},
		{"SELECT age FROM pums_keys GROUP BY age ORDER BY age DESC LIMIT 3", top3},
		{"SELECT DISTINCT age FROM pums_keys ORDER BY 1 DESC LIMIT 3", top3},
	} {
		eps, delta := remaining()
		got, err := ages(c.sql)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s released ages %v, want %v", c.sql, got, c.want)
		}
		e, d := remaining()
		if math.Abs(eps-e-20) > 1e-9 || math.Abs(delta-d-5e-8) > 1e-15 {
			t.Errorf("%s charged ε %g and δ %g, want 20 and 5e-8 once", c.sql, eps-e, delta-d)
		}
	}
	// hank's ε = 100 is spent: the next one is refused before anything is
	// read, and charges nothing.
	eps, delta := remaining()
	if _, err := ages("SELECT age FROM pums_keys GROUP BY age"); mysqlCode(err) != 1226 {
		t.Errorf("SELECT age FROM pums_keys GROUP BY age at ε = 20 with ε = %g left: got %v, want 1226", eps, err)
	}
	if e, d := remaining(); e != eps || d != delta {
		t.Errorf("the refused statement charged ε %g and δ %g", eps-e, delta-d)
	}
}
