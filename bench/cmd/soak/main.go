// Command soak runs dpproxy under load while it injects faults, and checks
// the ledger afterwards. From the repository root:
//
//	go run ./bench/cmd/soak -clients 8 -seconds 120
//
// It builds dpproxy, starts a private PostgreSQL (initdb into a temporary
// directory, pg_ctl on -pg-port) and a private MariaDB (mariadb-install-db,
// mariadbd on -mariadb-port), never the machine's shared servers, and for
// each backend in turn (-backends) serves the demo table from it for
// -seconds while -clients clients send private statements (ε = 0.1 each)
// and a chaos loop, every few seconds, either kills the proxy with SIGKILL
// and restarts it, or crashes the backend (PostgreSQL's immediate stop,
// SIGKILL for MariaDB) and restarts it, or both. Half the users have a
// budget of ε = 3, which they exhaust, so that concurrent clients of one
// user race at the limit; the other half, and the probe that measures
// recovery, have plenty.
//
// Then it checks, and exits non-zero unless all hold:
//   - no overspent budget: every ledger account's ε and δ used is at most its limit;
//   - the ledger is consistent: each account's ε used is the sum of its reservations not cancelled;
//   - no uncharged answer: each user's ε used is at least 0.1 × the answers its clients received;
//   - full recovery: after every fault the probe got an answer within -recovery.
//
// With -oom it instead holds the proxy to a memory limit (GOMEMLIMIT and an
// address-space limit through prlimit) while hostile connections arrive, and
// checks that valid clients are served throughout and the proxy survives.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "modernc.org/sqlite"
)

// statementEpsilon is what each private statement costs (the configured
// default ε; the clients never SET it).
const statementEpsilon = 0.1

// smallBudget is the ε of the users meant to run out.
const smallBudget = 3.0

// statements are what the clients send, in turn.
var statements = []string{
	"SELECT COUNT(*) FROM pums WHERE age < 40",
	"SELECT AVG(income) FROM pums",
	"SELECT MEDIAN(age) FROM pums",
	"SELECT SUM(income), COUNT(*) FROM pums WHERE sex = 1",
	"SELECT VARIANCE(income) FROM pums WHERE age BETWEEN 20 AND 60",
}

type options struct {
	clients, seconds                      int
	backends                              string
	binary                                string
	pgBin                                 string
	pgPort, mariadbPort                   int
	recovery                              time.Duration
	keep                                  bool
	oom                                   bool
	oomHostile, oomMemMiB, oomBufferedMiB int
	oomAddressSpaceMiB                    int
}

