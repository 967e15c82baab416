package main

import (
	"database/sql"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
	"github.com/dpproxy/dpproxy/internal/wire"
)

// partitionRow is one row of the partitioned test table; nil is NULL.
type partitionRow struct {
	id    int
	age   *int
	spend float64 // a multiple of 1/4 in [-50, 1050): every sum of them is exact
	site  *string
}

// partitionRows: 3000 rows, ages in [0, 100] with every 17th NULL, spends
// beyond both bounds [0, 1000], sites a, b, c with every 23rd NULL.
func partitionRows() []partitionRow {
	sites := []string{"a", "b", "c"}
	rows := make([]partitionRow, 3000)
	for i := range rows {
		r := partitionRow{id: i, spend: float64(i*7919%4400)/4 - 50}
		if i%17 != 0 {
			age := i * 37 % 101
			r.age = &age
		}
		if i%23 != 0 {
			r.site = &sites[i%3]
		}
		rows[i] = r
	}
	return rows
}

// TestPartitionsOverPostgresFDW builds a PostgreSQL partitioned table
// visits whose first two partitions are postgres_fdw foreign tables
// (tables of another schema, reached through a loopback server: a real
// remote connection, to the same database so that the test needs no
// database of its own) and whose third is a native partition, and an
// unpartitioned copy visits_flat. Then:
//
//   - the fetches the statements below read, rendered with the
//     partitions, return exactly what they return over the copy
//     (every spend is a multiple of 1/4, so the sums are exact in any
//     order), and EXPLAIN (VERBOSE) shows postgres_fdw running each
//     aggregate on the remote server ("Relations: Aggregate on"), which
//     it does not for the same fetch over the parent table;
//   - through the proxy, COUNT, SUM, AVG, VARIANCE, MEDIAN and GROUP BY
//     on the partitioned table are answered within a few noise scales of
//     the truth (at ε = 100), as on the copy, and the proxy's fetches of
//     the partitioned table are the per-partition ones.
//
// It needs postgres_fdw and a superuser (CREATE EXTENSION, a user mapping
// without a password); without them it fails under CI=true and skips
// otherwise.
func TestPartitionsOverPostgresFDW(t *testing.T) {
	dsn := testdb.PostgresDSN(t)
	db := testdb.Open(t, "postgres", dsn)
	var schema, database, user string
	var host sql.NullString
	var port sql.NullInt64
	if err := db.QueryRow("SELECT current_schema(), current_database(), current_user, host(inet_server_addr()), inet_server_port()").
		Scan(&schema, &database, &user, &host, &port); err != nil {
		t.Fatal(err)
	}
	if !host.Valid {
		host.String, port.Int64 = "localhost", 5432 // a Unix socket: the default server
	}
	if _, err := db.Exec("CREATE EXTENSION IF NOT EXISTS postgres_fdw"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("postgres_fdw: %v (CI's PostgreSQL must have it)", err)
		}
		t.Skipf("postgres_fdw is not available: %v", err)
	}
	remote, server := schema+"_remote", schema+"_fdw"
	t.Cleanup(func() {
		for _, drop := range []string{"DROP SERVER IF EXISTS " + server + " CASCADE", "DROP SCHEMA IF EXISTS " + remote + " CASCADE"} {
			if _, err := db.Exec(drop); err != nil {
				t.Errorf("%s: %v", drop, err)
			}
		}
	})
	rows := partitionRows()
	ddl := []string{
		"CREATE SCHEMA " + remote,
		"CREATE TABLE " + remote + ".shard_a (id BIGINT, age INTEGER, spend DOUBLE PRECISION, site TEXT)",
		"CREATE TABLE " + remote + ".shard_b (id BIGINT, age INTEGER, spend DOUBLE PRECISION, site TEXT)",
		fmt.Sprintf("CREATE SERVER %s FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '%s', port '%d', dbname '%s')", server, host.String, port.Int64, database),
		fmt.Sprintf("CREATE USER MAPPING FOR CURRENT_USER SERVER %s OPTIONS (user '%s')", server, user),
		"CREATE TABLE visits (id BIGINT, age INTEGER, spend DOUBLE PRECISION, site TEXT) PARTITION BY RANGE (id)",
		fmt.Sprintf("CREATE FOREIGN TABLE visits_a PARTITION OF visits FOR VALUES FROM (MINVALUE) TO (1000) SERVER %s OPTIONS (schema_name '%s', table_name 'shard_a')", server, remote),
		fmt.Sprintf("CREATE FOREIGN TABLE visits_b PARTITION OF visits FOR VALUES FROM (1000) TO (2000) SERVER %s OPTIONS (schema_name '%s', table_name 'shard_b')", server, remote),
		"CREATE TABLE visits_c PARTITION OF visits DEFAULT",
		"CREATE TABLE visits_flat (id BIGINT, age INTEGER, spend DOUBLE PRECISION, site TEXT)",
	}
	for _, s := range ddl {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		table := remote + ".shard_a"
		switch {
		case r.id >= 2000:
			table = "visits_c"
		case r.id >= 1000:
			table = remote + ".shard_b"
		}
		for _, tbl := range []string{table, "visits_flat"} {
			if _, err := tx.Exec("INSERT INTO "+tbl+" VALUES ($1, $2, $3, $4)", r.id, r.age, r.spend, r.site); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"ANALYZE " + remote + ".shard_a", "ANALYZE " + remote + ".shard_b", "ANALYZE visits", "ANALYZE visits_flat"} {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}

	parts := []string{"visits_a", "visits_b", "visits_c"}
	t.Run("fetches", func(t *testing.T) { partitionedFetches(t, db, parts) })
	t.Run("proxy", func(t *testing.T) { partitionedProxy(t, dsn, parts, rows) })
}

