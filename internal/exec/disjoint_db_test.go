package exec

import (
	"context"
	"testing"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestDisjointPartsShareNoRowOnDatabases: parts the planner composes in
// parallel (QueryPlan.Disjoint) must share no row on the real backend,
// since each spends the statement's whole ε. Each case holds rows at the
// edges where the backend's comparison may differ from the proxy's: on
// MariaDB a BIGINT beyond 2⁵³, which a list mixing integer and double
// literals compares as a double (2⁵³+1 equals 2⁵³ there), so such lists
// are not composed; on PostgreSQL a timestamptz read in a zone with
// daylight saving, where a clock time in the spring-forward gap (02:30)
// would convert to a later instant than one after it (03:15) and two
// ranges disjoint on the clock would share the rows in between, so
// comparisons read the wall clock. For each case the test checks whether
// the plan composes in parallel as expected and, on the real database,
// that the parts' row sets do not overlap.
func TestDisjointPartsShareNoRowOnDatabases(t *testing.T) {
	timestamps := func() (lo, hi float64) {
		col := catalog.Column{Type: catalog.Timestamp}
		lo, _ = col.ParseTemporal("2020-01-01 00:00:00")
		hi, _ = col.ParseTemporal("2030-01-01 00:00:00")
		return lo, hi
	}
	cases := []struct {
		name     string
		driver   string
		open     func(t *testing.T) *backend.Backend
		setup    []string
		column   catalog.Column
		query    string
		disjoint bool
	}{
		{
			name:   "mariadb bigint beyond 2^53",
			driver: catalog.DriverMySQL,
			open:   func(t *testing.T) *backend.Backend { return backend.New(testdb.MySQL(t), sqlrewrite.MySQL, nil) },
			setup: []string{"CREATE TABLE t (b BIGINT)",
				"INSERT INTO t VALUES (9007199254740993), (9007199254740992), (1), (2)"},
			column: func() catalog.Column {
				lo, hi := 0.0, 1e19
				return catalog.Column{Name: "b", Source: "b", Type: catalog.Integer, Lower: &lo, Upper: &hi}
			}(),
			query: "SELECT COUNT(CASE WHEN b > 9007199254740992 THEN 1 END), COUNT(CASE WHEN b IN (9007199254740992, 1) THEN 1 END) FROM t",
		},
		{
			name:   "mariadb bigint below 2^53",
			driver: catalog.DriverMySQL,
			open:   func(t *testing.T) *backend.Backend { return backend.New(testdb.MySQL(t), sqlrewrite.MySQL, nil) },
			setup: []string{"CREATE TABLE t (b BIGINT)",
				"INSERT INTO t VALUES (4503599627370497), (4503599627370496), (1), (2)"},
			column: func() catalog.Column {
				lo, hi := 0.0, 1e19
				return catalog.Column{Name: "b", Source: "b", Type: catalog.Integer, Lower: &lo, Upper: &hi}
			}(),
			query:    "SELECT COUNT(CASE WHEN b > 4503599627370496 THEN 1 END), COUNT(CASE WHEN b IN (4503599627370496, 1) THEN 1 END) FROM t",
			disjoint: true,
		},
		{
			name:   "postgres timestamptz half hours across a DST gap",
			driver: catalog.DriverPostgres,
			open: func(t *testing.T) *backend.Backend {
				db, err := backend.OpenDB("postgres", testdb.PostgresDSN(t), "America/New_York")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				return backend.New(db, sqlrewrite.PostgreSQL, nil)
			},
			setup: []string{"CREATE TABLE t (ts TIMESTAMPTZ)",
				"INSERT INTO t VALUES ('2024-03-10 07:10:00+00'), ('2024-03-10 07:20:00+00'), ('2024-03-10 06:50:00+00')"},
			column: func() catalog.Column {
				lo, hi := timestamps()
				return catalog.Column{Name: "ts", Source: "ts", Type: catalog.Timestamp, Lower: &lo, Upper: &hi}
			}(),
			query: "SELECT COUNT(CASE WHEN ts >= '2024-03-10 02:00:00' AND ts < '2024-03-10 02:30:00' THEN 1 END), " +
				"COUNT(CASE WHEN ts >= '2024-03-10 03:00:00' AND ts < '2024-03-10 03:30:00' THEN 1 END), " +
				"COUNT(CASE WHEN ts <= '2024-03-10 01:55:00' THEN 1 END) FROM t",
			disjoint: true,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			back := c.open(t)
			for _, s := range c.setup {
				if _, err := back.DB().Exec(s); err != nil {
					t.Fatal(err)
				}
			}
			cat := &catalog.Config{Backend: catalog.Database{Driver: c.driver}, Tables: []catalog.Table{{Name: "t", Source: "t", Columns: []catalog.Column{c.column}}}}
			qp := planGrouped(t, cat, c.query, 1)
			if qp.Disjoint != c.disjoint {
				t.Fatalf("Disjoint = %v, want %v", qp.Disjoint, c.disjoint)
			}
			ctx := context.Background()
			snap, err := back.Snapshot(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			defer snap.Close()
			terms := []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}}
			total, err := snap.Summary(ctx, sqlrewrite.Fetch{Table: "t", Summary: terms})
			if err != nil {
				t.Fatal(err)
			}
			inParts := 0.0
			for j, part := range qp.Parts {
				n, err := snap.Summary(ctx, sqlrewrite.Fetch{Table: "t", Filter: part.Plan.Filter, Summary: terms})
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("part %d selects %g rows", j+1, n[0])
				inParts += n[0]
			}
			if inParts == 0 {
				t.Fatal("no part selects a row: the case has no power")
			}
			if qp.Disjoint && inParts > total[0] {
				t.Errorf("the parts composed in parallel select %g rows of %g: a row is in two parts", inParts, total[0])
			}
		})
	}
}
