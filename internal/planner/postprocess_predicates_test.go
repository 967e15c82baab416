package planner_test

import (
	"fmt"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// postProcessed parses sql under the session collation_connection coll,
// releases for every group (the cross product of its keys' values, in
// order) the count counts[g] for COUNT(*) and NULL for every other
// aggregate, post-processes, and returns the result cells and warnings.
func postProcessed(t *testing.T, sql, coll string, counts []float64) ([][]any, planner.Warnings) {
	t.Helper()
	return postProcessedIn(t, testCatalog(), sql, coll, counts)
}

// postProcessedIn is postProcessed over the tables of cat.
func postProcessedIn(t *testing.T, cat *catalog.Config, sql, coll string, counts []float64) ([][]any, planner.Warnings) {
	t.Helper()
	p := sqlrewrite.NewParser(cat)
	p.SetSessionCollation(coll)
	st, err := p.Parse(sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	q := st.(*sqlrewrite.Query)
	if q.Collation != coll {
		t.Fatalf("%s: the query records collation %q, want %q", sql, q.Collation, coll)
	}
	groups := [][]sqlrewrite.Value{nil}
	for _, k := range q.Keys {
		var next [][]sqlrewrite.Value
		for _, g := range groups {
			for _, v := range k.Values {
				next = append(next, append(append([]sqlrewrite.Value(nil), g...), v))
			}
		}
		groups = next
	}
	rows := make([]planner.Row, len(groups))
	for g := range groups {
		rows[g].Keys = groups[g]
		for _, it := range q.Base.Items {
			d := planner.Datum{Null: true}
			if it.Agg.Func == sqlrewrite.CountRows {
				d = planner.Datum{Num: counts[g%len(counts)], Int: true}
			}
			rows[g].Aggs = append(rows[g].Aggs, d)
		}
	}
	out, w, err := planner.PostProcess(q, rows)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	got := make([][]any, len(out))
	for i, r := range out {
		for _, d := range r {
			got[i] = append(got[i], d.Value())
		}
	}
	return got, w
}

// TestPostProcessCollations checks by hand that post-processing compares
// a released text key in the collation dpproxy declares for text columns
// (utf8mb4_general_ci on MySQL, and in testCatalog, which names no
// backend: case and accents folded, trailing spaces ignored)
// whatever the session's, and the text of literals (CASE labels, CONCAT,
// tiers' labels) in the session's collation_connection: byte order by
// default (utf8mb4_0900_bin), case-insensitive under utf8mb4_general_ci.
// MariaDB answers the same (TestCollationsAsMariaDB).
func TestPostProcessCollations(t *testing.T) {
	counts := []float64{5, 12, 0, 7, 12, 3} // sex × state: (0, CA) (0, NY) (0, WA) (1, CA) (1, NY) (1, WA)
	for _, c := range []struct{ sql, coll, want string }{
		// A key compares in the column's collation, whatever the session's.
		{"SELECT sex, state FROM pums GROUP BY sex, state HAVING COUNT(*) >= 0 AND state = 'ca'", "", "[[0 CA] [1 CA]]"},
		{"SELECT sex, state FROM pums GROUP BY sex, state HAVING COUNT(*) >= 0 AND state = 'ca  '", "", "[[0 CA] [1 CA]]"},
		{"SELECT sex, state FROM pums GROUP BY sex, state HAVING COUNT(*) >= 0 AND state < 'nz' AND sex = 0", "", "[[0 CA] [0 NY]]"},
		{"SELECT sex, state FROM pums GROUP BY sex, state HAVING COUNT(*) >= 0 AND state <=> 'wA'", "utf8mb4_0900_bin", "[[0 WA] [1 WA]]"},
		{"SELECT state, NULLIF(state, 'ny'), GREATEST(state, 'mz'), LEAST('mz', state) FROM pums GROUP BY state HAVING COUNT(*) >= 0",
			"", "[[CA CA mz CA] [NY <nil> NY mz] [WA WA WA mz]]"},
		{"SELECT DISTINCT CONCAT(state, '') = 'Ca' FROM pums GROUP BY sex, state ORDER BY 1", "", "[[0] [1]]"},
		// Literals' text: byte order by default, case-insensitive in general_ci.
		{"SELECT CONCAT('A', COUNT(*)) = 'a5' FROM pums GROUP BY sex, state LIMIT 1", "", "[[0]]"},
		{"SELECT CONCAT('A', COUNT(*)) = 'a5' FROM pums GROUP BY sex, state LIMIT 1", "utf8mb4_general_ci", "[[1]]"},
		{"SELECT GREATEST(CONCAT('a', COUNT(*)), 'B') FROM pums GROUP BY sex, state LIMIT 1", "", "[[a5]]"},
		{"SELECT GREATEST(CONCAT('a', COUNT(*)), 'B') FROM pums GROUP BY sex, state LIMIT 1", "utf8mb4_general_ci", "[[B]]"},
		{"SELECT CASE WHEN COUNT(*) < 4 THEN 'b' WHEN COUNT(*) < 8 THEN 'A' ELSE 'C' END AS g FROM pums GROUP BY sex, state ORDER BY g",
			"", "[[A] [A] [C] [C] [b] [b]]"},
		{"SELECT CASE WHEN COUNT(*) < 4 THEN 'b' WHEN COUNT(*) < 8 THEN 'A' ELSE 'C' END AS g FROM pums GROUP BY sex, state ORDER BY g",
			"utf8mb4_general_ci", "[[A] [A] [b] [b] [C] [C]]"},
		{"SELECT DISTINCT CASE WHEN COUNT(*) < 8 THEN 'x' ELSE 'X ' END FROM pums GROUP BY sex, state", "utf8mb4_general_ci", "[[x]]"},
		{"SELECT DISTINCT CASE WHEN COUNT(*) < 8 THEN 'x' ELSE 'X ' END FROM pums GROUP BY sex, state", "", "[[x] [X ]]"},
		{"SELECT 'a ' = 'a', 'a' = 'A' FROM pums GROUP BY sex LIMIT 1", "utf8mb4_bin", "[[1 0]]"},
		// Tiers' labels are literals.
		{"SELECT CASE WHEN age < 30 THEN 'b' WHEN age < 70 THEN 'A' ELSE 'C' END AS g, COUNT(*) * 0 FROM pums GROUP BY g ORDER BY g", "", "[[A 0] [C 0] [b 0]]"},
		{"SELECT CASE WHEN age < 30 THEN 'b' WHEN age < 70 THEN 'A' ELSE 'C' END AS g, COUNT(*) * 0 FROM pums GROUP BY g ORDER BY g", "utf8mb4_general_ci", "[[A 0] [b 0] [C 0]]"},
		// An outer query groups and de-duplicates text in its collation.
		{"SELECT COUNT(DISTINCT g) FROM (SELECT sex, CASE WHEN sex = 0 THEN 'x' ELSE 'X' END AS g, COUNT(*) FROM pums GROUP BY sex) t", "", "[[2]]"},
		{"SELECT COUNT(DISTINCT g) FROM (SELECT sex, CASE WHEN sex = 0 THEN 'x' ELSE 'X' END AS g, COUNT(*) FROM pums GROUP BY sex) t", "utf8mb4_general_ci", "[[1]]"},
		{"SELECT g, COUNT(*) FROM (SELECT sex, CASE WHEN sex = 0 THEN 'x' ELSE 'X' END AS g, COUNT(*) FROM pums GROUP BY sex) t GROUP BY g", "utf8mb4_general_ci", "[[x 2]]"},
		{"SELECT g, COUNT(*) FROM (SELECT sex, CASE WHEN sex = 0 THEN 'x' ELSE 'X' END AS g, COUNT(*) FROM pums GROUP BY sex) t GROUP BY g", "", "[[X 1] [x 1]]"},
	} {
		got, _ := postProcessed(t, c.sql, c.coll, counts)
		if fmt.Sprint(got) != c.want {
			t.Errorf("%s (collation_connection %q):\n got %v\nwant %s", c.sql, c.coll, got, c.want)
		}
	}
}

// TestPostProcessKeysCompareInTheBackendCollation: a released text key
// compares (=, IN, LIKE, and text made of it with CONCAT) in the
// collation dpproxy declares for its column, the backend's
// (catalog.Config.TextCollation), whatever the session's
// collation_connection: byte for byte with trailing spaces significant on
// PostgreSQL and SQLite, as their = and GROUP BY; case, accents and
// trailing spaces folded on MySQL/MariaDB.
func TestPostProcessKeysCompareInTheBackendCollation(t *testing.T) {
	const sql = "SELECT MAX(state = 'ca'), MAX(state = 'CA '), MAX(state IN ('Ca')), MAX(state LIKE 'c%'), MAX(CONCAT(state, ' ') = state) " +
		"FROM (SELECT state, COUNT(*) FROM pums GROUP BY state) AS t"
	for _, c := range []struct{ driver, want string }{
		{catalog.DriverPostgres, "[[0 0 0 0 0]]"},
		{catalog.DriverSQLite, "[[0 0 0 0 0]]"},
		{catalog.DriverMySQL, "[[1 1 1 1 1]]"},
	} {
		cat := testCatalog()
		cat.Backend.Driver = c.driver
		for _, coll := range []string{"", "utf8mb4_general_ci", "utf8mb4_bin"} {
			if got, _ := postProcessedIn(t, cat, sql, coll, []float64{5}); fmt.Sprint(got) != c.want {
				t.Errorf("%s (collation_connection %q): got %v, want %s", c.driver, coll, got, c.want)
			}
		}
	}
}

// TestPostProcessPredicates checks BETWEEN, IN, IS TRUE/FALSE and LIKE over
// released values and keys by hand, with MySQL's NULLs (a NULL released
// AVG), and text read as a number: its numeric prefix, with warning 1292.
func TestPostProcessPredicates(t *testing.T) {
	counts := []float64{5, 12, 0, 7, 12, 3}
	for _, c := range []struct{ sql, want string }{
		{"SELECT sex, state FROM pums GROUP BY sex, state HAVING COUNT(*) >= 0 AND COUNT(*) BETWEEN 4 AND 8", "[[0 CA] [1 CA]]"},
		{"SELECT sex, state FROM pums GROUP BY sex, state HAVING COUNT(*) >= 0 AND COUNT(*) NOT BETWEEN 4 AND 12", "[[0 WA] [1 WA]]"},
		{"SELECT sex, state FROM pums GROUP BY sex, state HAVING COUNT(*) >= 0 AND sex IN (1) AND state NOT IN ('ny', 'wa')", "[[1 CA]]"},
		{"SELECT state FROM pums GROUP BY state HAVING COUNT(*) >= 0 AND state BETWEEN 'b' AND 'nz'", "[[CA] [NY]]"},
		{"SELECT sex, state FROM pums GROUP BY sex, state HAVING COUNT(*) >= 0 AND COUNT(*) IN (3, 12) AND state LIKE '%y'", "[[0 NY] [1 NY]]"},
		{"SELECT sex, state FROM pums GROUP BY sex, state HAVING COUNT(*) >= 0 AND COUNT(*) LIKE '1%'", "[[0 NY] [1 NY]]"},
		{"SELECT sex, state FROM pums GROUP BY sex, state HAVING COUNT(*) >= 0 AND COUNT(*) IS FALSE", "[[0 WA]]"},
		{"SELECT COUNT(*) IS TRUE, COUNT(*) IS NOT TRUE, COUNT(*) IS NOT FALSE, AVG(age) IS TRUE, AVG(age) IS NOT TRUE, AVG(age) IS FALSE FROM pums GROUP BY sex, state LIMIT 1",
			"[[1 0 1 0 1 0]]"},
		{"SELECT AVG(age) BETWEEN 1 AND 2, 5 BETWEEN AVG(age) AND 3, 5 BETWEEN AVG(age) AND 10, 5 NOT BETWEEN AVG(age) AND 3, AVG(age) IN (1), COUNT(*) IN (1, AVG(age)), COUNT(*) IN (5, AVG(age)), COUNT(*) NOT IN (1, AVG(age)) FROM pums GROUP BY sex, state LIMIT 1",
			"[[<nil> 0 <nil> 1 <nil> <nil> 1 <nil>]]"},
		{"SELECT AVG(age) LIKE 'a', 'a' LIKE AVG(age), COUNT(*) NOT LIKE '5', 'a%c' LIKE 'a|%c' ESCAPE '|', 'abc' LIKE 'a|%c' ESCAPE '|' FROM pums GROUP BY sex, state LIMIT 1",
			"[[<nil> <nil> 0 1 0]]"},
		{"SELECT '10' BETWEEN '9' AND COUNT(*) * 0 + 11, '1.0' IN ('1', COUNT(*) * 0 + 2), 'a' IN (COUNT(*) * 0, 'b') FROM pums GROUP BY sex LIMIT 1", "[[1 0 1]]"},
	} {
		got, _ := postProcessed(t, c.sql, "", counts)
		if fmt.Sprint(got) != c.want {
			t.Errorf("%s:\n got %v\nwant %s", c.sql, got, c.want)
		}
	}

	// Text read as a number: its numeric prefix, each reading a 1292.
	got, w := postProcessed(t, "SELECT COUNT(*) = '5abc', COUNT(*) + ' 1 ', COUNT(*) = '5' FROM pums GROUP BY sex, state LIMIT 1", "", counts)
	if want := "[[1 6 1]]"; fmt.Sprint(got) != want {
		t.Errorf("numeric prefixes: got %v, want %s", got, want)
	}
	if want := "[{5abc DECIMAL false} { 1  DOUBLE true}]"; fmt.Sprint(w.Truncations[:2]) != want {
		t.Errorf("truncations: got %v, want %s first", w.Truncations, want)
	}
}

// TestUnimplementedCollationRefused: under a collation_connection that
// post-processing does not compare in (latin1_swedish_ci after SET NAMES
// latin1), a query that would compare, order or match literals' text is
// refused when planned, before anything is reserved (1235); one that
// compares a released text key, in the column's collation, is planned, as
// is every query under a collation it implements.
func TestUnimplementedCollationRefused(t *testing.T) {
	cat := testCatalog()
	for _, c := range []struct {
		sql     string
		refused bool
	}{
		{"SELECT sex, state, COUNT(*) FROM pums GROUP BY sex, state HAVING state = 'ca' AND state IN ('ca', 'ny') ORDER BY state", false},
		{"SELECT state LIKE 'c%', state BETWEEN 'a' AND 'd', COUNT(*) FROM pums GROUP BY state", false},
		{"SELECT COUNT(*) = '3', CONCAT('a', COUNT(*)) FROM pums", false},
		{"SELECT 'x' IN (state, 'y'), COUNT(*) FROM pums GROUP BY state", true},
		{"SELECT GREATEST(state, 'x', 'y'), COUNT(*) FROM pums GROUP BY state", false},
		{"SELECT CONCAT('A', COUNT(*)) = 'a5' FROM pums", true},
		{"SELECT NULLIF(CONCAT('A', COUNT(*)), 'a5') FROM pums", true},
		{"SELECT COUNT(*) LIKE '3%' FROM pums", true},
		{"SELECT CASE WHEN COUNT(*) < 4 THEN 'b' ELSE 'A' END AS g FROM pums GROUP BY sex ORDER BY g", true},
		{"SELECT DISTINCT CASE WHEN COUNT(*) < 4 THEN 'b' ELSE 'A' END AS g FROM pums GROUP BY sex", true},
		{"SELECT CASE WHEN age < 30 THEN 'b' ELSE 'A' END AS g, COUNT(*) FROM pums GROUP BY g ORDER BY g", true},
		{"SELECT COUNT(DISTINCT g) FROM (SELECT sex, CASE WHEN sex = 0 THEN 'x' ELSE 'X' END AS g, COUNT(*) FROM pums GROUP BY sex) t", true},
	} {
		for _, coll := range []string{"latin1_swedish_ci", "utf8mb4_general_ci", "utf8mb4_0900_ai_ci", ""} {
			p := sqlrewrite.NewParser(cat)
			p.SetSessionCollation(coll)
			st, err := p.Parse(c.sql)
			if err != nil {
				t.Fatalf("%s: %v", c.sql, err)
			}
			_, err = planner.New(cat).PlanQuery(st.(*sqlrewrite.Query), planner.Settings{Epsilon: 1, Mechanism: "auto"})
			want := c.refused && coll == "latin1_swedish_ci"
			if (err != nil) != want {
				t.Errorf("%s under %q: error %v, want refused %v", c.sql, coll, err, want)
			} else if err != nil && formatError(err) != "error 1235 (42000): unsupported\n" {
				t.Errorf("%s under %q: %s", c.sql, coll, formatError(err))
			}
		}
	}
}
