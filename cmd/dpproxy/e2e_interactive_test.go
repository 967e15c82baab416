package main

import (
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/testdb"
	"github.com/dpproxy/dpproxy/internal/wire"
)

// The interactive scenario: table visits (region text, hour integer,
// device integer) with an interactive domain region {N, S, E, W} × hour in
// buckets [0, 6), [6, 12), [12, 18), [18, 24) × device {0, 1, 2} (48
// cells), forced to the Median Mechanism at ε = 10, α = 0.1, β = 1e-3, and
// rows outside X (NULL hour, region 'X') that no count includes.
const (
	interactiveRows    = 10000
	interactiveEpsilon = 10.0
	interactiveAlpha   = 0.1
)

// visitRow is one row; hour < 0 is NULL.
type visitRow struct {
	region       string
	hour, device int
}

// visitRows draws the table from a fixed seed, skewed so the counts differ.
func visitRows() []visitRow {
	r := rand.New(rand.NewChaCha8([32]byte{'v', 'i', 's', 'i', 't', 's'}))
	regions := []string{"N", "N", "N", "S", "E", "E", "W", "X"}
	rows := make([]visitRow, interactiveRows)
	for i := range rows {
		rows[i] = visitRow{region: regions[r.IntN(len(regions))], hour: min(r.IntN(24)+r.IntN(8), 23), device: r.IntN(3) * r.IntN(2)}
		if r.IntN(40) == 0 {
			rows[i].hour = -1
		}
	}
	return rows
}

// loadVisits creates and fills the table through database/sql.
func loadVisits(t *testing.T, driver, dsn string) {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE visits (region VARCHAR(4), hour INTEGER, device INTEGER)"); err != nil {
		t.Fatal(err)
	}
	rows := visitRows()
	for start := 0; start < len(rows); start += 500 {
		var values []string
		for _, v := range rows[start:min(start+500, len(rows))] {
			hour := "NULL"
			if v.hour >= 0 {
				hour = strconv.Itoa(v.hour)
			}
			values = append(values, fmt.Sprintf("('%s', %s, %d)", v.region, hour, v.device))
		}
		if _, err := db.Exec("INSERT INTO visits (region, hour, device) VALUES " + strings.Join(values, ", ")); err != nil {
			t.Fatal(err)
		}
	}
}

// visitQuery is a random counting query: its SQL and its truth over X.
type visitQuery struct {
	sql  string
	keep func(visitRow) bool
}

// randomLeaf returns a condition that selects whole cells.
func randomLeaf(r *rand.Rand) visitQuery {
	regions := []string{"N", "S", "E", "W"}
	switch r.IntN(4) {
	case 0:
		a, b := regions[r.IntN(4)], regions[r.IntN(4)]
		return visitQuery{fmt.Sprintf("region IN ('%s', '%s')", a, b), func(v visitRow) bool { return v.region == a || v.region == b }}
	case 1:
		lo := 6 * r.IntN(4)
		hi := lo + 6*(1+r.IntN((24-lo)/6))
		return visitQuery{fmt.Sprintf("hour >= %d AND hour < %d", lo, hi), func(v visitRow) bool { return v.hour >= lo && v.hour < hi }}
	case 2:
		d := r.IntN(3)
		return visitQuery{fmt.Sprintf("device <> %d", d), func(v visitRow) bool { return v.device != d }}
	}
	h := 6*r.IntN(4) + 5
	return visitQuery{fmt.Sprintf("hour BETWEEN 0 AND %d", h), func(v visitRow) bool { return v.hour <= h }}
}