func main() {
	var o options
	flag.IntVar(&o.clients, "clients", 8, "concurrent clients")
	flag.IntVar(&o.seconds, "seconds", 60, "seconds of load per backend")
	flag.StringVar(&o.backends, "backends", "postgres,mariadb", "backends to soak, in order")
	flag.StringVar(&o.binary, "binary", "", "dpproxy binary (default: go build ./cmd/dpproxy)")
	flag.StringVar(&o.pgBin, "pg-bin", "/usr/lib/postgresql/15/bin", "directory of initdb and pg_ctl")
	flag.IntVar(&o.pgPort, "pg-port", 55432, "port of the private PostgreSQL")
	flag.IntVar(&o.mariadbPort, "mariadb-port", 53306, "port of the private MariaDB")
	flag.DurationVar(&o.recovery, "recovery", 60*time.Second, "longest acceptable time from a fault's end to the next answer")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory (logs, ledger)")
	flag.BoolVar(&o.oom, "oom", false, "run the out-of-memory guard test instead of the soak")
	flag.IntVar(&o.oomHostile, "oom-hostile", 200, "hostile connections at once in -oom")
	flag.IntVar(&o.oomMemMiB, "oom-gomemlimit", 128, "GOMEMLIMIT of the proxy in -oom, MiB")
	flag.IntVar(&o.oomAddressSpaceMiB, "oom-as", 4096, "address-space limit (prlimit --as) of the proxy in -oom, MiB (Go reserves address space well beyond its heap: 2048 failed thread creation at 13 threads)")
	flag.IntVar(&o.oomBufferedMiB, "oom-buffered", 64, "max_buffered_bytes of the proxy in -oom, MiB")
	flag.Parse()
	_ = mysql.SetLogger(log.New(io.Discard, "", 0)) // the clients' connection errors are counted, not logged
	if err := runMain(o); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

func runMain(o options) error {
	dir, err := os.MkdirTemp("", "dpproxy-soak")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Println("temporary directory:", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	if o.binary == "" {
		o.binary = filepath.Join(dir, "dpproxy")
		build := exec.Command("go", "build", "-o", o.binary, "github.com/dpproxy/dpproxy/cmd/dpproxy")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("building dpproxy: %w", err)
		}
	}
	if o.oom {
		return oomGuard(o, dir)
	}
	return soak(o, dir)
}

// run is the state of one soak run.
type soakRun struct {
	o      options
	dir    string
	users  []string
	ledger string

	mu       sync.Mutex
	answers  map[string]int // per user, answers received in full
	outcomes map[string]int // "answer", "error 1226", "connection", …
	events   []event
}

// event is one injected fault and how long the proxy took to answer again.
type event struct {
	backend, kind string
	recovery      time.Duration
}

func (r *soakRun) count(user, outcome string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.outcomes[outcome]++
	if outcome == "answer" {
		r.answers[user]++
	}
}

func soak(o options, dir string) error {
	r := &soakRun{o: o, dir: dir, ledger: filepath.Join(dir, "ledger.db"),
		answers: map[string]int{}, outcomes: map[string]int{}}
	for i := range max(1, o.clients/2) {
		r.users = append(r.users, fmt.Sprintf("u%d", i))
	}
	for _, name := range strings.Split(o.backends, ",") {
		var db database
		var err error
		switch name {
		case "postgres":
			db, err = newPostgres(o.pgBin, filepath.Join(dir, "pg"), o.pgPort)
		case "mariadb":
			db, err = newMariaDB(filepath.Join(dir, "mariadb"), o.mariadbPort)
		default:
			err = fmt.Errorf("unknown backend %q", name)
		}
		if err != nil {
			return fmt.Errorf("starting %s: %w", name, err)
		}
		err = r.phase(db)
		db.close()
		if err != nil {
			return err
		}
	}
	return r.report()
}

// config writes the proxy's configuration for backend db.
func (r *soakRun) config(db database) (string, error) {
	var users strings.Builder
	fmt.Fprintf(&users, "  - {name: probe, password_hash: %q, epsilon: 1000000, delta: 0.5}\n", nativeHash("pw"))
	for i, u := range r.users {
		eps := 1000000.0
		if i%2 == 0 {
			eps = smallBudget
		}
		fmt.Fprintf(&users, "  - {name: %s, password_hash: %q, epsilon: %g, delta: 0.001}\n", u, nativeHash("pw"), eps)
	}
	yaml := fmt.Sprintf(`backend: {driver: %s, dsn: %q}
ledger: {driver: sqlite, dsn: %q}
privacy: {default_epsilon: %g, max_epsilon: 10, default_delta: 1.0e-7, max_delta: 1.0e-4}
timeouts: {statement: 5s, handshake: 5s}
users:
%stables:
  - name: pums
    epsilon: 1000000000
    delta: 0.5
    columns:
      - {name: age, type: integer, lower: 0, upper: 100}
      - {name: sex, type: integer, lower: 0, upper: 1}
      - {name: educ, type: integer, lower: 1, upper: 16}
      - {name: race, type: integer, lower: 1, upper: 6}
      - {name: income, type: real, lower: 0, upper: 500000}
      - {name: married, type: integer, lower: 0, upper: 1}
`, db.driver(), db.dsn(), r.ledger, statementEpsilon, users.String())
	path := filepath.Join(r.dir, "dpproxy-"+db.name()+".yaml")
	return path, os.WriteFile(path, []byte(yaml), 0o600)
}

// phase soaks the proxy on one backend.
func (r *soakRun) phase(db database) error {
	if out, err := exec.Command(r.o.binary, "load-demo", "--driver", db.driver(), "--dsn", db.dsn()).CombinedOutput(); err != nil {
		return fmt.Errorf("load-demo into %s: %w\n%s", db.name(), err, out)
	}
	config, err := r.config(db)
	if err != nil {
		return err
	}
	logFile, err := os.Create(filepath.Join(r.dir, "proxy-"+db.name()+".log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	p := &proxy{binary: r.o.binary, dir: r.dir, addr: freeAddr(), args: []string{"--config", config}, log: logFile}
	if err := p.start(); err != nil {
		return err
	}
	defer p.signal(syscall.SIGTERM)
	if err := p.listening(60 * time.Second); err != nil {
		return err
	}
	fmt.Printf("== %s: %d clients for %ds, proxy on %s\n", db.name(), r.o.clients, r.o.seconds, p.addr)

	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(r.o.seconds)*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for i := range r.o.clients {
		user := r.users[i%len(r.users)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.client(ctx, p.addr, user, i)
		}()
	}
	probe := openClient(p.addr, "probe")
	defer probe.Close()
	chaosErr := r.chaos(ctx, db, p, probe)
	wg.Wait()
	if chaosErr != nil {
		return chaosErr
	}
	// Full recovery: with the faults over, the proxy answers again.
	start := time.Now()
	if err := r.answerWithin(probe, r.o.recovery); err != nil {
		return fmt.Errorf("%s: no answer after the last fault: %w", db.name(), err)
	}
	r.mu.Lock()
	r.events = append(r.events, event{db.name(), "final", time.Since(start)})
	r.mu.Unlock()
	return nil
}

// openClient is a pool of one connection for user.
func openClient(addr, user string) *sql.DB {
	db, err := sql.Open("mysql", fmt.Sprintf("%s:pw@tcp(%s)/dpproxy?timeout=2s&readTimeout=20s&writeTimeout=5s", user, addr))
	if err != nil {
		panic(err) // only a malformed DSN fails here
	}
	db.SetMaxOpenConns(1)
	return db
}

// client sends statements until ctx ends.
func (r *soakRun) client(ctx context.Context, addr, user string, i int) {
	db := openClient(addr, user)
	defer db.Close()
	for n := i; ctx.Err() == nil; n++ {
		outcome := query(ctx, db, statements[n%len(statements)])
		if ctx.Err() != nil && outcome != "answer" {
			return // cut off by the end of the phase
		}
		r.count(user, outcome)
		if outcome != "answer" {
			time.Sleep(time.Duration(50+rand.IntN(200)) * time.Millisecond)
		}
	}
}

// query runs q and reads every row: "answer", "error N" or "connection".
func query(ctx context.Context, db *sql.DB, q string) string {
	rows, err := db.QueryContext(ctx, q)
	if err == nil {
		for rows.Next() {
		}
		err = rows.Err()
		if cerr := rows.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		return "answer"
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return fmt.Sprintf("error %d", me.Number)
	}
	return "connection"
}

// answerWithin polls the probe until it gets an answer.
func (r *soakRun) answerWithin(probe *sql.DB, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		outcome := query(ctx, probe, statements[0])
		cancel()
		r.count("probe", outcome)
		if outcome == "answer" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("last outcome %s", outcome)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// chaos injects a fault every 3 to 8 s until ctx ends: a SIGKILL of the
// proxy, a backend crash of 1 to 3 s, or a SIGKILL of the proxy while the
// backend is down; after each it measures the time to the next answer.
func (r *soakRun) chaos(ctx context.Context, db database, p *proxy, probe *sql.DB) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Duration(3000+rand.IntN(5000)) * time.Millisecond):
		}
		var kind string
		switch x := rand.Float64(); {
		case x < 0.45:
			kind = "kill -9 proxy"
			p.signal(syscall.SIGKILL)
			if err := p.start(); err != nil {
				return err
			}
		case x < 0.85:
			kind = "backend crash"
			if err := db.crash(); err != nil {
				return err
			}
			time.Sleep(time.Duration(1000+rand.IntN(2000)) * time.Millisecond)
			if err := db.start(); err != nil {
				return err
			}
		default:
			kind = "backend crash + kill -9 proxy"
			if err := db.crash(); err != nil {
				return err
			}
			p.signal(syscall.SIGKILL)
			_ = p.start() // exits at once: the backend is down
			time.Sleep(time.Duration(1000+rand.IntN(2000)) * time.Millisecond)
			if err := db.start(); err != nil {
				return err
			}
		}
		start := time.Now()
		if err := p.listening(r.o.recovery); err != nil {
			return fmt.Errorf("after %s: %w", kind, err)
		}
		if err := r.answerWithin(probe, r.o.recovery); err != nil {
			return fmt.Errorf("after %s on %s: no answer within %v: %w", kind, db.name(), r.o.recovery, err)
		}
		rec := time.Since(start)
		r.mu.Lock()
		r.events = append(r.events, event{db.name(), kind, rec})
		r.mu.Unlock()
		fmt.Printf("   %-32s recovered in %v\n", kind, rec.Round(time.Millisecond))
	}
}

