package main

import (
	"context"
	"crypto/tls"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/catalogdb"
	"github.com/dpproxy/dpproxy/internal/demo"
	"github.com/dpproxy/dpproxy/internal/exec"
	"github.com/dpproxy/dpproxy/internal/metrics"
	"github.com/dpproxy/dpproxy/internal/proxy"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/wire"
)

// vitessUnits is why tables with a privacy unit are refused when the
// backend is Vitess (README, Vitess).
const vitessUnits = "the backend is Vitess, whose vtgate (v0.24) cannot run the per-unit bounding on its shards " +
	"(two nested window functions over a sharded table); serve this table from MariaDB, MySQL or PostgreSQL directly"

// demoBackendDSN is the embedded demo's in-memory SQLite database, shared by
// the pool's connections.
const demoBackendDSN = "file:dpproxy-demo?mode=memory&cache=shared"

func serve(ctx context.Context, opts options, stderr io.Writer) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(opts.logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	cfg, isDemo, err := loadConfig(opts)
	if err != nil {
		return err
	}
	if err := checkSynopsesFit(cfg); err != nil {
		return err
	}
	// The process's zone is backend.time_zone, which the catalog engine
	// (go-mysql-server) reads as the system zone: a session's 'SYSTEM'
	// time_zone, its NOW() and CURDATE(), and @@system_time_zone, as
	// private statements read NOW() (sqlrewrite), whatever the host's TZ.
	// With time_zone: server, the host's zone stays.
	if loc, ok := catalog.SystemLocation(cfg.Backend.TimeZone); ok {
		time.Local = loc
	}
	if opts.listen != "" {
		cfg.Listen = opts.listen
	}
	switch {
	case opts.metricsListen == "":
	case strings.EqualFold(opts.metricsListen, "off"):
		cfg.Metrics.Listen = ""
	default:
		cfg.Metrics.Listen = opts.metricsListen
	}

	if large := cfg.LargeDeltas(); len(large) > 0 {
		log.Warn(fmt.Sprintf("delta above %g: a release may fail outright, revealing a person's rows, with probability up to its delta; keep delta far below 1/n for n persons", catalog.LargeDelta), "fields", strings.Join(large, ", "))
	}

	be, err := backend.Open(ctx, cfg.Backend.Driver, cfg.Backend.DSN, cfg.Backend.TimeZone, log)
	if err != nil {
		return err
	}
	defer be.Close()
	// Every private statement holds one backend connection while it
	// reads: at most backend.max_open_connections in all, and
	// backend.max_user_connections of them for one analyst, so that no
	// burst runs into the server's own connection limit (whose error
	// would reach every analyst as a backend error) or takes every
	// connection. They are kept idle, not closed and reopened (a new
	// PostgreSQL process each) at every statement under load.
	be.SetLimits(cfg.Backend.MaxOpenConnections, cfg.Backend.MaxUserConnections)
	if cfg.Backend.Isolation == catalog.IsolationNone {
		be.SetDefaultIsolation()
	}
	if isDemo {
		if err := demo.LoadPUMS(ctx, be.DB(), catalog.DriverSQLite, "pums"); err != nil {
			return err
		}
	}
	zones := &catalog.ColumnZones{}
	if err := checkColumnTypes(ctx, be, cfg.Tables, zones, log); err != nil {
		return err
	}
	charsets := &catalog.Charsets{}
	unrepresentable, err := readCharsets(ctx, be, cfg.Tables, charsets)
	if err != nil {
		return err
	}
	if len(unrepresentable) > 0 {
		return fmt.Errorf("configuration: %s: %s", strings.Join(unrepresentable, "; "), unrepresentableRule)
	}
	if err := checkVitessWorkload(ctx, be); err != nil {
		return err
	}
	if err := checkPartitions(ctx, be, cfg.Tables); err != nil {
		return err
	}
	if err := checkSnapshotEngines(ctx, be, cfg); err != nil {
		return err
	}

	ledger, ledgerDB, err := openLedger(ctx, cfg.Ledger, cfg.Timeouts.Statement.Duration)
	if err != nil {
		return err
	}
	defer ledgerDB.Close()
	// The ledger runs one batch transaction at a time (budget's group
	// commit) plus the occasional Cancel and state access.
	ledgerDB.SetMaxIdleConns(ledgerIdleConns)
	if opts.resetBudget {
		if err := ledger.Reset(ctx); err != nil {
			return err
		}
		log.Warn("spent budget reset", "ledger", cfg.Ledger.Driver)
	}
	if err := carryOverCaps(ctx, ledger, cfg, log); err != nil {
		return err
	}

	if opts.demoCert, err = filepath.Abs(opts.demoCert); err != nil {
		return err
	}
	tlsConfig, rsaKey, err := transportSecurity(cfg, isDemo, opts.demoCert, log)
	if err != nil {
		return err
	}
	var m *metrics.Metrics
	var srv *wire.Server
	if cfg.Metrics.Listen != "" {
		m = metrics.New(func() wire.Stats { return srv.Stats() })
		ledger.OnCommit(m.ObserveCharge)
	}
	executor := exec.New(be, ledger, log)
	executor.SetStatementTimeout(cfg.Timeouts.Statement.Duration)
	executor.SetRepeatWindow(cfg.Privacy.RepeatWindow.Duration)
	executor.SetColumnZones(zones)
	types := newTableTypes(be, be.Vitess(ctx), log, charsets)
	types.zones, types.config = zones, cfg
	executor.SetTableCheck(types.check)
	defer executor.Wait() // the last commits, before the ledger closes
	engine, err := proxy.NewEngine(cfg, executor, ledger, log)
	if err != nil {
		return err
	}
	engine.SetCharsets(charsets)
	engine.SetColumnZones(zones)
	if m != nil {
		engine.SetObserver(m.ObserveStatement)
	}
	flavorCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	vitess := be.Vitess(flavorCtx)
	cancel()
	if vitess {
		engine.RefusePrivacyUnits(vitessUnits)
		for _, t := range cfg.Tables {
			if t.HasPrivacyUnit() {
				log.Warn("privacy-unit table refused: the backend is Vitess", "table", t.Name, "privacy_unit", t.PrivacyUnit)
			}
		}
	}
	srv, err = wire.NewServer(wire.Config{
		Addr:                   cfg.Listen,
		MaxConnections:         cfg.MaxConnections,
		ReservedSessions:       cfg.ReservedSessions,
		MaxUserConnections:     cfg.MaxUserConnections,
		MaxHandshakesPerSource: cfg.MaxHandshakesPerSource,
		MaxAllowedPacket:       cfg.MaxAllowedPacket,
		MaxBufferedBytes:       cfg.MaxBufferedBytes,
		HandshakeTimeout:       cfg.Timeouts.Handshake.Duration,
		ReadTimeout:            cfg.Timeouts.Read.Duration,
		WriteTimeout:           cfg.Timeouts.Write.Duration,
		IdleTimeout:            cfg.Timeouts.Idle.Duration,
		ShutdownGrace:          cfg.Timeouts.Shutdown.Duration,
		ServerVersion:          proxy.ServerVersion,
		TLS:                    tlsConfig,
		RequireTLS:             cfg.TLS.Require,
		HandshakePlugin:        handshakePlugin(cfg),
		RSAKey:                 rsaKey,
		Logger:                 log,
	}, accounts{cfg}, engineAdapter{engine})
	if err != nil {
		return err
	}
	engine.SetConnections(connectionsAdapter{srv})
	// The metrics endpoint listens first: whoever sees the proxy accept
	// (a supervisor, a test harness) finds /healthz there too.
	var ml net.Listener
	if m != nil {
		if ml, err = net.Listen("tcp", cfg.Metrics.Listen); err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
	}
	l, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		if ml != nil {
			ml.Close()
		}
		return err
	}
	if err := engine.SetPort(l.Addr().(*net.TCPAddr).Port); err != nil {
		l.Close()
		if ml != nil {
			ml.Close()
		}
		return err
	}
	log.Info("dpproxy listening", "addr", l.Addr().String(), "backend", cfg.Backend.Driver, "demo", isDemo)
	if isDemo {
		log.Info("demo: connect with  mariadb -h127.0.0.1 -P" + port(l.Addr()) + " -udemo -pdemo")
		log.Info("demo: over verified TLS with  mariadb -h127.0.0.1 -P" + port(l.Addr()) + " -udemo -pdemo --ssl-ca=" + opts.demoCert + " --ssl-verify-server-cert")
	}
	if m != nil {
		healthy := func(ctx context.Context) error {
			if err := be.Ping(ctx); err != nil {
				return fmt.Errorf("backend: %w", err)
			}
			if err := ledgerDB.PingContext(ctx); err != nil {
				return fmt.Errorf("ledger: %w", err)
			}
			return nil
		}
		var metricsTLS *tls.Config
		if cfg.Metrics.TLS {
			metricsTLS = tlsConfig
		}
		log.Info("metrics listening", "addr", ml.Addr().String(), "paths", "/metrics /healthz", "https", metricsTLS != nil, "token", cfg.Metrics.Token != "")
		switch {
		case loopback(ml.Addr()):
		case cfg.Metrics.Token == "":
			log.Warn("metrics: /metrics answers anyone who reaches a non-loopback address; set metrics.token (and metrics.tls)")
		case metricsTLS == nil:
			log.Warn("metrics: the metrics token travels in clear to a non-loopback address; set metrics.tls")
		}
		go func() {
			if err := metrics.Serve(ctx, ml, m.Handler(healthy, cfg.Metrics.Token, log), metricsTLS); err != nil {
				log.Error("metrics endpoint failed", "err", err)
			}
		}()
	}
	return srv.Serve(ctx, l)
}

