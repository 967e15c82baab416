package exec

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// Group filters against the grouped fetch on hostile data, on the real
// backends. Each group of a GROUP BY spends the statement's whole ε
// (parallel composition): its counts and sums come from one grouped fetch
// (a CASE or the value per row), its windows, histograms and pairs from
// fetches with the group's filter. The two must select the same rows, or
// a row is read by two groups (2ε), or a group's count disagrees with its
// window and the statement fails because of one row.

// filterCase is a table, a configuration and the statements whose groups
// are compared.
type filterCase struct {
	name, driver string
	setup        []string
	tables       string // YAML of the configuration's tables
	queries      []string
	// unitTables and unitQueries: a table with a privacy unit over the
	// same rows, in a configuration of its own (one configuration may
	// not read a relation at row level and by unit), and its statements.
	unitTables  string
	unitQueries []string
	run         []string // statements that must answer (RunQuery), seeds 0–4
}

func filterConfig(t *testing.T, tables string) *catalog.Config {
	t.Helper()
	c, err := catalog.ParseConfig(strings.NewReader(`
backend: {driver: sqlite, dsn: "x"}
users:
  - {name: a, password_hash: "*0123456789ABCDEF0123456789ABCDEF01234567", epsilon: 5, delta: 1.0e-6}
tables:
` + tables))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func filterBackend(t *testing.T, driver string) *backend.Backend {
	switch driver {
	case catalog.DriverPostgres:
		return backend.New(testdb.Postgres(t), sqlrewrite.PostgreSQL, nil)
	case catalog.DriverMySQL:
		return backend.New(testdb.MySQL(t), sqlrewrite.MySQL, nil)
	}
	return backend.New(testdb.SQLite(t), sqlrewrite.SQLite, nil)
}

// checkGroupFilters asserts, for each group of q, that the grouped fetch
// and the group's filter count the same rows; on a unit table both over
// the unit-bounded rows, as releaseOn reads them.
func checkGroupFilters(t *testing.T, e *Executor, back *backend.Backend, cat *catalog.Config, q string) {
	t.Helper()
	qp := planGrouped(t, cat, q, 1)
	ctx := context.Background()
	snap, err := back.Snapshot(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	terms := []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}}
	base := qp.Base
	scope := unitScope{salt: newUnitSalt(base, rand.NewChaCha8([32]byte{9}))}
	if base.Table.HasPrivacyUnit() {
		scope.groups, scope.maxGroups = qp.Dims, base.Table.MaxGroupsPerUnit
	}
	grouped, err := snap.GroupedSummary(ctx, e.fetch(base, 1, scope, sqlrewrite.Fetch{Grouped: &sqlrewrite.GroupedSummary{Dims: qp.Dims, Terms: terms}}))
	if err != nil {
		t.Fatalf("%s: grouped fetch: %v", q, err)
	}
	total := 0.0
	for g := range qp.Groups {
		group, groupScope := groupReads(base, scope, qp.GroupFilters[g])
		one, err := snap.Summary(ctx, e.fetch(group, 1, groupScope, sqlrewrite.Fetch{Summary: terms}))
		if err != nil {
			t.Fatalf("%s: group %v: %v", q, qp.Groups[g], err)
		}
		if one[0] != grouped[g][0] {
			t.Errorf("%s: group %v: the grouped fetch counts %g rows, the group's filter %g", q, qp.Groups[g], grouped[g][0], one[0])
		}
		total += one[0]
	}
	if total == 0 {
		t.Errorf("%s: no row in any group: no power", q)
	}
}