// partitionedFetches compares fetches over the partitions with the same
// fetches over visits_flat, and reads EXPLAIN (VERBOSE) of each over the
// partitions and over the parent.
func partitionedFetches(t *testing.T, db *sql.DB, parts []string) {
	sites := sqlrewrite.CellDim{Column: "site", Values: []sqlrewrite.Value{{Str: "a", IsText: true}, {Str: "b", IsText: true}, {Str: "c", IsText: true}}}
	terms := []sqlrewrite.SummaryTerm{
		{Kind: sqlrewrite.CountAll},
		{Kind: sqlrewrite.CountNumbers, Column: "spend"},
		{Kind: sqlrewrite.ClampedSum, Column: "spend", Lower: 0, Upper: 1000},
		{Kind: sqlrewrite.ClampedSumSquares, Column: "spend", Lower: 0, Upper: 1000},
	}
	older := []sqlrewrite.Condition{{Column: "age", Range: &sqlrewrite.Range{Lower: 50, HasLower: true, LowerOpen: true}}}
	for _, c := range []struct {
		name  string
		fetch sqlrewrite.Fetch
	}{
		{"summary", sqlrewrite.Fetch{Summary: terms}},
		{"summary-filtered", sqlrewrite.Fetch{Filter: older, Summary: terms}},
		{"histogram", sqlrewrite.Fetch{Histogram: &sqlrewrite.Histogram{Column: "spend", Lower: 0, Upper: 1000, Bins: 64}}},
		{"grid-sums", sqlrewrite.Fetch{GridSums: &sqlrewrite.GridSums{Column: "spend", Lower: 0, Upper: 1000, Unit: 1.0 / 64}}},
		{"grouped-window", sqlrewrite.Fetch{Window: &sqlrewrite.Window{Column: "age", Lower: 0, Upper: 100, Offset: 0, Limit: 3000, Grouped: true}}},
		{"profile", sqlrewrite.Fetch{Profile: &sqlrewrite.Profile{Column: "age", Lower: 0, Upper: 100, Terms: terms[1:]}}},
		{"grouped", sqlrewrite.Fetch{Filter: older, Grouped: &sqlrewrite.GroupedSummary{Dims: []sqlrewrite.CellDim{sites}, Terms: terms}}},
		{"cells", sqlrewrite.Fetch{Cells: &sqlrewrite.Cells{Dims: []sqlrewrite.CellDim{sites, {Column: "age", Edges: sqlrewrite.DoubleEdges([]float64{0, 30, 60, 100})}}}}},
		{"keys", sqlrewrite.Fetch{Keys: &sqlrewrite.KeyCounts{Column: "age", Numeric: true}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			flat, split, parent := c.fetch, c.fetch, c.fetch
			flat.Table = "visits_flat"
			split.Table, split.Partitions = "visits", parts
			parent.Table = "visits"
			want := fetchRows(t, db, "", flat)
			got := fetchRows(t, db, "", split)
			if c.fetch.Profile != nil {
				want = addProfileGroups(want)
			}
			if !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("over the partitions:\n%v\nover the copy:\n%v", got, want)
			}
			plan := strings.Join(slices.Concat(fetchRows(t, db, "EXPLAIN (VERBOSE) ", split)...), "\n")
			// One pushed aggregate per foreign partition, and the native
			// partition's own aggregate.
			for _, p := range parts[:2] {
				if !regexp.MustCompile(`Relations: Aggregate on \(\w+\.` + p + `\)`).MatchString(plan) {
					t.Errorf("no aggregate pushed to %s:\n%s", p, plan)
				}
			}
			if n := strings.Count(plan, "Relations: Aggregate on ("); n != 2 {
				t.Errorf("%d aggregates pushed, want 2:\n%s", n, plan)
			}
			if !regexpRemoteAggregate(plan) {
				t.Errorf("no remote SQL computes an aggregate:\n%s", plan)
			}
			plan = strings.Join(slices.Concat(fetchRows(t, db, "EXPLAIN (VERBOSE) ", parent)...), "\n")
			if strings.Contains(plan, "Aggregate on (") || regexpRemoteAggregate(plan) {
				t.Errorf("over the parent table, postgres_fdw pushed an aggregate after all:\n%s", plan)
			}
		})
	}
}