// ledgerIdleConns is how many idle connections the ledger's pool keeps.
const ledgerIdleConns = 8

func loadConfig(opts options) (*catalog.Config, bool, error) {
	if opts.configPath != "" {
		cfg, err := catalog.Load(opts.configPath)
		return cfg, false, err
	}
	cfg, err := demo.Config(demoBackendDSN, opts.demoLedger)
	return cfg, true, err
}

// checkSynopsesFit refuses a configuration with a histogram whose
// synopsis can never fit the budget ledger (exec.CheckSynopsisFits),
// naming its bins field: every statement needing it would be refused.
func checkSynopsesFit(cfg *catalog.Config) error {
	for i := range cfg.Tables {
		t := &cfg.Tables[i]
		for j := range t.Columns {
			if err := exec.CheckSynopsisFits(t, &t.Columns[j]); err != nil {
				return fmt.Errorf("configuration: tables[%d].columns[%d].histogram.bins: %w", i, j, err)
			}
		}
	}
	return nil
}

// openLedger opens the ledger database. The ledger takes its own locks
// (immediate write transactions and a busy timeout on SQLite, row locks on
// PostgreSQL and MySQL), so several proxies may share one; on PostgreSQL
// and MySQL/MariaDB its transactions wait at most lockTimeout for a row
// another session holds locked (budget.Ledger.SetLockTimeout; serve
// passes timeouts.statement, beyond which no statement waits for the
// ledger, so that a stalled session cannot hold the ledger's other
// transactions, a whole group-commit batch of statements, longer). Each
// of its connections runs the ledger's session settings
// (budget.Dialect.Session: durable commits), and budget.Open refuses a
// database whose commits may not be durable.
func openLedger(ctx context.Context, d catalog.Database, lockTimeout time.Duration) (*budget.Ledger, *sql.DB, error) {
	dialect, err := budget.ParseDialect(d.Driver)
	if err != nil {
		return nil, nil, fmt.Errorf("ledger: %w", err)
	}
	db, err := backend.OpenDB(d.Driver, d.DSN, backend.ServerTimeZone, dialect.Session()...)
	if err != nil {
		return nil, nil, fmt.Errorf("ledger (driver %s): %w", d.Driver, err)
	}
	l, err := budget.Open(ctx, db, dialect)
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("ledger: %w", err)
	}
	l.SetLockTimeout(lockTimeout)
	return l, db, nil
}