// randomVisitQuery combines two or three leaves with AND/OR and NOT.
func randomVisitQuery(r *rand.Rand) visitQuery {
	q := randomLeaf(r)
	for range 1 + r.IntN(2) {
		l := randomLeaf(r)
		if r.IntN(3) == 0 {
			inner := l.keep
			l = visitQuery{"NOT (" + l.sql + ")", func(v visitRow) bool { return !inner(v) }}
		}
		a, b := q.keep, l.keep
		if r.IntN(2) == 0 {
			q = visitQuery{"(" + q.sql + ") OR (" + l.sql + ")", func(v visitRow) bool { return a(v) || b(v) }}
		} else {
			q = visitQuery{"(" + q.sql + ") AND (" + l.sql + ")", func(v visitRow) bool { return a(v) && b(v) }}
		}
	}
	return q
}

// trueVisitCount counts the rows in X (region declared, hour not NULL)
// where the query holds.
func trueVisitCount(rows []visitRow, q visitQuery) int64 {
	var n int64
	for _, v := range rows {
		if v.region != "X" && v.hour >= 0 && q.keep(v) {
			n++
		}
	}
	return n
}

var hardUsedPattern = regexp.MustCompile(`hard queries used (\d+) of (\d+)`)

// interactiveScenario runs a long interactive session through the proxy:
// distinct random AND/OR/NOT counts until the hard-query cap refuses one
// (1226) or 400 were answered, each within α·n of the truth; the ε is
// charged once; a restart resumes the instance without paying again, and
// COUNT(*), SUM(1) is answered by it as one count.
func interactiveScenario(t *testing.T, driver, dsn string) {
	loadVisits(t, driver, dsn)
	dir := t.TempDir()
	config := filepath.Join(dir, "dpproxy.yaml")
	yaml := fmt.Sprintf(`
backend: {driver: %s, dsn: %q}
ledger: {driver: sqlite, dsn: %q}
users:
  - {name: dana, password_hash: %q, epsilon: 20, delta: 0}
tables:
  - name: visits
    epsilon: 20
    columns:
      - {name: region, type: text}
      - {name: hour, type: integer, lower: 0, upper: 23}
      - {name: device, type: integer, lower: 0, upper: 2}
    interactive:
      columns:
        - {name: region, values: [N, S, E, W]}
        - {name: hour, edges: [0, 6, 12, 18, 24]}
        - {name: device, values: [0, 1, 2]}
      epsilon: %g
      alpha: %g
      beta: 1.0e-3
      planned_queries: 500
      mechanism: median
`, driver, dsn, filepath.Join(dir, "ledger.db"), wire.FormatNativePasswordHash(wire.NativePasswordHash("dana-pw")), interactiveEpsilon, interactiveAlpha)
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, dir, nil, "--config", config)
	db := p.connect(t, "dana", "dana-pw")
	db.SetMaxOpenConns(1)

	seed := uint64(20261122)
	if s, err := strconv.ParseUint(os.Getenv("DPPROXY_TEST_SEED"), 10, 64); err == nil {
		seed = s
	}
	t.Logf("seed %d (DPPROXY_TEST_SEED)", seed)
	r := rand.New(rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16), byte(seed >> 24)}))
	rows := visitRows()
	var n int64
	for _, v := range rows {
		if v.region != "X" && v.hour >= 0 {
			n++
		}
	}
	// The mechanism's guarantee: every one of the first planned_queries
	// answers is within α·n̂ rows with probability ≥ 1 − β = 1 − 1e-3 (the
	// noise is the proxy's own, from crypto/rand); |n̂ − n| is a few rows at
	// ε_n = 0.3, which the slack of 2% of n covers with room to spare.
	tolerance := (interactiveAlpha + 0.02) * float64(n)
	seen := map[string]int64{}
	var first, refusedSQL, seenSQL string
	answered, refused, hardUsed := 0, false, 0
	for len(seen) < 400 {
		q := randomVisitQuery(r)
		if _, dup := seen[q.sql]; dup {
			continue
		}
		text := "SELECT COUNT(*) FROM visits WHERE " + q.sql
		var got int64
		err := db.QueryRow(text).Scan(&got)
		if mysqlCode(err) == 1226 {
			refused, refusedSQL = true, text
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		seen[q.sql], seenSQL = got, text
		answered++
		if want := trueVisitCount(rows, q); math.Abs(float64(got-want)) > tolerance {
			t.Errorf("%s: got %d, want %d ± %.0f", text, got, want, tolerance)
		}
		if strings.Contains(strings.Join(sessionWarnings(t, db), "\n"), "selects no row whatever the data") {
			// Contradictory ranges on one column: 0 from the statement
			// alone, not from the instance.
			if got != 0 {
				t.Errorf("%s: got %d, want 0 exactly", text, got)
			}
			continue
		}
		if m := hardUsedPattern.FindStringSubmatch(strings.Join(sessionWarnings(t, db), "\n")); m != nil {
			hardUsed, _ = strconv.Atoi(m[1])
		} else {
			t.Fatalf("%s: no hard-query count in the warnings %q", text, sessionWarnings(t, db))
		}
		if first == "" {
			first = text
			checkRemaining(t, db, 20-interactiveEpsilon)
		}
	}
	t.Logf("answered %d distinct counts, %d hard; cap reached: %v", answered, hardUsed, refused)
	if answered < 20 {
		t.Errorf("answered %d queries before the cap, want a long session (≥ 20)", answered)
	}
	checkRemaining(t, db, 20-interactiveEpsilon)
	if refused {
		// The refused query is refused again; an answered one is repeated.
		var n int64
		if err := db.QueryRow(refusedSQL).Scan(&n); mysqlCode(err) != 1226 {
			t.Errorf("after the cap, %s: got %v, want 1226", refusedSQL, err)
		}
		if err := db.QueryRow(seenSQL).Scan(&n); err != nil || n != seen[strings.TrimPrefix(seenSQL, "SELECT COUNT(*) FROM visits WHERE ")] {
			t.Errorf("after the cap, %s: got %d, %v, want the earlier answer", seenSQL, n, err)
		}
	}

	// A restart resumes the stored instance: no new charge, at least the
	// hard answers seen before.
	p.stop(9)
	p = startProxy(t, dir, nil, "--config", config)
	db = p.connect(t, "dana", "dana-pw")
	db.SetMaxOpenConns(1)
	var again int64
	if err := db.QueryRow(first).Scan(&again); err != nil {
		t.Fatalf("after restart, %s: %v", first, err)
	}
	if m := hardUsedPattern.FindStringSubmatch(strings.Join(sessionWarnings(t, db), "\n")); m == nil {
		t.Errorf("after restart: no hard-query count in the warnings")
	} else if h, _ := strconv.Atoi(m[1]); h < hardUsed {
		t.Errorf("after restart: %d hard queries used, want ≥ %d", h, hardUsed)
	}
	// The count spelled twice (COUNT(*) and SUM(1)) is the same count,
	// answered by the instance, free.
	var counted, summed int64
	twice := strings.Replace(first, "COUNT(*)", "COUNT(*), SUM(1)", 1)
	if err := db.QueryRow(twice).Scan(&counted, &summed); err != nil || counted != again || summed != again {
		t.Errorf("%s: got %d, %d, %v; want the instance's %d twice", twice, counted, summed, err, again)
	}
	checkRemaining(t, db, 20-interactiveEpsilon)
}

// TestInteractiveOnSQLite, TestInteractiveOnPostgres and
// TestInteractiveOnMariaDB run the interactive session on each backend.
func TestInteractiveOnSQLite(t *testing.T) {
	interactiveScenario(t, "sqlite", filepath.Join(t.TempDir(), "data.db"))
}

func TestInteractiveOnPostgres(t *testing.T) {
	interactiveScenario(t, "postgres", testdb.PostgresDSN(t))
}

func TestInteractiveOnMariaDB(t *testing.T) {
	interactiveScenario(t, "mysql", testdb.MySQLDSN(t))
}