// regexpRemoteAggregate reports whether a plan sends count(*) or sum( to
// a remote server.
func regexpRemoteAggregate(plan string) bool {
	for _, line := range strings.Split(plan, "\n") {
		if strings.Contains(line, "Remote SQL: SELECT") && (strings.Contains(line, "count(") || strings.Contains(line, "sum(")) {
			return true
		}
	}
	return false
}

// fetchRows runs prefix + the fetch f rendered for PostgreSQL and returns
// its rows as text, sorted.
func fetchRows(t *testing.T, db *sql.DB, prefix string, f sqlrewrite.Fetch) [][]string {
	t.Helper()
	query, args, err := sqlrewrite.Render(f, sqlrewrite.PostgreSQL)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := db.Query(prefix+query, args...)
	if err != nil {
		t.Fatalf("%s%s: %v", prefix, query, err)
	}
	out := testdb.Strings(t, rs, prefix+query)
	if prefix == "" {
		slices.SortFunc(out, slices.Compare)
	}
	return out
}

// addProfileGroups adds up the rows of an unpartitioned profile with the
// same clamped value (what the proxy's reader does; the partitioned
// profile's coordinator does it in SQL). The test's counts and sums are
// integers or multiples of 1/16, printed exactly.
func addProfileGroups(rows [][]string) [][]string {
	var out [][]string
	for _, r := range rows {
		n := len(out)
		if n == 0 || out[n-1][0] != r[0] {
			out = append(out, slices.Clone(r))
			continue
		}
		for j := 1; j < len(r); j++ {
			var a, b float64
			fmt.Sscan(out[n-1][j], &a)
			fmt.Sscan(r[j], &b)
			out[n-1][j] = fmt.Sprint(a + b)
		}
	}
	return out
}

