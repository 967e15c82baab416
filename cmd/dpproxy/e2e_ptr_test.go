package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/dpproxy/dpproxy/internal/testdb"
	"github.com/dpproxy/dpproxy/internal/wire"
)

// loadLine creates table line(x, y) with n rows, x ~ N(50, 10²) and
// y = 2x + 10 + N(0, 5²), both clamped to the configured bounds.
func loadLine(t *testing.T, db *sql.DB, n int) {
	t.Helper()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS line"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE line (x DOUBLE PRECISION, y DOUBLE PRECISION)"); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for start := 0; start < n; start += 1000 {
		var sb strings.Builder
		sb.WriteString("INSERT INTO line (x, y) VALUES ")
		for i := start; i < min(start+1000, n); i++ {
			x := math.Min(math.Max(50+10*rng.NormFloat64(), 0), 100)
			y := math.Min(math.Max(2*x+10+5*rng.NormFloat64(), 0), 300)
			if i > start {
				sb.WriteString(", ")
			}
			fmt.Fprintf(&sb, "(%g, %g)", x, y)
		}
		if _, err := db.ExecContext(ctx, sb.String()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPTROnEveryBackend answers IQR, the PTR median, the trimmed mean and
// REGR_SLOPE/REGR_INTERCEPT on 20,000 rows of a noisy line, through the
// proxy, from SQLite, PostgreSQL and MariaDB: the values are near the
// truth (or NULL with the No Reply warning), and δ is charged; the robust
// regression R_H is refused, uncharged.
func TestPTROnEveryBackend(t *testing.T) {
	for _, b := range []struct {
		name, driver string
		dsn          func(testing.TB) string
	}{
		{"sqlite", "sqlite", func(t testing.TB) string { return filepath.Join(t.TempDir(), "line.db") }},
		{"postgres", "postgres", testdb.PostgresDSN},
		{"mariadb", "mysql", testdb.MySQLDSN},
	} {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			db, err := sql.Open(b.driver, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			loadLine(t, db, 20000)
			dir := t.TempDir()
			config := filepath.Join(dir, "dpproxy.yaml")
			yaml := fmt.Sprintf(`
backend: {driver: %s, dsn: %q}
ledger: {driver: sqlite, dsn: %q}
privacy: {default_epsilon: 1, max_epsilon: 10, default_delta: 1.0e-6, max_delta: 1.0e-4}
users:
  - {name: ana, password_hash: %q, epsilon: 100, delta: 1.0e-3}
tables:
  - name: line
    columns:
      - {name: x, type: real, lower: 0, upper: 100}
      - {name: y, type: real, lower: 0, upper: 300}
`, b.driver, dsn, filepath.Join(dir, "ledger.db"), wire.FormatNativePasswordHash(wire.NativePasswordHash("pw")))
			if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			p := startProxy(t, dir, nil, "--config", config)
			conn := p.connect(t, "ana", "pw")
			conn.SetMaxOpenConns(1)
			for _, q := range []string{"SET @dp_epsilon = 8", "SET @dp_delta = 1e-5"} {
				if _, err := conn.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			// Truth: IQR of N(50, 10²) ≈ 13.5, median 50, slope 2, intercept 10.
			// One value per statement at ε = 8. The scale S releases IQR on a
			// log grid of base 1 + 1/ln ñ ≈ 1.1 with Laplace noise of about
			// 0.4 grid steps: a factor 1.8 is 14 noise scales (failure < 1e-6).
			// The other tolerances are likewise many noise scales; ⊥ is
			// allowed (it is the mechanism's answer to unstable data).
			check := func(sql string, wants ...[2]float64) {
				t.Helper()
				cols, got := queryRow(t, conn, sql)
				for i, w := range wants {
					if math.IsNaN(got[i]) {
						t.Logf("%s: %s answered NULL (No Reply)", b.name, cols[i])
						continue
					}
					if math.Abs(got[i]-w[0]) > w[1] {
						t.Errorf("%s: %s = %v, want %v ± %v", b.name, cols[i], got[i], w[0], w[1])
					}
				}
			}
			cols, iqr := queryRow(t, conn, "SELECT IQR(x) FROM line")
			if !math.IsNaN(iqr[0]) && (iqr[0] < 13.5/1.8 || iqr[0] > 13.5*1.8) {
				t.Errorf("%s: %s = %v, want 13.5 within a factor 1.8", b.name, cols[0], iqr[0])
			}
			check("SELECT REGR_SLOPE(y, x) FROM line", [2]float64{2, 0.3})
			check("SELECT REGR_INTERCEPT(y, x) FROM line", [2]float64{10, 15})
			if _, err := conn.Exec("SET @dp_mechanism = 'ptr'"); err != nil {
				t.Fatal(err)
			}
			// The PTR median adds Lap(h/ε′) with h = s·N^(−1/3) and ε′ = 8/6
			// (a level-2 cascade, ptr.Median): s, the released IQR, is at
			// most 1.8 × 13.5 above (the IQR check), so h ≤ 0.9 and the
			// scale ≤ 0.68; ± 8 is 11.9 scales (failure < 1e-5; ± 2 failed
			// about one run in twenty).
			check("SELECT MEDIAN(x) FROM line", [2]float64{50, 8})
			if _, err := conn.Exec("SET @dp_mechanism = 'trimmed'"); err != nil {
				t.Fatal(err)
			}
			check("SELECT AVG(x) FROM line", [2]float64{50, 2})
			// R_H, the robust regression, is not available (its float
			// stability distance breaks its proof): SET refuses it, naming
			// 'ptr', before anything is read or charged.
			_, err = conn.Exec("SET @dp_mechanism = 'ptr-robust'")
			if me, ok := errors.AsType[*mysql.MySQLError](err); !ok || me.Number != 1235 || !strings.Contains(me.Message, "not available") || !strings.Contains(me.Message, "'ptr'") {
				t.Errorf("ptr-robust: got %v, want error 1235 saying it is not available and naming 'ptr'", err)
			}
			_, rem := queryRow(t, conn, "SELECT dp_remaining_delta()")
			if want := 1e-3 - 5e-5; math.Abs(rem[0]-want) > 1e-12 {
				t.Errorf("remaining δ: got %v, want %v (five statements at δ = 1e-5)", rem[0], want)
			}
		})
	}
}