func TestGroupFiltersMatchGroupedFetchOnHostileData(t *testing.T) {
	double := map[string]string{catalog.DriverSQLite: "REAL", catalog.DriverPostgres: "DOUBLE PRECISION", catalog.DriverMySQL: "DOUBLE"}
	bounded := `
  - name: u
    source: t
    columns:
      - {name: k, type: real, lower: 0, upper: 100}
      - {name: y, type: real, lower: 0, upper: 100}
`
	units := func(extra string) string {
		return `
  - name: p
    source: t
    privacy_unit: p
    max_rows_per_unit: 2
    max_groups_per_unit: 2
    columns:
      - {name: k, type: real, lower: 0, upper: 100` + extra + `}
      - {name: y, type: real, lower: 0, upper: 100}
`
	}
	var cases []filterCase
	for _, driver := range []string{catalog.DriverSQLite, catalog.DriverPostgres, catalog.DriverMySQL} {
		hostile := map[string]string{
			catalog.DriverSQLite:   ", (10, -9e999, 1), (11, 'abc', 2), (12, x'00', 3)",
			catalog.DriverPostgres: ", (10, '-Infinity', 1), (11, 'NaN', 2), (12, 'Infinity', 3)",
			catalog.DriverMySQL:    ", (10, -1e300, 1), (11, 1e300, 2)",
		}[driver]
		// One bucket (every readable value) and several; values beyond
		// the bounds, ±Infinity, NaN, text and blobs.
		cases = append(cases, filterCase{name: driver + "/buckets", driver: driver,
			setup: []string{"CREATE TABLE t (p INTEGER, k " + double[driver] + ", y " + double[driver] + ")",
				"INSERT INTO t VALUES (1, -50, 1), (2, 0, 2), (3, 5, 3), (4, 50, 4), (5, 99.99, 5), (6, 100, 6), (7, 1000, 7), (8, NULL, 8)" + hostile},
			tables:      bounded,
			queries:     []string{"SELECT FLOOR(k / 1000) * 1000 AS b, COUNT(*) FROM u GROUP BY b", "SELECT FLOOR(k / 30) * 30 AS b, COUNT(*) FROM u GROUP BY b"},
			unitTables:  units(""),
			unitQueries: []string{"SELECT FLOOR(k / 1000) * 1000 AS b, COUNT(*) FROM p GROUP BY b", "SELECT FLOOR(k / 30) * 30 AS b, COUNT(*) FROM p GROUP BY b"},
			run:         []string{"SELECT FLOOR(k / 1000) * 1000 AS b, MEDIAN(y), MAX(y) FROM u GROUP BY b", "SELECT FLOOR(k / 30) * 30 AS b, MEDIAN(y), MAX(y) FROM u GROUP BY b"}})
		// Mapped keys over numbers and text.
		mapped := map[string]string{
			catalog.DriverSQLite:   ", ('abc', 'A', 9), (x'01', 'a ', 10), (-9e999, 'b', 11)",
			catalog.DriverPostgres: ", ('NaN', 'A', 9), ('-Infinity', 'a ', 10), ('-0', 'b', 11)",
			catalog.DriverMySQL:    ", (-0e0, 'A', 9), (1e300, 'a ', 10)",
		}[driver]
		cases = append(cases, filterCase{name: driver + "/mapped", driver: driver,
			setup: []string{"CREATE TABLE t (k " + double[driver] + ", s VARCHAR(5), y " + double[driver] + ")",
				"INSERT INTO t VALUES (0, 'a', 1), (1, 'b', 2), (2, 'c', 3), (3, 'a', 4), (NULL, NULL, 5), (1.5, 'B', 6), (2, 'c ', 7), (7, 'z', 8)" + mapped},
			tables: `
  - name: t
    columns:
      - {name: k, type: real, lower: 0, upper: 10, values: [0, 1, 2, 3, null]}
      - {name: s, type: text, values: [a, b, c, null]}
      - {name: y, type: real, lower: 0, upper: 100}
`,
			queries: []string{
				"SELECT CASE WHEN k IN (1, 2) THEN 'x' ELSE 'y' END AS g, COUNT(*) FROM t GROUP BY g",
				"SELECT COALESCE(k, 0) AS g, COUNT(*) FROM t GROUP BY g",
				"SELECT k + 1 AS g, COUNT(*) FROM t GROUP BY g",
				"SELECT CASE WHEN k < 1 THEN 'low' WHEN k < 2.5 THEN 'mid' ELSE 'high' END AS g, s, COUNT(*) FROM t GROUP BY g, s",
				"SELECT s, k, COUNT(*) FROM t GROUP BY s, k",
			}})
	}
	// SQLite: text and blobs in a numeric column order above every number,
	// and under TEXT affinity '1' = 1, yet none of them reads as a number.
	cases = append(cases,
		filterCase{name: "sqlite/last-bucket-text", driver: catalog.DriverSQLite,
			setup: []string{"CREATE TABLE t (p INTEGER, k REAL, y REAL)",
				"INSERT INTO t VALUES (1, 5, 1), (2, 15, 2), (3, 25, 3), (4, 100, 50), (5, 100, 51), (6, 100, 52), (7, 'abc', 0), (8, 'abd', 0), (9, x'01', 0)"},
			tables:      bounded,
			queries:     []string{"SELECT FLOOR(k / 50) * 50 AS b, COUNT(*) FROM u GROUP BY b"},
			unitTables:  units(""),
			unitQueries: []string{"SELECT FLOOR(k / 50) * 50 AS b, COUNT(*) FROM p GROUP BY b"},
			run:         []string{"SELECT FLOOR(k / 50) * 50 AS b, MEDIAN(y), MIN(y) FROM u GROUP BY b"}},
		filterCase{name: "sqlite/text-affinity", driver: catalog.DriverSQLite,
			setup: []string{"CREATE TABLE t (p INTEGER, k TEXT, y REAL)",
				"INSERT INTO t VALUES (1, '1', 1), (2, '1', 2), (3, 1, 3), (4, '2', 4), (5, NULL, 5), (6, 'abc', 6)"},
			tables: `
  - name: t
    columns:
      - {name: k, type: integer, lower: 0, upper: 10, values: [1, 2, null]}
      - {name: y, type: real, lower: 0, upper: 100}
  - name: nullfirst
    source: t
    columns:
      - {name: k, type: integer, lower: 0, upper: 10, values: [null, 1, 2]}
      - {name: y, type: real, lower: 0, upper: 100}
`,
			queries:     []string{"SELECT k, COUNT(*) FROM t GROUP BY k", "SELECT k, COUNT(*) FROM nullfirst GROUP BY k"},
			unitTables:  units(", values: [1, 2, null]"),
			unitQueries: []string{"SELECT k, COUNT(*) FROM p GROUP BY k"},
			run:         []string{"SELECT k, COUNT(*), MEDIAN(y) FROM t GROUP BY k"}},
		filterCase{name: "sqlite/odd-numbers", driver: catalog.DriverSQLite,
			setup: []string{"CREATE TABLE t (k REAL, y REAL, kb BLOB, kn NUMERIC)",
				"INSERT INTO t VALUES (' 1', 1, ' 1', ' 1'), ('1 ', 2, '1 ', '1 '), ('0x1', 3, '0x1', '0x1'), ('1e0', 4, '1e0', '1e0'), ('01', 5, '01', '01'), (1, 6, 1, 1), (1.0, 7, 1.0, 1.0), (-0.0, 8, -0.0, -0.0), (0, 9, 0, 0), (x'31', 10, x'31', x'31'), (NULL, 11, NULL, NULL), (9e999, 12, 9e999, 9e999)"},
			tables: `
  - name: t
    columns:
      - {name: k, type: real, lower: 0, upper: 10, values: [0, 1, null]}
      - {name: kb, type: integer, lower: 0, upper: 10, values: [0, 1, null]}
      - {name: kn, type: integer, lower: 0, upper: 10, values: [0, 1, null]}
      - {name: y, type: real, lower: 0, upper: 100}
`,
			queries: []string{"SELECT k, COUNT(*) FROM t GROUP BY k", "SELECT kb, COUNT(*) FROM t GROUP BY kb", "SELECT kn, COUNT(*) FROM t GROUP BY kn",
				"SELECT k, kb, kn, COUNT(*) FROM t GROUP BY k, kb, kn", "SELECT FLOOR(kb / 5) * 5 AS b, COUNT(*) FROM t GROUP BY b"}},
		filterCase{name: "postgres/odd-numbers", driver: catalog.DriverPostgres,
			setup: []string{"CREATE TABLE t (k DOUBLE PRECISION, y REAL, kn NUMERIC, kr REAL, ki BIGINT)",
				"INSERT INTO t VALUES ('NaN', 1, 'NaN', 'NaN', 1), ('Infinity', 2, 1e400, 'Infinity', 0), ('-Infinity', 3, -1e400, '-Infinity', 9223372036854775807), ('-0', 4, -0.0, '-0', -1), (0, 5, 0.000, 0, 0), (1, 6, 1.000, 1, 1), (1e-320, 7, 1e-400, 1e-40, 2), (1.0000000000000002, 8, 1.0000000000000000000001, 1.0000001, 10), (0.1, 9, 0.1, 0.1, 5), (NULL, 10, NULL, NULL, NULL), (10, 11, 10.0000000000000000000001, 10, 10)"},
			tables: `
  - name: t
    columns:
      - {name: k, type: real, lower: 0, upper: 10, values: [0, 1, 0.1, 10, null]}
      - {name: kn, type: real, lower: 0, upper: 10, values: [0, 1, 0.1, 10, null]}
      - {name: kr, type: real, lower: 0, upper: 10, values: [0, 1, 0.1, 0.10000000149011612, 10, null]}
      - {name: ki, type: integer, lower: 0, upper: 10, values: [0, 1, 10, null]}
      - {name: y, type: real, lower: 0, upper: 100}
`,
			queries: []string{"SELECT k, COUNT(*) FROM t GROUP BY k", "SELECT kn, COUNT(*) FROM t GROUP BY kn", "SELECT kr, COUNT(*) FROM t GROUP BY kr", "SELECT ki, COUNT(*) FROM t GROUP BY ki",
				"SELECT FLOOR(kn / 5) * 5 AS b, COUNT(*) FROM t GROUP BY b", "SELECT FLOOR(kn / 3) * 3 AS b, FLOOR(k / 3) * 3 AS c, COUNT(*) FROM t GROUP BY b, c"}},
		filterCase{name: "mariadb/odd-numbers", driver: catalog.DriverMySQL,
			setup: []string{"CREATE TABLE t (k DOUBLE, y DOUBLE, kd DECIMAL(30,10), kf FLOAT, ks VARCHAR(10), ki BIGINT UNSIGNED)",
				"INSERT INTO t VALUES (-0e0, 1, -0.0, -0.0, '0', 0), (0, 2, 0.0000000001, 0.1, ' 1', 1), (1, 3, 1.0000000001, 1, '1abc', 18446744073709551615), (1e-320, 4, 1, 1e-40, 'abc', 10), (1.0000000000000002, 5, 0.1, 10, '01', 2), (0.1, 6, 9.9999999999, 9.99, '1e0', 5), (NULL, 7, NULL, NULL, NULL, NULL), (1e300, 8, 99999999999999999999.9999999999, 3e38, '1.0', 9)"},
			tables: `
  - name: t
    columns:
      - {name: k, type: real, lower: 0, upper: 10, values: [0, 1, 0.1, 10, null]}
      - {name: kd, type: integer, lower: 0, upper: 10, values: [0, 1, 10, null]}
      - {name: kf, type: real, lower: 0, upper: 10, values: [0, 1, 0.1, 0.10000000149011612, 10, null]}
      - {name: ks, type: integer, lower: 0, upper: 10, values: [0, 1, 10, null]}
      - {name: ki, type: integer, lower: 0, upper: 10, values: [0, 1, 10, null]}
      - {name: y, type: real, lower: 0, upper: 100}
`,
			queries: []string{"SELECT k, COUNT(*) FROM t GROUP BY k", "SELECT kd, COUNT(*) FROM t GROUP BY kd", "SELECT kf, COUNT(*) FROM t GROUP BY kf", "SELECT ks, COUNT(*) FROM t GROUP BY ks", "SELECT ki, COUNT(*) FROM t GROUP BY ki",
				"SELECT FLOOR(kd / 5) * 5 AS b, COUNT(*) FROM t GROUP BY b", "SELECT FLOOR(ks / 5) * 5 AS b, COUNT(*) FROM t GROUP BY b", "SELECT FLOOR(ki / 5) * 5 AS b, COUNT(*) FROM t GROUP BY b"}},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			back := filterBackend(t, c.driver)
			conn, err := back.DB().Conn(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range append([]string{map[bool]string{true: "SET SESSION sql_mode = ''", false: "SELECT 1"}[c.driver == catalog.DriverMySQL]}, c.setup...) {
				if _, err := conn.ExecContext(context.Background(), s); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
			}
			conn.Close()
			cat := filterConfig(t, c.tables)
			e := newGroupedExecutor(t, back)
			for _, q := range c.queries {
				checkGroupFilters(t, e, back, cat, q)
			}
			if c.unitTables != "" {
				unitCat := filterConfig(t, c.unitTables)
				for _, q := range c.unitQueries {
					checkGroupFilters(t, e, back, unitCat, q)
				}
			}
			for _, q := range c.run {
				qp := planGrouped(t, cat, q, 1)
				for seed := range 5 {
					if _, err := e.RunQuery(context.Background(), "a", qp, rand.NewChaCha8([32]byte{byte(seed), 5})); err != nil {
						t.Errorf("%s (seed %d): %v", q, seed, err)
					}
				}
			}
		})
	}
}
