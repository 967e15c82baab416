package main

import (
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/wire"
)

// textRows returns the rows of q as text (NULL for NULL).
func textRows(t *testing.T, db *sql.DB, q string) [][]string {
	t.Helper()
	out, err := queryText(db, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

// queryText is textRows, returning the error that stopped it.
func queryText(db *sql.DB, q string) ([][]string, error) {
	rows, err := db.Query(q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]string
	for rows.Next() {
		r := make([]sql.NullString, len(cols))
		dest := make([]any, len(cols))
		for i := range r {
			dest[i] = &r[i]
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		row := make([]string, len(cols))
		for i, v := range r {
			row[i] = "NULL"
			if v.Valid {
				row[i] = v.String
			}
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// TestContradictoryWhereAnsweredFree: a WHERE whose conditions on one
// numeric column no value satisfies together selects no row whatever the
// data, so the statement is answered as over no row (COUNT 0, other
// aggregates NULL, no group), as the catalog engine answers WHERE 1 = 0,
// with a note saying so and nothing charged; EXPLAIN says so too. MEDIAN,
// PERCENTILE_CONT, APPROX_PERCENTILE, IQR and REGR_*, which the catalog
// engine does not know, are answered the same under either WHERE (WHERE
// 1 = 0 and col = NULL refused them with 1235 before). Before
// the fix the first count built and paid a synopsis of age keyed "sex in
// ()" (ε = 0.5 from the analyst and the table's cap, a new key for every
// distinct empty predicate) and answered a noisy count, and the others
// were charged Laplace releases.
func TestContradictoryWhereAnsweredFree(t *testing.T) {
	dir := t.TempDir()
	data, ledger := filepath.Join(dir, "data.db"), filepath.Join(dir, "ledger.db")
	if out, err := exec.Command(binary, "load-demo", "--driver", "sqlite", "--dsn", data).CombinedOutput(); err != nil {
		t.Fatalf("load-demo: %v\n%s", err, out)
	}
	config := filepath.Join(dir, "dpproxy.yaml")
	yaml := fmt.Sprintf(`
backend: {driver: sqlite, dsn: %q}
ledger: {driver: sqlite, dsn: %q}
privacy: {default_epsilon: 0.1, max_epsilon: 1}
users:
  - {name: a, password_hash: %q, epsilon: 10, delta: 0}
tables:
  - name: pums
    epsilon: 10
    columns:
      - {name: age, type: integer, lower: 0, upper: 100, histogram: {epsilon: 0.5}}
      - {name: income, type: real, lower: 0, upper: 500000}
      - {name: sex, type: integer, lower: 0, upper: 1, values: [0, 1]}
`, data, ledger, wire.FormatNativePasswordHash(wire.NativePasswordHash("a-pw")))
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, dir, nil, "--config", config)
	db := p.connect(t, "a", "a-pw")
	db.SetMaxOpenConns(1)
	for _, tc := range []struct {
		q, want string
	}{
		{"SELECT COUNT(*) FROM pums WHERE sex = 0 AND sex = 1 AND age < 30", "[[0]]"},
		{"SELECT COUNT(*) FROM pums WHERE sex = 1 AND sex = 0 AND age BETWEEN 20 AND 40", "[[0]]"},
		{"SELECT COUNT(*), SUM(income), AVG(age) FROM pums WHERE sex = 0 AND sex = 1", "[[0 NULL NULL]]"},
		{"SELECT COUNT(*) FROM pums WHERE age < 30 AND age > 40", "[[0]]"},
		{"SELECT COUNT(*) FROM pums WHERE sex IN (0, 1) AND sex > 5", "[[0]]"},
		{"SELECT sex, COUNT(*) FROM pums WHERE sex = 0 AND sex = 1 GROUP BY sex", "[]"},
		{"SELECT COUNT(*) + 1 FROM pums WHERE sex = 0 AND sex = 1", "[[1]]"},
		// A count of rows with a condition is 0 spelled COUNT, NULL
		// spelled SUM, as MySQL answers over no row.
		{"SELECT SUM(CASE WHEN age <> 3 OR income > 5 THEN 1 END), COUNT(CASE WHEN age <> 3 OR income > 5 THEN 1 END), SUM(CASE WHEN age <> 3 THEN income END) FROM pums WHERE sex = 0 AND sex = 1", "[[NULL 0 NULL]]"},
		// Aggregates of a constant are NULL over no row, as in MySQL
		// (AVG(1), MIN(1) and MAX(1) were 1), alone too.
		{"SELECT AVG(1), MIN(1), MAX(1), SUM(1), COUNT(1) FROM pums WHERE age < 10 AND age > 20", "[[NULL NULL NULL NULL 0]]"},
		{"SELECT MAX(2.5) + 1, COALESCE(AVG(-3), 7) FROM pums WHERE sex = 0 AND sex = 1", "[[NULL 7]]"},
		{"SELECT MIN(1) FROM pums WHERE age < 30 AND age > 40 HAVING MIN(1) IS NULL", "[[NULL]]"},
	} {
		if got := fmt.Sprint(textRows(t, db, tc.q)); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.q, got, tc.want)
		}
		if w := strings.Join(sessionWarnings(t, db), " | "); !strings.Contains(w, "selects no row whatever the data") || !strings.Contains(w, "no budget spent") {
			t.Errorf("%s: warnings %q, want a note that the WHERE selects no row and nothing was spent", tc.q, w)
		}
		checkRemaining(t, db, 10)
	}
	explained := fmt.Sprint(textRows(t, db, "EXPLAIN SELECT COUNT(*) FROM pums WHERE sex = 0 AND sex = 1 AND age < 30"))
	if !strings.Contains(explained, "selects no row whatever the data") || strings.Contains(explained, "synopsis") {
		t.Errorf("EXPLAIN: %s, want it to say the WHERE selects no row, and no synopsis", explained)
	}
	// The catalog engine's zero-row probe gives the same answer, and so
	// does the planner for a WHERE TRUE for no row with aggregates the
	// catalog engine does not know (refused with 1235 before).
	if got := fmt.Sprint(textRows(t, db, "SELECT COUNT(*), SUM(income), AVG(age) FROM pums WHERE 1 = 0")); got != "[[0 NULL NULL]]" {
		t.Errorf("WHERE 1 = 0: got %s", got)
	}
	for _, where := range []string{"sex = 0 AND sex = 1", "1 = 0", "age = NULL", "income IN (NULL) AND age > 3"} {
		for _, c := range []struct{ q, want string }{
			{"SELECT COUNT(*), MEDIAN(age), PERCENTILE_CONT(income, 0.9), APPROX_PERCENTILE(age, 50), IQR(income), REGR_SLOPE(income, age), REGR_INTERCEPT(income, age) FROM pums WHERE %s",
				"[[0 NULL NULL NULL NULL NULL NULL]]"},
			{"SELECT sex, MEDIAN(income) FROM pums WHERE %s GROUP BY sex", "[]"},
			{"SELECT MEDIAN(age), MIN(1), AVG(2) FROM pums WHERE %s", "[[NULL NULL NULL]]"},
		} {
			q := fmt.Sprintf(c.q, where)
			if got := fmt.Sprint(textRows(t, db, q)); got != c.want {
				t.Errorf("%s: got %s, want %s", q, got, c.want)
			}
			if w := strings.Join(sessionWarnings(t, db), " | "); !strings.Contains(w, "selects no row whatever the data") || !strings.Contains(w, "no budget spent") {
				t.Errorf("%s: warnings %q, want a note that the WHERE selects no row and nothing was spent", q, w)
			}
		}
	}
	checkRemaining(t, db, 10)
	// Conditions some value satisfies stay private releases, and an
	// aggregate of a constant is the constant there, whatever the data
	// (dpproxy never reveals whether a group is empty), free.
	textRows(t, db, "SELECT SUM(income) FROM pums WHERE income > 5 AND income < 6")
	checkRemaining(t, db, 9.9)
	if got := fmt.Sprint(textRows(t, db, "SELECT MAX(1), AVG(2) FROM pums WHERE income > 5 AND income < 6")); got != "[[1 2]]" {
		t.Errorf("constant aggregates under a WHERE some row may pass: got %s, want [[1 2]]", got)
	}
	checkRemaining(t, db, 9.9)
}
