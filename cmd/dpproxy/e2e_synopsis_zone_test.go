package main

import (
	"fmt"
	"math"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestSynopsisKeyedByBackendZone (an independent review's finding): a
// synopsis whose predicate restricts a column with a time zone
// (PostgreSQL timestamptz, MariaDB TIMESTAMP) is built anew, and paid
// once, by a proxy restarted on the same ledger with another
// backend.time_zone, where the predicate selects other instants: 180 rows
// whose wall-clock time is then six hours past the bound, counted 0 in UTC
// and 180 at '+12:00'. Before the fix the second proxy answered from the
// UTC synopsis (0). Synopses whose rows no such column selects (none, or a
// column without a time zone) keep their key: the second proxy reads them
// at no cost.
func TestSynopsisKeyedByBackendZone(t *testing.T) {
	for _, b := range visitsBackends[1:] {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			create, tz := "CREATE TABLE ev3 (x INTEGER, tz TIMESTAMPTZ, d TIMESTAMP)", "now() - interval '1 hour'"
			if b.driver == "mysql" {
				create, tz = "CREATE TABLE ev3 (x INTEGER, tz TIMESTAMP NULL, d DATETIME)", "NOW() - INTERVAL 1 HOUR"
			}
			rows := make([]string, 360)
			for i := range rows {
				rows[i] = fmt.Sprintf("(%d, %s, '2020-06-01 00:00:00')", i%10, tz)
			}
			direct := testdb.Open(t, b.driver, dsn)
			for _, q := range []string{create, "INSERT INTO ev3 (x, tz, d) VALUES " + strings.Join(rows, ", ")} {
				if _, err := direct.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			now := time.Now().UTC()
			tables := fmt.Sprintf("  - name: ev3\n    epsilon: 100\n    columns:\n"+
				"      - {name: x, type: integer, lower: 0, upper: 9, histogram: {epsilon: 5}}\n"+
				"      - {name: tz, type: timestamp, lower: %q, upper: %q}\n"+
				"      - {name: d, type: timestamp, lower: \"2020-01-01\", upper: \"2021-01-01\"}\n",
				now.Add(-48*time.Hour).Format(time.DateTime), now.Add(48*time.Hour).Format(time.DateTime))
			zoned := fmt.Sprintf("SELECT COUNT(*) FROM ev3 WHERE x < 5 AND tz >= '%s'", now.Add(6*time.Hour).Format(time.DateTime))
			naive := "SELECT COUNT(*) FROM ev3 WHERE x < 5 AND d >= '2020-03-01'"
			plain := "SELECT COUNT(*) FROM ev3 WHERE x < 5"
			dir := t.TempDir()
			for _, c := range []struct {
				zone   string
				counts map[string]float64
				built  map[string]bool
			}{
				{"", map[string]float64{zoned: 0, naive: 180, plain: 180}, map[string]bool{zoned: true, naive: true, plain: true}},
				{"+12:00", map[string]float64{zoned: 180, naive: 180, plain: 180}, map[string]bool{zoned: true, naive: false, plain: false}},
			} {
				config := carolConfig(t, dir, "dpproxy.yaml", fmt.Sprintf("driver: %s, dsn: %q, time_zone: %q", b.driver, dsn, c.zone),
					"{default_epsilon: 1, max_epsilon: 50}", "epsilon: 1000, delta: 1.0e-5", tables)
				p := startProxy(t, dir, nil, "--config", config)
				conn, err := p.connect(t, "carol", "carol-pw").Conn(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				for _, q := range []string{zoned, naive, plain} {
					var got float64
					if err := conn.QueryRowContext(t.Context(), q).Scan(&got); err != nil {
						t.Fatalf("%s in %q: %v", q, c.zone, err)
					}
					notes := strings.Join(warnings(t, conn), "\n")
					builtNow := strings.Contains(notes, "synopsis built now by this statement")
					if math.Abs(got-c.counts[q]) > 30 || builtNow != c.built[q] || !builtNow && !strings.Contains(notes, "no budget spent") {
						t.Errorf("%s in %q: %g, built now %v (%s); want about %g, built now %v", q, c.zone, got, builtNow, notes, c.counts[q], c.built[q])
					}
				}
				conn.Close()
				p.stop(syscall.SIGTERM)
			}
		})
	}
}