// report checks the ledger against the limits and the answers, prints the
// figures and returns an error if an invariant fails.
func (r *soakRun) report() error {
	ledger, err := sql.Open("sqlite", r.ledger)
	if err != nil {
		return err
	}
	defer ledger.Close()
	type account struct{ epsLimit, epsUsed, deltaLimit, deltaUsed, reserved float64 }
	accounts := map[string]*account{}
	rows, err := ledger.Query("SELECT name, epsilon_limit, epsilon_used, delta_limit, delta_used FROM dpproxy_accounts_v3")
	if err != nil {
		return err
	}
	for rows.Next() {
		var name string
		a := &account{}
		if err := rows.Scan(&name, &a.epsLimit, &a.epsUsed, &a.deltaLimit, &a.deltaUsed); err != nil {
			return err
		}
		accounts[name] = a
	}
	if err := rows.Close(); err != nil {
		return err
	}
	rows, err = ledger.Query(`SELECT ra.account, SUM(r.epsilon) FROM dpproxy_reservations r
		JOIN dpproxy_reservation_accounts ra ON ra.reservation_id = r.id
		WHERE r.state <> 'cancelled' GROUP BY ra.account`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var name string
		var sum float64
		if err := rows.Scan(&name, &sum); err != nil {
			return err
		}
		if a, ok := accounts[name]; ok {
			a.reserved = sum
		}
	}
	if err := rows.Close(); err != nil {
		return err
	}

	var failures []string
	const tol = 1e-9
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range accounts {
			if !yield(n) {
				return
			}
		}
	})
	totalAnswers := 0
	for _, n := range r.answers {
		totalAnswers += n
	}
	overspent, uncharged := 0, 0
	fmt.Println("\naccount           ε limit      ε used   answers×0.1   δ used")
	for _, name := range names {
		a := accounts[name]
		user, isUser := strings.CutPrefix(name, "user:")
		answered := 0
		if isUser {
			answered = r.answers[user]
		} else if name == "table:pums" {
			answered = totalAnswers
		}
		fmt.Printf("%-14s %10.4g %11.4f %13.1f %8.2g\n", name, a.epsLimit, a.epsUsed, float64(answered)*statementEpsilon, a.deltaUsed)
		if a.epsUsed > a.epsLimit+tol || a.deltaUsed > a.deltaLimit+tol {
			overspent++
			failures = append(failures, fmt.Sprintf("%s overspent: ε %v of %v, δ %v of %v", name, a.epsUsed, a.epsLimit, a.deltaUsed, a.deltaLimit))
		}
		if math.Abs(a.epsUsed-a.reserved) > 1e-6 {
			failures = append(failures, fmt.Sprintf("%s: ε used %v but its reservations sum to %v", name, a.epsUsed, a.reserved))
		}
		if float64(answered)*statementEpsilon > a.epsUsed+1e-6 {
			uncharged++
			failures = append(failures, fmt.Sprintf("%s: %d answers (ε %v) but only ε %v charged", name, answered, float64(answered)*statementEpsilon, a.epsUsed))
		}
	}
	for _, u := range append([]string{"probe"}, r.users...) {
		if _, ok := accounts["user:"+u]; !ok && r.answers[u] > 0 {
			uncharged++
			failures = append(failures, fmt.Sprintf("user %s got %d answers and has no ledger account", u, r.answers[u]))
		}
	}

	kinds := map[string][]time.Duration{}
	for _, e := range r.events {
		kinds[e.backend+": "+e.kind] = append(kinds[e.backend+": "+e.kind], e.recovery)
	}
	fmt.Println("\nfault                                      count   recovery median / max")
	keys := make([]string, 0, len(kinds))
	for k := range kinds {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		d := kinds[k]
		slices.Sort(d)
		fmt.Printf("%-42s %5d   %v / %v\n", k, len(d), d[len(d)/2].Round(time.Millisecond), d[len(d)-1].Round(time.Millisecond))
	}
	fmt.Println("\noutcomes of the clients' statements:")
	outcomes := make([]string, 0, len(r.outcomes))
	for k := range r.outcomes {
		outcomes = append(outcomes, k)
	}
	sort.Strings(outcomes)
	for _, k := range outcomes {
		fmt.Printf("  %-12s %d\n", k, r.outcomes[k])
	}
	fmt.Printf("\noverspent accounts: %d, uncharged answers: %d\n", overspent, uncharged)
	if len(failures) > 0 {
		return errors.New("FAILED:\n  " + strings.Join(failures, "\n  "))
	}
	fmt.Println("PASS")
	return nil
}
