// Command load measures dpproxy's throughput: it loads the demo's census
// table (1,000 rows) into a backend, starts the real dpproxy binary in
// front of it with one analyst, and has 1 and 32 clients (go-sql-driver,
// one connection each) send private COUNT(*) statements for a fixed time,
// every statement distinct (its WHERE constant is a global counter) so that
// no answer can come from a cache. The same statements, in the backend's
// own exact form, are sent to the backend directly for comparison. Runs
// alternate (proxy 1, proxy 32, exact 1, exact 32, and again) so that the
// load of other processes on the machine hits both sides alike; the report
// gives each run and the medians. From the repository root:
//
//	go run ./bench/cmd/load -seconds 20 -out bench/RESULTS-load.md
//
// The backend and ledger default to PostgreSQL databases named by
// DPPROXY_TEST_POSTGRES_DSN; -ledger sqlite uses a fresh SQLite file.
// -cpuprofile FILE writes the proxy's CPU profile of all runs. -prepared
// has each client prepare the statement once (COM_STMT_PREPARE; on the
// exact side the backend's own prepared statement) and execute it with k
// as its argument.
package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	_ "github.com/go-sql-driver/mysql"
	_ "github.com/lib/pq"
	_ "modernc.org/sqlite"

	"github.com/dpproxy/dpproxy/internal/demo"
	"github.com/dpproxy/dpproxy/internal/wire"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

type options struct {
	backendDriver, backendDSN string
	ledgerDriver, ledgerDSN   string
	seconds                   float64
	clients                   []int
	rounds                    int
	out                       string
	cpuprofile                string
	prepared                  bool
}

func run() error {
	var o options
	defaultDSN := os.Getenv("DPPROXY_TEST_POSTGRES_DSN")
	if defaultDSN == "" {
		defaultDSN = "postgres://postgres@127.0.0.1:5432/dpproxy_bench?sslmode=disable"
	}
	flag.StringVar(&o.backendDriver, "backend", "postgres", "backend driver: postgres, mysql or sqlite")
	flag.StringVar(&o.backendDSN, "backend-dsn", defaultDSN, "backend data source name (the table pums_load is replaced)")
	flag.StringVar(&o.ledgerDriver, "ledger", "postgres", "ledger driver: postgres, mysql or sqlite (sqlite: a fresh file)")
	flag.StringVar(&o.ledgerDSN, "ledger-dsn", "", "ledger data source name (default: the backend's database; for sqlite a temporary file)")
	flag.Float64Var(&o.seconds, "seconds", 20, "length of each run")
	clients := flag.String("clients", "1,32", "client counts, comma-separated")
	flag.IntVar(&o.rounds, "rounds", 2, "how often the runs alternate")
	flag.StringVar(&o.out, "out", "", "markdown file to write the report to (default: stdout only)")
	flag.StringVar(&o.cpuprofile, "cpuprofile", "", "write the proxy's CPU profile here")
	flag.BoolVar(&o.prepared, "prepared", false, "prepare the statement once per client and execute it with k as its argument")
	flag.Parse()
	for _, c := range strings.Split(*clients, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil || n < 1 {
			return fmt.Errorf("-clients: bad count %q", c)
		}
		o.clients = append(o.clients, n)
	}
	ctx := context.Background()
	work, err := os.MkdirTemp("", "dpproxy-load")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if o.ledgerDSN == "" {
		switch o.ledgerDriver {
		case "sqlite":
			o.ledgerDSN = filepath.Join(work, "ledger.db")
		case o.backendDriver:
			o.ledgerDSN = o.backendDSN
		default:
			return errors.New("-ledger-dsn is needed when the ledger's driver differs from the backend's")
		}
	}

	backendDB, err := sql.Open(o.backendDriver, o.backendDSN)
	if err != nil {
		return err
	}
	defer backendDB.Close()
	if err := demo.LoadPUMS(ctx, backendDB, o.backendDriver, table); err != nil {
		return err
	}
	if o.ledgerDriver != "sqlite" {
		if err := dropLedger(ctx, o.ledgerDriver, o.ledgerDSN); err != nil {
			return err
		}
	}

	proxy, err := startProxy(ctx, work, o)
	if err != nil {
		return err
	}
	defer proxy.stop()
	proxyDB, err := sql.Open("mysql", "bench:bench@tcp("+proxy.addr+")/dpproxy")
	if err != nil {
		return err
	}
	defer proxyDB.Close()

	var results []result
	var counter atomic.Int64
	for round := 0; round < o.rounds; round++ {
		for _, side := range []string{"dpproxy", "exact"} {
			for _, n := range o.clients {
				db, query := proxyDB, "SELECT COUNT(*) FROM "+table+" WHERE income > %d"
				if side == "exact" {
					db = backendDB
				}
				if o.prepared {
					query = "SELECT COUNT(*) FROM " + table + " WHERE income > ?"
					if side == "exact" && o.backendDriver == "postgres" {
						query = "SELECT COUNT(*) FROM " + table + " WHERE income > $1"
					}
				}
				r, err := measure(ctx, db, n, time.Duration(o.seconds*float64(time.Second)), query, o.prepared, &counter)
				if err != nil {
					return fmt.Errorf("%s, %d clients: %w (proxy log:\n%s)", side, n, err, proxy.logs.String())
				}
				r.side, r.round = side, round+1
				fmt.Printf("round %d %-8s %2d clients: %8.1f q/s  p50 %7.2f ms  p99 %7.2f ms  (%d queries)\n",
					r.round, side, n, r.qps, ms(r.p50), ms(r.p99), r.queries)
				results = append(results, r)
			}
		}
	}
	if err := proxy.stop(); err != nil {
		return err
	}
	report := render(o, results)
	fmt.Print(report)
	if o.out != "" {
		return os.WriteFile(o.out, []byte(report), 0o644)
	}
	return nil
}

