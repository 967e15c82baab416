package main

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestFractionalSecondArguments serves a table of instants, some with
// fractions of a second (PostgreSQL TIMESTAMP, MariaDB DATETIME(6); SQLite
// text holds whole seconds only), through the real proxy, and counts at
// ε = 40 (noise scale 0.025, so a rounded count is exact) the rows between
// bounds as clients send them: time.Time arguments of server-side prepared
// statements (the binary protocol's microseconds, as JDBC's Timestamp and
// mysql2's Date arrive), and literals with a fraction of a second in text
// SQL, a zero fraction included. Each count is the backend's own exact
// comparison of the instants, fractions of the rows' own included.
func TestFractionalSecondArguments(t *testing.T) {
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	offsets := []time.Duration{0, 250 * time.Millisecond, 500 * time.Millisecond, time.Second, 1500 * time.Millisecond, 2 * time.Second, 3*time.Second + time.Microsecond}
	for _, b := range visitsBackends {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			db := testdb.Open(t, b.driver, dsn)
			typ := map[string]string{"sqlite": "TEXT", "postgres": "TIMESTAMP", "mysql": "DATETIME(6)"}[b.driver]
			if _, err := db.Exec(fmt.Sprintf("CREATE TABLE instants (at %s)", typ)); err != nil {
				t.Fatal(err)
			}
			var at []time.Time
			var vals []string
			for _, d := range offsets {
				x := base.Add(d)
				if b.driver == "sqlite" && x.Nanosecond() != 0 {
					continue // no fraction is a timestamp on SQLite
				}
				at = append(at, x)
				vals = append(vals, "('"+x.Format("2006-01-02 15:04:05.999999")+"')")
			}
			if _, err := db.Exec("INSERT INTO instants (at) VALUES " + strings.Join(vals, ", ")); err != nil {
				t.Fatal(err)
			}
			conn, remaining := doraSession(t, b, dsn, `
  - name: instants
    columns:
      - {name: at, type: timestamp, lower: "2023-12-31 00:00:00", upper: "2024-01-02 00:00:00"}
`)
			truth := func(lo, hi time.Time, closedHi bool) int {
				n := 0
				for _, x := range at {
					if !x.Before(lo) && (x.Before(hi) || closedHi && x.Equal(hi)) {
						n++
					}
				}
				return n
			}
			count := func(q string, args ...any) int {
				t.Helper()
				before := remaining()
				var n float64
				if err := conn.QueryRowContext(t.Context(), q, args...).Scan(&n); err != nil {
					t.Fatalf("%s %v: %v", q, args, err)
				}
				if spent := before - remaining(); math.Abs(spent-40) > 1e-9 {
					t.Errorf("%s spent ε = %g, want 40", q, spent)
				}
				return int(math.Round(n))
			}
			ms := func(k int) time.Time { return base.Add(time.Duration(k) * time.Millisecond) }
			for _, c := range []struct {
				lo, hi time.Time
			}{{ms(0), ms(500)}, {ms(1), ms(1000)}, {ms(250), ms(1500)}, {ms(499), ms(2001)}, {ms(1000), ms(3001)}, {base.Add(time.Microsecond), base.Add(3*time.Second + time.Microsecond)}} {
				if got, want := count("SELECT COUNT(*) FROM instants WHERE at >= ? AND at < ?", c.lo, c.hi), truth(c.lo, c.hi, false); got != want {
					t.Errorf("at in [%s, %s) with time arguments: %d rows, want %d", c.lo.Format(time.StampMicro), c.hi.Format(time.StampMicro), got, want)
				}
				lit := func(x time.Time) string { return "'" + x.Format("2006-01-02 15:04:05.000000") + "'" }
				if got, want := count("SELECT COUNT(*) FROM instants WHERE at BETWEEN "+lit(c.lo)+" AND "+lit(c.hi)), truth(c.lo, c.hi, true); got != want {
					t.Errorf("at BETWEEN %s AND %s: %d rows, want %d", lit(c.lo), lit(c.hi), got, want)
				}
			}
			// mysql2 and JDBC spell whole seconds with a zero fraction.
			if got, want := count("SELECT COUNT(*) FROM instants WHERE at >= '2024-01-01 00:00:01.000' AND at <= '2024-01-01 00:00:02.000'"), truth(ms(1000), ms(2000), true); got != want {
				t.Errorf("a zero fraction: %d rows, want %d", got, want)
			}
		})
	}
}