// partitionedProxy runs statements through the proxy on the partitioned
// table and on its copy and compares both with the truth.
func partitionedProxy(t *testing.T, dsn string, parts []string, rows []partitionRow) {
	dir := t.TempDir()
	config := filepath.Join(dir, "dpproxy.yaml")
	columns := `
    columns:
      - {name: age, type: integer, lower: 0, upper: 100}
      - {name: spend, type: real, lower: 0, upper: 1000}
      - {name: site, type: text, values: [a, b, c]}`
	yaml := fmt.Sprintf(`
backend: {driver: postgres, dsn: %q}
ledger: {driver: sqlite, dsn: %q}
privacy: {default_epsilon: 100, max_epsilon: 100}
users:
  - {name: pat, password_hash: %q, epsilon: 100000}
tables:
  - name: visits
    partitions: [%s]%s
  - name: visits_flat%s
`, dsn, filepath.Join(dir, "ledger.db"), wire.FormatNativePasswordHash(wire.NativePasswordHash("pat-pw")),
		strings.Join(parts, ", "), columns, columns)
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, dir, nil, "--config", config, "--log-level", "debug")
	db := p.connect(t, "pat", "pat-pw")
	db.SetMaxOpenConns(1)

	// The truth, over the clamped values, as the releases' analyses define it.
	var n, n50, spends float64
	var sum, squares float64
	var ages []float64
	bySite := map[string][2]float64{}
	for _, r := range rows {
		n++
		if r.age != nil && *r.age > 50 {
			n50++
		}
		v := min(max(r.spend, 0), 1000)
		spends++
		sum += v
		squares += v * v
		if r.age != nil {
			ages = append(ages, float64(*r.age))
		}
		if r.site != nil {
			s := bySite[*r.site]
			bySite[*r.site] = [2]float64{s[0] + 1, s[1] + v}
		}
	}
	mean := sum / spends
	variance := squares/spends - mean*mean
	slices.Sort(ages)
	median := ages[len(ages)/2]

	// At ε = 100 a count's Laplace scale is 0.01 and a sum's 10; the
	// other tolerances are wide enough for every mechanism auto picks.
	checks := []struct {
		sql       string
		want, tol float64
	}{
		{"SELECT COUNT(*) FROM %s", n, 1},
		{"SELECT COUNT(*) FROM %s WHERE age > 50", n50, 1},
		{"SELECT SUM(spend) FROM %s", sum, 500},
		{"SELECT AVG(spend) FROM %s", mean, 5},
		{"SELECT VARIANCE(spend) FROM %s", variance, variance / 10},
		{"SELECT MEDIAN(age) FROM %s", median, 3},
	}
	for _, table := range []string{"visits", "visits_flat"} {
		for _, c := range checks {
			q := fmt.Sprintf(c.sql, table)
			_, got := queryRow(t, db, q)
			if math.Abs(got[0]-c.want) > c.tol {
				t.Errorf("%s: got %v, want %v ± %v", q, got[0], c.want, c.tol)
			}
		}
		q := "SELECT site, COUNT(*), SUM(spend) FROM " + table + " GROUP BY site"
		rs, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		groups := 0
		for rs.Next() {
			var site string
			var count, total float64
			if err := rs.Scan(&site, &count, &total); err != nil {
				t.Fatal(err)
			}
			groups++
			if w := bySite[site]; math.Abs(count-w[0]) > 1 || math.Abs(total-w[1]) > 500 {
				t.Errorf("%s: %s has %v rows summing %v, want %v ± 1 and %v ± 500", q, site, count, total, w[0], w[1])
			}
		}
		if err := rs.Err(); err != nil || groups != 3 {
			t.Errorf("%s: %d groups, %v", q, groups, err)
		}
		rs.Close()
	}

	// The proxy's fetches, from its debug log once it is complete (a
	// statement's last lines may reach the pipe after its answer): over
	// the partitioned table, every aggregate per partition (one at least
	// per statement) and the parent read only by windows; over the copy,
	// the unpartitioned shapes.
	var fetches []string
	for quiet := 0; quiet < 3; {
		before := p.Logs()
		time.Sleep(100 * time.Millisecond)
		if p.Logs() == before {
			quiet++
		} else {
			quiet = 0
		}
	}
	for _, line := range strings.Split(p.Logs(), "\n") {
		if strings.Contains(line, `msg="backend fetch"`) {
			fetches = append(fetches, line)
		}
	}
	var perPartition int
	for _, f := range fetches {
		switch {
		case strings.Contains(f, `FROM \"visits_flat\"`):
			if strings.Contains(f, "UNION ALL") {
				t.Errorf("a fetch of the copy over partitions: %s", f)
			}
		case strings.Contains(f, "dpproxy_p"):
			perPartition++
			if strings.Contains(f, `FROM \"visits\"`) || strings.Count(f, "UNION ALL") != len(parts)-1 {
				t.Errorf("a per-partition fetch not over the partitions: %s", f)
			}
		case strings.Contains(f, `FROM \"visits\"`):
			if !strings.Contains(f, " LIMIT ") {
				t.Errorf("an aggregate of the partitioned table over its parent: %s", f)
			}
		default:
			t.Errorf("a fetch of neither table: %s", f)
		}
	}
	if statements := len(checks) + 1; perPartition < statements {
		t.Errorf("%d per-partition fetches for %d statements on the partitioned table", perPartition, statements)
	}
}