// table is the backend table the benchmark creates.
const table = "pums_load"

// dropLedger removes the ledger tables, those of older schema versions
// and their stand-ins included, so every benchmark starts from an empty
// ledger.
func dropLedger(ctx context.Context, driver, dsn string) error {
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, t := range []string{"dpproxy_reservation_accounts", "dpproxy_reservations", "dpproxy_accounts_v3", "dpproxy_state_v3", "dpproxy_accounts", "dpproxy_state", "dpproxy_meta"} {
		if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+t); err != nil {
			return err
		}
	}
	return nil
}

// proxyProcess is the running dpproxy.
type proxyProcess struct {
	cmd     *exec.Cmd
	addr    string
	logs    *syncBuffer
	stopped bool
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startProxy builds dpproxy, writes its configuration (one analyst with an
// unlimited budget; the table with no synopsis or interactive domain, so
// that every statement is planned, charged and read on its own) and starts it.
func startProxy(ctx context.Context, work string, o options) (*proxyProcess, error) {
	bin := filepath.Join(work, "dpproxy")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/dpproxy")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("building dpproxy (run from the repository root): %w", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	hash := wire.FormatNativePasswordHash(wire.NativePasswordHash("bench"))
	config := fmt.Sprintf(`listen: %q
max_connections: 256
backend: {driver: %s, dsn: %q}
ledger: {driver: %s, dsn: %q}
privacy: {default_epsilon: 0.1, max_epsilon: 10}
users: [{name: bench, password_hash: %q, epsilon: 1.0e+9, delta: 1.0e-3}]
tables:
  - name: %s
    columns:
      - {name: age, type: integer, lower: 0, upper: 100}
      - {name: income, type: real, lower: 0, upper: 500000}
`, addr, o.backendDriver, o.backendDSN, o.ledgerDriver, o.ledgerDSN, hash, table)
	path := filepath.Join(work, "dpproxy.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		return nil, err
	}
	args := []string{"--config", path, "--log-level", "warn"}
	if o.cpuprofile != "" {
		abs, err := filepath.Abs(o.cpuprofile)
		if err != nil {
			return nil, err
		}
		args = append(args, "--cpuprofile", abs)
	}
	p := &proxyProcess{cmd: exec.Command(bin, args...), addr: addr, logs: &syncBuffer{}}
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return p, nil
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("dpproxy did not start: %s", p.logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop ends the proxy with SIGINT (so that it writes its profile) and waits.
func (p *proxyProcess) stop() error {
	if p.stopped {
		return nil
	}
	p.stopped = true
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("dpproxy: %w: %s", err, p.logs.String())
		}
		return nil
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		return errors.New("dpproxy did not stop within 30 s")
	}
}

// result is one run.
type result struct {
	side     string
	round    int
	clients  int
	queries  int
	qps      float64
	p50, p99 time.Duration
}

// measure has n clients, each on a connection of its own, send statements
// for d and returns the throughput and latency quantiles. Every statement is
// query with a fresh value of counter: formatted into it, or, if prepared,
// as the argument of query prepared once per client.
func measure(ctx context.Context, db *sql.DB, n int, d time.Duration, query string, prepared bool, counter *atomic.Int64) (result, error) {
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	conns := make([]*sql.Conn, n)
	for i := range conns {
		c, err := db.Conn(ctx)
		if err != nil {
			return result{}, err
		}
		defer c.Close()
		conns[i] = c
	}
	stmts := make([]*sql.Stmt, n)
	if prepared {
		for i, c := range conns {
			st, err := c.PrepareContext(ctx, query)
			if err != nil {
				return result{}, err
			}
			defer st.Close()
			stmts[i] = st
		}
	}
	latencies := make([][]time.Duration, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := time.Now()
	stop := start.Add(d)
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				k := counter.Add(1)
				t0 := time.Now()
				var row *sql.Row
				if prepared {
					row = stmts[i].QueryRowContext(ctx, k)
				} else {
					row = c.QueryRowContext(ctx, fmt.Sprintf(query, k))
				}
				var v sql.NullFloat64
				if err := row.Scan(&v); err != nil {
					errs[i] = err
					return
				}
				latencies[i] = append(latencies[i], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return result{}, err
	}
	all := slices.Concat(latencies...)
	slices.Sort(all)
	if len(all) == 0 {
		return result{}, errors.New("no statement completed")
	}
	return result{
		clients: n,
		queries: len(all),
		qps:     float64(len(all)) / elapsed.Seconds(),
		p50:     all[len(all)/2],
		p99:     all[min(len(all)-1, len(all)*99/100)],
	}, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// render writes the report: every run, then the median per side and
// client count, and the proxy's throughput as a fraction of the exact one.
func render(o options, results []result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Throughput (bench/cmd/load)\n\n")
	prepared, how := "", ""
	if o.prepared {
		prepared, how = " -prepared", " (prepared once per client, k its argument)"
	}
	fmt.Fprintf(&b, "`go run ./bench/cmd/load -backend %s -ledger %s -seconds %g -rounds %d%s` (%s): %d-row demo table, private `SELECT COUNT(*) FROM %s WHERE income > k` with k distinct per statement%s, one analyst, ε = 0.1 each; exact = the same statements sent to the backend directly. Machine: 2 cores shared with other work, load average at start %s; compare ratios within one run, not absolute numbers across runs.\n\n",
		o.backendDriver, o.ledgerDriver, o.seconds, o.rounds, prepared, time.Now().UTC().Format("2006-01-02 15:04 UTC"), len(demo.PUMS()), table, how, loadAverage())
	b.WriteString("| side | clients | round | q/s | p50 ms | p99 ms | statements |\n|---|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %s | %d | %d | %.0f | %.2f | %.2f | %d |\n", r.side, r.clients, r.round, r.qps, ms(r.p50), ms(r.p99), r.queries)
	}
	b.WriteString("\nMedians over rounds:\n\n| clients | dpproxy q/s | exact q/s | dpproxy / exact | dpproxy p50 ms | dpproxy p99 ms |\n|--:|--:|--:|--:|--:|--:|\n")
	for _, n := range o.clients {
		var pq, eq, p50, p99 []float64
		for _, r := range results {
			if r.clients != n {
				continue
			}
			if r.side == "exact" {
				eq = append(eq, r.qps)
				continue
			}
			pq, p50, p99 = append(pq, r.qps), append(p50, ms(r.p50)), append(p99, ms(r.p99))
		}
		fmt.Fprintf(&b, "| %d | %.0f | %.0f | %.3f | %.2f | %.2f |\n", n, median(pq), median(eq), median(pq)/median(eq), median(p50), median(p99))
	}
	return b.String()
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}