// carryOverCaps carries over, once for the life of the ledger, the usage
// of each configured table's legacy cap account (keyed on the name
// analysts use) to its account keyed on the backend relation
// (catalog.TableAccount), so that upgrading forgets no spending. Nothing
// is written into the ledger's limits: each proxy enforces its own
// configuration (exec.Executor.SetUserLimits, the tables' caps).
func carryOverCaps(ctx context.Context, l *budget.Ledger, cfg *catalog.Config, log *slog.Logger) error {
	for i := range cfg.Tables {
		t := &cfg.Tables[i]
		from, to := catalog.LegacyTableAccount(t), catalog.TableAccount(t.Source)
		carried, err := l.CarryOver(ctx, from, to)
		if err != nil {
			return fmt.Errorf("ledger: carrying %s over to %s: %w", from, to, err)
		}
		if carried {
			log.Info("table cap usage carried over to the account of its backend relation", "table", t.Name, "from", from, "to", to)
		}
	}
	return nil
}

// loopback reports whether a listener's address is a loopback one.
func loopback(a net.Addr) bool {
	tcp, ok := a.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

func port(a net.Addr) string {
	_, p, _ := net.SplitHostPort(a.String())
	return p
}

// handshakePlugin is the plugin the server announces: caching_sha2_password
// (MySQL 8's default) when any user logs in with it, since some clients
// would not switch to it from mysql_native_password; else the latter.
func handshakePlugin(cfg *catalog.Config) string {
	for _, u := range cfg.Users {
		if u.AuthPlugin == catalog.AuthCachingSHA2 {
			return wire.PluginCachingSHA2
		}
	}
	return wire.PluginNativePassword
}

// accounts serves the configured users' password hashes to the wire layer.
type accounts struct{ cfg *catalog.Config }

func (a accounts) Account(user string) (wire.Account, bool) {
	u, ok := a.cfg.User(user)
	if !ok {
		return wire.Account{}, false
	}
	h, err := hex.DecodeString(strings.TrimPrefix(u.PasswordHash, "*"))
	if err != nil {
		return wire.Account{}, false
	}
	return wire.Account{NativeHash: h, CachingSHA2: u.AuthPlugin == catalog.AuthCachingSHA2, MaxConnections: u.MaxUserConnections}, true
}

// Plugins counts the configured users of each plugin.
func (a accounts) Plugins() (native, cachingSHA2 int) {
	for _, u := range a.cfg.Users {
		if u.AuthPlugin == catalog.AuthCachingSHA2 {
			cachingSHA2++
		} else {
			native++
		}
	}
	return native, cachingSHA2
}

// NameSecret is every configured user's name and stored password hash (the
// 20 bytes, however the configuration spells them), in name order: the
// same for every proxy with these users, and secret to anyone who does not
// know all the hashes.
func (a accounts) NameSecret() []byte {
	names := make([]string, 0, len(a.cfg.Users))
	for _, u := range a.cfg.Users {
		names = append(names, u.Name)
	}
	slices.Sort(names)
	var secret []byte
	for _, name := range names {
		acc, _ := a.Account(name)
		secret = append(append(append(secret, name...), 0), acc.NativeHash...)
	}
	return secret
}

// engineAdapter and sessionAdapter connect proxy to wire, which share no types.
type engineAdapter struct{ e *proxy.Engine }

func (a engineAdapter) Open(user string, connID uint32, transport wire.Transport) wire.Session {
	s := a.e.Open(user, connID)
	if transport.TLSVersion != "" {
		s.SetTLS(transport.TLSVersion, transport.TLSCipher)
	}
	s.SetClientAddress(transport.Address)
	return sessionAdapter{s}
}

// connectionsAdapter lets KILL (proxy) reach wire's connections.
type connectionsAdapter struct{ srv *wire.Server }

func (a connectionsAdapter) Kill(user string, id uint32, wholeConnection bool) (found bool) {
	return a.srv.Kill(user, id, wholeConnection) == wire.Killed
}

type sessionAdapter struct{ s *proxy.Session }

func (a sessionAdapter) Execute(ctx context.Context, query string) (*wire.Result, error) {
	return wireResult(a.s.Execute(ctx, query))
}

func (a sessionAdapter) ExecutePrepared(ctx context.Context, query, bound string) (*wire.Result, error) {
	return wireResult(a.s.ExecutePrepared(ctx, query, bound))
}

// wireResult is a session's answer for wire.
func wireResult(r *proxy.Result, err error) (*wire.Result, error) {
	if err != nil {
		return nil, err
	}
	res := &wire.Result{Columns: r.Columns, Rows: r.Rows, AffectedRows: r.AffectedRows, Warnings: r.Warnings}
	res.Fields = wireFields(r.Typed)
	return res, nil
}

func (a sessionAdapter) Describe(ctx context.Context, query string, markers int) []wire.Field {
	return wireFields(a.s.Describe(ctx, query, markers))
}

// wireFields are the catalog engine's or a private answer's column
// definitions for wire.
func wireFields(cols []catalogdb.Column) []wire.Field {
	var fields []wire.Field
	for _, c := range cols {
		fields = append(fields, wire.Field{
			Name: c.Name, Type: c.Type, Flags: c.Flags, Charset: c.Charset, Length: c.Length, Decimals: c.Decimals,
		})
	}
	return fields
}

func (a sessionAdapter) UseDatabase(ctx context.Context, name string) error {
	return a.s.UseDatabase(ctx, name)
}

func (a sessionAdapter) Refused(code uint16, message string) { a.s.Refused(code, message) }

func (a sessionAdapter) Answered() { a.s.Answered() }

func (a sessionAdapter) Reset() { a.s.Reset() }

func (a sessionAdapter) Close() { a.s.Close() }

// checkVitessWorkload refuses a Vitess backend whose connections do not
// run with workload OLAP (backend.VitessOLAP): without it a vttablet
// refuses a shard's answer of more than 10,000 rows, so whether a
// statement answers would depend on how many rows a shard holds (an
// independent review: one inserted row turned a REGR_SLOPE answer into an
// error).
func checkVitessWorkload(ctx context.Context, be *backend.Backend) error {
	if !be.Vitess(ctx) {
		return nil
	}
	olap, err := be.VitessOLAP(ctx)
	if err != nil {
		return err
	}
	if !olap {
		return fmt.Errorf("configuration: backend.dsn: Vitess's vtgate serves this connection with workload OLTP, under which a shard's answer of more than 10,000 rows is refused, a failure that would depend on the data; add ?workload=olap to the DSN")
	}
	return nil
}

// checkPartitions refuses, on PostgreSQL, a table whose listed partitions
// do not hold exactly the rows of its partitioned source, each row once
// (backend.PartitionsCover): its counts and sums are added up over the
// listed partitions while its windows read the source, so a partition
// detached or attached and not listed would make the two read different
// rows, and a statement fail or answer depending on the data (an
// independent review). A source that is not a partitioned table (a view,
// inheritance) cannot be checked and is trusted, as the README says.
func checkPartitions(ctx context.Context, be *backend.Backend, tables []catalog.Table) error {
	var bad []string
	for _, t := range tables {
		if len(t.Partitions) == 0 {
			continue
		}
		covers, checked, err := be.PartitionsCover(ctx, t.Source, t.Partitions)
		if err != nil {
			return err
		}
		if checked && !covers {
			bad = append(bad, fmt.Sprintf("%s (source %s, partitions %s)", t.Name, t.Source, strings.Join(t.Partitions, ", ")))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("configuration: %s: a table's partitions must be exactly its source's partitions (each leaf partition once, a sub-partitioned one by itself or by its leaves): aggregates are added up over the listed ones while windows read the source", strings.Join(bad, "; "))
	}
	return nil
}

// checkSnapshotEngines refuses, on MySQL or MariaDB with backend.isolation
// repeatable_read, a table whose storage engine keeps no snapshots
// (MyISAM, Aria, MEMORY, CSV, …: only InnoDB and MyRocks do). There a
// statement's REPEATABLE READ transaction reads each table as it is at
// each read, so two reads of one statement may see two states of a table
// being written, and the planner's parallel composition of conditional
// aggregates, which assumes one dataset, would not hold; with
// isolation: none the planner does not assume it. A table it cannot find
// (created later) is not refused; a view is checked through
// the base tables its definition names (backend.MySQLBaseEngines).
func checkSnapshotEngines(ctx context.Context, be *backend.Backend, cfg *catalog.Config) error {
	if cfg.Backend.Isolation != catalog.IsolationRepeatableRead {
		return nil
	}
	var bad []string
	for _, t := range cfg.Tables {
		engines, err := be.MySQLBaseEngines(ctx, t.Source)
		if err != nil {
			return err
		}
		for _, base := range slices.Sorted(maps.Keys(engines)) {
			if engine := engines[base]; !strings.EqualFold(engine, "InnoDB") && !strings.EqualFold(engine, "ROCKSDB") {
				bad = append(bad, fmt.Sprintf("%s (%s reads %s, engine %s)", t.Name, t.Source, base, engine))
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("configuration: %s: with backend.isolation: repeatable_read every table must be of an engine with snapshots (InnoDB or MyRocks); convert it, or set backend.isolation: none, under which reads of one statement are not assumed to see one state of the table", strings.Join(bad, "; "))
	}
	return nil
}

// numericTypes are the backend column types a column declared integer or
// real may have (information_schema's DATA_TYPE, lower case).
var numericTypes = map[string]bool{
	// PostgreSQL
	"smallint": true, "integer": true, "bigint": true, "numeric": true, "real": true, "double precision": true,
	// MySQL and MariaDB
	"tinyint": true, "mediumint": true, "int": true, "decimal": true, "float": true, "double": true, "year": true,
}

// temporalTypes are the backend column types a column declared a date or
// a timestamp may have, per dialect.
var temporalTypes = map[sqlrewrite.Dialect]map[string]bool{
	sqlrewrite.PostgreSQL: {"date": true, "timestamp without time zone": true, "timestamp with time zone": true},
	sqlrewrite.MySQL:      {"date": true, "datetime": true, "timestamp": true},
}

// zonedTypes are the backend types of date and timestamp columns stored
// with a time zone, read as wall-clock values in the backend sessions'
// zone (backend.time_zone).
var zonedTypes = map[string]bool{"timestamp with time zone": true, "timestamp": true}

// readCharsets records in cs the backend character set of every text
// column of tables (backend.ColumnCharset), against which statements'
// text constants are checked before anything is reserved
// (sqlrewrite.Parser.SetCharsets), and returns, each as "table.column:
// …" (domainProblem), the text columns whose configured values (values:,
// or its interactive domain's) include one the character set cannot
// represent, so that the fetches that bind it (GROUP BY the column, its
// interactive domain) would fail with every statement, after the
// reservation, or two the column's collation compares equal ('x' and 'X'
// under MariaDB's utf8mb4_general_ci, or a nondeterministic PostgreSQL
// collation), whose rows would all be counted as the first's
// (unrepresentableRule). err reports a
// backend failure. It is the one place the character sets are read; a
// check that finds a table changed may call it again for that table
// (tableTypes).
func readCharsets(ctx context.Context, be *backend.Backend, tables []catalog.Table, cs *catalog.Charsets) (unrepresentable []string, err error) {
	for _, t := range tables {
		for _, c := range t.Columns {
			if c.Type != catalog.Text {
				continue
			}
			name, collation, ok, err := be.ColumnCharset(ctx, t.Source, c.Source)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			if be.Dialect() == sqlrewrite.PostgreSQL {
				name = catalog.PostgresEncodingPrefix + name
			}
			charset := catalog.Charset{Name: name, Collation: collation}
			cs.Set(t.Name, c.Name, charset)
			if c.PartitionSelection && name == "binary" {
				// Keys are read as utf8mb4 text (exactText), where bytes
				// that are no UTF-8 become '?': 0xFF and '?' would be one key.
				unrepresentable = append(unrepresentable, fmt.Sprintf("%s.%s: partition_selection on a binary column (VARBINARY, BLOB), whose bytes need not be text", t.Name, c.Name))
				continue
			}
			domains := [][]string{c.Values}
			if t.Interactive != nil {
				for _, ic := range t.Interactive.Columns {
					if ic.Name == c.Name {
						domains = append(domains, ic.Values)
					}
				}
			}
			for _, domain := range domains {
				problem, err := domainProblem(ctx, be, t, c, charset, domain)
				if err != nil {
					return nil, err
				}
				if problem != "" {
					unrepresentable = append(unrepresentable, problem)
					break
				}
			}
		}
	}
	return unrepresentable, nil
}

// domainProblem returns, as "table.column: …", why the declared values
// of the text column c of t (its values, or its interactive domain's),
// in the backend character set charset, are refused: one that charset
// cannot represent, or two the column's collation compares equal
// (backend.Backend.EqualValues); "" if neither.
func domainProblem(ctx context.Context, be *backend.Backend, t catalog.Table, c catalog.Column, charset catalog.Charset, domain []string) (string, error) {
	var values []string
	for _, v := range domain {
		if v == catalog.NullValue {
			continue
		}
		if !catalog.Representable(charset, v) {
			return fmt.Sprintf("%s.%s: value %q (character set %s)", t.Name, c.Name, v, charset.Name), nil
		}
		values = append(values, v)
	}
	i, j, in, err := be.EqualValues(ctx, t.Source, c.Source, values)
	if err != nil || in == "" {
		return "", err
	}
	return fmt.Sprintf("%s.%s: values %q and %q are equal in the column's collation (%s)", t.Name, c.Name, values[i], values[j], in), nil
}

// unrepresentableRule says why readCharsets' columns are refused.
const unrepresentableRule = "a text column's values must be representable in its backend character set (statements that bind them would fail) and distinct in its collation (the rows of two equal values would all be in the first one's group, the other's always 0), and a key chosen by partition selection must be text, not binary (its keys are read as text); change the values or convert the column"

// checkColumnTypes refuses, on PostgreSQL and MySQL/MariaDB, a column
// declared integer or real whose backend column is not numeric, or
// declared a date or a timestamp whose backend column is neither (text,
// say), as columnTypeProblems finds them, and logs a warning for each
// table it cannot find (created later: its columns are checked when a
// statement first uses it, tableTypes) and for each column a table it
// finds lacks (the statements that read it are refused, tableTypes).
// SQLite's typeless columns are read by their storage class. It records
// in zones (may be nil) which date and timestamp columns have a time
// zone.
func checkColumnTypes(ctx context.Context, be *backend.Backend, tables []catalog.Table, zones *catalog.ColumnZones, log *slog.Logger) error {
	vitess := be.Vitess(ctx)
	var bad []string
	for _, t := range tables {
		schema, err := columnTypeProblems(ctx, be, t, vitess, zones)
		if err != nil {
			return err
		}
		switch {
		case schema.missing:
			log.Warn("table not found in the backend: its column types are checked when a statement first uses it", "table", t.Name, "source", t.Source)
		case len(schema.absent) > 0:
			log.Warn("columns not found in the backend: the statements that read them are refused until they are", "table", t.Name, "source", t.Source, "columns", strings.Join(schema.absent, ", "))
		}
		bad = append(bad, schema.bad...)
	}
	if len(bad) > 0 {
		return fmt.Errorf("configuration: %s: %s", strings.Join(bad, "; "), columnTypeRule)
	}
	return nil
}

// columnTypeRule says why columnTypeProblems' columns are refused.
const columnTypeRule = "a column declared integer or real must be of a numeric type in the backend (or a PostgreSQL boolean declared integer with bounds within [0, 1], read as 1 and 0), and one declared date or timestamp of a date or timestamp type (the proxy compares the column as the values it declares; over text the statements would read other values than the declared ones); declare it text, or convert the column"

// tableSchema is what columnTypeProblems reads of a configured table in
// the backend's schema.
type tableSchema struct {
	// bad are the columns whose backend type contradicts their
	// declaration, each as "table.column (declared …, a backend …)".
	bad []string
	// absent are the backend names (catalog.Column.Source) of the
	// declared columns the backend's table lacks, in declaration order,
	// then its privacy unit column if it lacks that.
	absent []string
	// missing reports that the backend's table has none of the declared
	// columns: it was dropped or renamed, or is not created yet.
	missing bool
}

// columnTypeProblems lists the columns of t declared integer or real whose
// backend column is not numeric, and those declared a date or a timestamp
// whose backend column is neither (text, say), on PostgreSQL and
// MySQL/MariaDB; behind Vitess a FLOAT column too. It lists the columns
// of t, and its privacy unit column, that the backend's table lacks
// (absent; missing when it lacks all the declared columns: a table
// dropped, renamed or created later), as the backend's schema says
// (backend.Backend.ColumnType, backend.Backend.HasColumn), never its rows:
// an empty table, an all-NULL column are there.
// The fetches are total over such columns (sqlrewrite.Render: PostgreSQL
// refuses them whatever the rows; MySQL and MariaDB read text as numbers
// and rank windows by the values read, backend.Snapshot), so the check is a
// usability aid, not what keeps outcomes independent of the data: over
// text the statements would read other values than the declared ones
// ('garbage' as 0), where the analyst should rather learn that the
// configuration does not match the backend:
//   - MySQL and MariaDB read '10 apples' as 10 and 'abc' as 0, and group
//     a numeric partition-selection key by its number ('5' and '05'
//     together);
//   - PostgreSQL fails every fetch of a text column declared numeric or a
//     date, whatever its rows, charged.
//
// A PostgreSQL boolean column declared integer with bounds within [0, 1]
// passes: MySQL's BOOLEAN is TINYINT(1), and MySQL clients and BI tools
// compare and sum it as the numbers 1 and 0 (is_paid = 1, = TRUE,
// SUM(is_paid)). columnTypeProblems records such columns in be
// (backend.Backend.SetBooleans), whose fetches then read each as 1, 0 or
// NULL; declared real or with wider bounds it is refused, with that hint.
// (Declared text it is not checked, as no text column is: its values are
// compared as PostgreSQL reads strings as booleans, 'true', 't', '1'.)
//
// vitess says the backend is Vitess's vtgate. It records in zones (may
// be nil) whether each date and timestamp column it finds has a time zone
// (zonedTypes; on SQLite none has).
func columnTypeProblems(ctx context.Context, be *backend.Backend, t catalog.Table, vitess bool, zones *catalog.ColumnZones) (tableSchema, error) {
	var schema tableSchema
	var booleans []string
	sqlite := be.Dialect() == sqlrewrite.SQLite
	for _, c := range t.Columns {
		if c.Temporal() && zones != nil && sqlite {
			zones.Set(t.Name, c.Name, false)
		}
		if sqlite || !c.Numeric() && !c.Temporal() {
			ok, err := be.HasColumn(ctx, t.Source, c.Source)
			if err != nil {
				return tableSchema{}, err
			}
			if !ok {
				schema.absent = append(schema.absent, c.Source)
			}
			continue
		}
		typ, ok, err := be.ColumnType(ctx, t.Source, c.Source)
		if err != nil {
			return tableSchema{}, err
		}
		if !ok {
			schema.absent = append(schema.absent, c.Source)
			continue
		}
		if c.Temporal() && zones != nil {
			zones.Set(t.Name, c.Name, zonedTypes[typ])
		}
		switch {
		case c.Numeric() && typ == "boolean" && be.Dialect() == sqlrewrite.PostgreSQL:
			if lo, hi, _ := c.Bounds(); c.Type != catalog.Integer || lo < 0 || hi > 1 {
				schema.bad = append(schema.bad, fmt.Sprintf("%s.%s (declared %s in [%g, %g], a backend boolean: declare it integer with lower: 0 and upper: 1, and it reads as 1 and 0)", t.Name, c.Name, c.Type, lo, hi))
				break
			}
			booleans = append(booleans, c.Source)
		case c.Numeric() && !numericTypes[typ], c.Temporal() && !temporalTypes[be.Dialect()][typ]:
			schema.bad = append(schema.bad, fmt.Sprintf("%s.%s (declared %s, a backend %s)", t.Name, c.Name, c.Type, typ))
		case vitess && typ == "float":
			schema.bad = append(schema.bad, fmt.Sprintf("%s.%s (a FLOAT column behind Vitess: vtgate merges the shards' sorted rows by the values as MariaDB prints them, to 6 digits, so windows and groups of close values come out of order)", t.Name, c.Name))
		}
	}
	if !sqlite {
		be.SetBooleans(t.Name, booleans)
	}
	schema.missing = len(schema.absent) == len(t.Columns)
	if t.HasPrivacyUnit() {
		ok, err := be.HasColumn(ctx, t.Source, t.PrivacyUnit)
		if err != nil {
			return tableSchema{}, err
		}
		if !ok {
			schema.absent = append(schema.absent, t.PrivacyUnit)
		}
	}
	return schema, nil
}
