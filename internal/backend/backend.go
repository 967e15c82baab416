// Package backend is the only code that reads the private data: it runs typed
// fetches (sqlrewrite.Fetch), rendered by sqlrewrite.Render for the backend's
// dialect, and returns numbers to the executor.
//
// Totality (DESIGN.md §2): whether a statement answers, errors or returns
// NULL must never depend on private data except through a released noisy
// value. So a fetch must not fail because of what a row holds: the SQL that
// sqlrewrite.Render generates reads every value a backend column can hold
// (NULL, NaN, ±Inf, subnormals, huge magnitudes, SQLite text and blobs in a
// numeric column) by a fixed rule before any arithmetic, and the scanning
// here accepts every row that SQL can return: a NULL sum is 0, a count is an
// integer, every window, pair and histogram value is a non-NULL number. A
// failure here is an outage or a bug, never a property of one row.
//
// Errors: every failure is returned as a dperr Backend error carrying only a
// query id; the driver's own text, which may quote private values, goes to the
// log under that id and never to the client.
package backend

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/big"
	"net"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	// The three supported drivers register themselves here.
	"github.com/go-sql-driver/mysql"
	"github.com/lib/pq"
	_ "modernc.org/sqlite"

	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// Backend is a connection pool to the database holding the private data.
// It is safe for concurrent use.
type Backend struct {
	db      *sql.DB
	dialect sqlrewrite.Dialect
	log     *slog.Logger
	// control runs the statements that must not wait for a statement's
	// connection: KILL QUERY (armKill) and Ping. Open gives it a pool of
	// its own of one connection, kept open, on PostgreSQL and MySQL; with
	// New it is db.
	control *sql.DB

	// slots holds, per user, one token per snapshot the user's
	// statements hold (SetLimits); perUser is their capacity, 0 for no
	// per-user bound.
	slotsMu sync.Mutex
	slots   map[string]chan struct{}
	perUser int

	flavorMu    sync.Mutex
	flavorKnown bool // the server's version was read (flavor)
	mariaDB     bool // the MySQL dialect's server is MariaDB (set by flavor)
	vitess      bool // the MySQL dialect's server is Vitess's vtgate (set by flavor)
	// defaultIsolation makes Snapshot begin a plain transaction
	// (SetDefaultIsolation).
	defaultIsolation bool

	booleansMu sync.Mutex
	// booleans are, by backend table, the columns declared integer that
	// PostgreSQL stores as boolean (SetBooleans).
	booleans map[string][]string

	// identity is Identity, and zone Zone, set by Open.
	identity, zone string

	// closed is closed by Close: the kills still being retried stop
	// (retryKill).
	closed    chan struct{}
	closeOnce sync.Once
}

// Dialect returns the SQL dialect for a catalog driver name.
func Dialect(driver string) (sqlrewrite.Dialect, error) {
	switch driver {
	case "sqlite":
		return sqlrewrite.SQLite, nil
	case "postgres":
		return sqlrewrite.PostgreSQL, nil
	case "mysql":
		return sqlrewrite.MySQL, nil
	}
	return 0, fmt.Errorf("backend: unknown driver %q", driver)
}

// Open opens and pings the backend database; its sessions run in the
// time zone timeZone (SessionTimeZone). It reads its Identity and Zone.
func Open(ctx context.Context, driver, dsn, timeZone string, log *slog.Logger) (*Backend, error) {
	dialect, err := Dialect(driver)
	if err != nil {
		return nil, err
	}
	db, err := OpenDB(driver, dsn, timeZone)
	if err != nil {
		return nil, fmt.Errorf("backend: open %s: %w", driver, err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pingCtx); err != nil {
		db.Close()
		return nil, fmt.Errorf("backend: connect to %s: %w", driver, err)
	}
	id, err := identity(pingCtx, db, driver, dsn, timeZone)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("backend: %s: %w", driver, err)
	}
	zone, err := sessionZone(pingCtx, db, driver)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("backend: %s: read the sessions' time zone: %w", driver, err)
	}
	b := New(db, dialect, log)
	b.identity, b.zone = id, zone
	if driver != "sqlite" {
		if b.control, err = openControl(pingCtx, driver, dsn, timeZone); err != nil {
			db.Close()
			return nil, fmt.Errorf("backend: %s: open the control connection: %w", driver, err)
		}
	}
	return b, nil
}

// openControl opens and pings the pool of Backend.control: one
// connection, never closed for being idle, so that a KILL QUERY finds it
// open when the statements' pool or the server's connection limit is
// exhausted. database/sql opens it again if the server closed it.
func openControl(ctx context.Context, driver, dsn, timeZone string) (*sql.DB, error) {
	db, err := OpenDB(driver, dsn, timeZone)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// OpenDB opens a connection pool of one of the three drivers, its
// sessions in the time zone timeZone (SessionTimeZone; the ledger passes
// ServerTimeZone). PostgreSQL
// connections send parameterized statements in lib/pq's binary_parameters
// mode, whatever the DSN says: parse, bind and execute in one round trip
// instead of two (lib/pq otherwise waits for the server to describe the
// parameters). Parameters other than []byte are still sent as text, typed by
// the server exactly as in the default mode; []byte is sent as raw bytes.
//
// Every session runs with the settings the rendered SQL is written for,
// whatever the DSN, the role, the database or the server's defaults say
// (a DSN, ALTER ROLE … SET or a global default could otherwise change
// what the same SQL reads):
//
//   - PostgreSQL: pgSession's extra_float_digits, search_path and jit; lib/pq
//     itself sends DateStyle ISO, MDY and client_encoding UTF8 at connect.
//   - MySQL, MariaDB and Vitess: sql_mode is MySQLSQLMode.
//
// Each new PostgreSQL or MySQL connection then runs the statements of
// session, in order (the ledger's: budget.Dialect.Session); an SQLite
// pool cannot run them, so OpenDB refuses session there.
func OpenDB(driver, dsn, timeZone string, session ...string) (*sql.DB, error) {
	switch driver {
	case "postgres":
		cfg, err := pq.NewConfig(dsn)
		if err != nil {
			return nil, dsnError(driver, dsn, err)
		}
		cfg.BinaryParameters = true
		if cfg.Runtime == nil {
			cfg.Runtime = map[string]string{}
		}
		if zone := SessionTimeZone(timeZone); zone != "" && !setsTimeZone(cfg) {
			cfg.Runtime["TimeZone"] = postgresZone(zone)
		}
		connector, err := pq.NewConnectorConfig(cfg)
		if err != nil {
			return nil, dsnError(driver, dsn, err)
		}
		return sql.OpenDB(sessionConnector{connector, append([]string{pgSession}, session...)}), nil
	case "mysql":
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			return nil, dsnError(driver, dsn, err)
		}
		zone := SessionTimeZone(timeZone)
		if _, set := cfg.Params["time_zone"]; !set && zone != "" {
			if cfg.Params == nil {
				cfg.Params = map[string]string{}
			}
			if strings.EqualFold(zone, "UTC") {
				zone = "+00:00" // a name needs the server's time zone tables
			}
			cfg.Params["time_zone"] = "'" + zone + "'"
		}
		connector, err := mysql.NewConnector(cfg)
		if err != nil {
			return nil, dsnError(driver, dsn, err)
		}
		return sql.OpenDB(sessionConnector{connector, append([]string{"SET SESSION sql_mode = '" + MySQLSQLMode + "'"}, session...)}), nil
	}
	if len(session) > 0 {
		return nil, fmt.Errorf("backend: a %s connection pool cannot run %s on each connection", driver, strings.Join(session, "; "))
	}
	return sql.Open(driver, dsn)
}

// MySQLSQLMode is the sql_mode of every MySQL, MariaDB and Vitess session
// (OpenDB): MariaDB's default without NO_AUTO_CREATE_USER (which MySQL 8
// refuses), MySQL 8's without ONLY_FULL_GROUP_BY (which only refuses
// statements), NO_ZERO_IN_DATE and NO_ZERO_DATE (which change only what
// is written). The rendered SQL is written for it: the modes a DSN or a
// server's global default could add change what the same SQL reads.
// ORACLE makes LENGTH count characters, so the guard on a person id's
// length in bytes let ids of 21,001 bytes but 7,001 characters into a
// unit bound, which bounded each such person as many (an independent
// review); it also makes CONCAT skip NULLs and TRIM of spaces NULL.
// PIPES_AS_CONCAT, ANSI_QUOTES and HIGH_NOT_PRECEDENCE change what an
// operator, a quote or NOT means, EMPTY_STRING_IS_NULL reads an empty
// string as NULL, PAD_CHAR_TO_FULL_LENGTH reads CHAR values with their
// trailing spaces, NO_BACKSLASH_ESCAPES changes string literals,
// TIME_ROUND_FRACTIONAL (MariaDB) and TIME_TRUNCATE_FRACTIONAL (MySQL)
// how fractional seconds convert. It is set after the DSN's own
// parameters, whatever their spelling.
//
// Vitess's vtgate passes a session's sql_mode to its shards as a SET_VAR
// hint on each query: MySQL applies it, MariaDB ignores it, so a Vitess
// keyspace on MariaDB shards reads in the shards' global sql_mode.
const MySQLSQLMode = "STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"

// pgSession is run on each new PostgreSQL connection (OpenDB), every name
// in it qualified so that the path it repairs cannot change what it calls:
//
//   - extra_float_digits is 3: a double then converts to text as digits
//     that read back as exactly it (the shortest such from PostgreSQL 12
//     on), which the rendered remainder relies on (sqlrewrite's MOD on
//     PostgreSQL: a result outside its derived bounds could make a
//     function around it fail on some rows only), and results read back
//     exactly.
//   - pg_catalog is searched first: the search_path is the schemas of
//     the session's own (the DSN's, the role's or the database's; those
//     that exist) without pg_catalog, which PostgreSQL then searches
//     before them. A path such as "s, pg_catalog" let a function,
//     aggregate or operator of the same name and argument types in s
//     replace the built-in one in every rendered statement (COUNT(*)
//     answered 1,100 over 100 rows with an aggregate s.count(*) that
//     starts at 1,000). Naming pg_catalog first instead would make it the
//     schema new tables go to, which the ledger's CREATE TABLE cannot use.
//     A function or operator whose argument types match a call more
//     closely than the built-in one's is still chosen from any schema on
//     the path, so no role that is not trusted may create objects in the
//     path's schemas (PostgreSQL's secure schema usage pattern).
//   - jit is off (PostgreSQL 11 on; older servers have no JIT): whether a
//     statement is compiled depends on the planner's cost estimate, so on
//     the table's statistics, and compiling the rendered statements costs
//     far more than it saves (a GROUP BY of 2,400 buckets over 10^5 rows:
//     32 s with JIT, 0.37 s without), which would make a statement's time,
//     and whether timeouts.statement fires, depend on the table's size and
//     statistics more than it must.
const pgSession = "SELECT pg_catalog.set_config('extra_float_digits', '3', false), " +
	"(SELECT pg_catalog.set_config('jit', 'off', false) FROM pg_catalog.pg_settings WHERE name OPERATOR(pg_catalog.=) 'jit'), " +
	"pg_catalog.set_config('search_path', pg_catalog.array_to_string(ARRAY(SELECT pg_catalog.quote_ident(s) FROM pg_catalog.unnest(pg_catalog.current_schemas(false)) AS s " +
	"WHERE s OPERATOR(pg_catalog.<>) 'pg_catalog'), ', '), false)"

// sessionConnector opens connections with a driver's connector and runs
// the statements of init on each, in order, before the pool uses it:
// after everything the driver sends at connect (a MySQL DSN's SET of its
// parameters), so that init's settings hold whatever those say. A
// connection on which one fails is closed and the error returned.
type sessionConnector struct {
	driver.Connector
	init []string
}

// Connect implements driver.Connector.
func (c sessionConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	execer, ok := conn.(driver.ExecerContext)
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("backend: the %T connection cannot run %s", conn, strings.Join(c.init, "; "))
	}
	for _, stmt := range c.init {
		if _, err := execer.ExecContext(ctx, stmt, nil); err != nil {
			conn.Close()
			return nil, fmt.Errorf("backend: %s: %w", stmt, err)
		}
	}
	return conn, nil
}

// ServerTimeZone, as OpenDB's timeZone, leaves the sessions in the
// server's default time zone.
const ServerTimeZone = "server"

// SessionTimeZone is the zone backend sessions are set to for the
// configured timeZone: "UTC" for "" (the default), none ("") for
// ServerTimeZone, else timeZone itself (catalog validates its spelling).
// It decides how a column with a time zone (PostgreSQL timestamptz,
// MySQL/MariaDB TIMESTAMP) is read as a wall-clock date and time, and so
// its calendar groups and date comparisons; a DSN that sets the zone
// itself (PostgreSQL's timezone or options, MySQL's time_zone) keeps it.
func SessionTimeZone(timeZone string) string {
	switch timeZone {
	case "":
		return "UTC"
	case ServerTimeZone:
		return ""
	}
	return timeZone
}

// postgresZone is PostgreSQL's spelling of a session zone: an offset
// "+hh:mm" (or "+h:mm") east of UTC, as MySQL and the proxy's clock read
// it (catalog.Location), becomes "<+hh:mm>-hh:mm", a POSIX zone named
// after the offset whose offset is west of UTC, as POSIX counts, since
// PostgreSQL reads a bare "+12:00" as POSIX does: twelve hours west. A
// name is PostgreSQL's own, unchanged.
func postgresZone(zone string) string {
	m := offsetPattern.FindStringSubmatch(zone)
	if m == nil {
		return zone
	}
	west := "-"
	if m[1] == "-" {
		west = "+"
	}
	hh := m[2]
	if len(hh) == 1 {
		hh = "0" + hh
	}
	hhmm := hh + ":" + m[3]
	return "<" + m[1] + hhmm + ">" + west + hhmm
}

// offsetPattern is a UTC offset as MySQL spells it, "+01:00" or "+1:00".
var offsetPattern = regexp.MustCompile(`^([+-])(\d{1,2}):(\d{2})$`)

// setsTimeZone reports whether a PostgreSQL DSN sets the session's time
// zone itself (a timezone parameter, or -c TimeZone=… in options).
func setsTimeZone(cfg pq.Config) bool {
	for k := range cfg.Runtime {
		if strings.EqualFold(k, "timezone") {
			return true
		}
	}
	return strings.Contains(strings.ToLower(cfg.Options), "timezone")
}

// New wraps an open database, which also runs the control statements
// (KILL QUERY, Ping): unlike Open's, they then wait for a free connection
// of db when SetLimits bounds it.
func New(db *sql.DB, dialect sqlrewrite.Dialect, log *slog.Logger) *Backend {
	if log == nil {
		log = slog.Default()
	}
	return &Backend{db: db, control: db, dialect: dialect, log: log, slots: map[string]chan struct{}{}, closed: make(chan struct{})}
}

// DB returns the underlying pool (for the demo loader and tests).
func (b *Backend) DB() *sql.DB { return b.db }

// Dialect returns the SQL dialect the backend speaks.
func (b *Backend) Dialect() sqlrewrite.Dialect { return b.dialect }

// Ping checks that the backend answers, over the control connection: a
// statement pool that is all taken does not make it wait.
//
// A control connection the server closed (restarted, an administrator's
// pg_terminate_backend or KILL, an idle timeout) fails the ping that
// finds it with driver.ErrBadConn, and database/sql discards it: the ping
// is then tried once more, on a new connection, so that it fails only
// when the backend does not take one (down, or at its connection limit),
// and succeeds again as soon as it does.
func (b *Backend) Ping(ctx context.Context) error {
	err := b.control.PingContext(ctx)
	if errors.Is(err, driver.ErrBadConn) {
		err = b.control.PingContext(ctx)
	}
	return err
}

// idleTimeout is how long a statement connection of a PostgreSQL or
// MySQL backend stays open unused once SetLimits is called (an SQLite
// pool keeps its connections: an in-memory database lives while one is
// open).
const idleTimeout = 5 * time.Minute

// SetLimits bounds the backend connections the statements hold: at most
// open at once, of which the snapshots of one user (Snapshot's user) hold
// at most perUser (0: no per-user bound). A Snapshot waits for a
// connection, and for its user's turn, within its context: nothing is
// sent to the backend meanwhile. Idle connections are kept, up to open,
// for idleTimeout. The control connection (Open) is not counted: the
// backend sees at most open + 1. Call it before the first Snapshot.
func (b *Backend) SetLimits(open, perUser int) {
	b.db.SetMaxOpenConns(open)
	b.db.SetMaxIdleConns(open)
	if b.dialect != sqlrewrite.SQLite {
		b.db.SetConnMaxIdleTime(idleTimeout)
	}
	b.perUser = perUser
}

// userTurn waits, within ctx, until user holds fewer than perUser
// snapshots (SetLimits), and takes a turn; release gives it back (again
// and again: once). The waiters of one user take turns in the order they
// came.
func (b *Backend) userTurn(ctx context.Context, user string) (release func(), err error) {
	if b.perUser <= 0 {
		return func() {}, nil
	}
	b.slotsMu.Lock()
	turns, ok := b.slots[user]
	if !ok {
		// One per user who ran a statement: users are configured, so
		// the map stays as small as the configuration.
		turns = make(chan struct{}, b.perUser)
		b.slots[user] = turns
	}
	b.slotsMu.Unlock()
	select {
	case turns <- struct{}{}:
		var once sync.Once
		return func() { once.Do(func() { <-turns }) }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Turn waits, within ctx, for one of user's turns (SetLimits' perUser),
// as a Snapshot does, for reads of the backend's schema on behalf of a
// statement of user (ColumnType, HasColumn, ColumnCharset before its
// reservation): its caller holds it while it reads and gives it back
// with release, so that one analyst's statements hold at most perUser
// statement connections at once, their schema reads included. A wait
// that ctx ends fails as Snapshot's does (a Timeout or Canceled error),
// nothing sent to the backend.
func (b *Backend) Turn(ctx context.Context, user string) (release func(), err error) {
	release, err = b.userTurn(ctx, user)
	if err != nil {
		return nil, b.fail(ctx, waitingText, err)
	}
	return release, nil
}

// Close closes the pools.
func (b *Backend) Close() error {
	b.closeOnce.Do(func() { close(b.closed) })
	if b.control != b.db {
		b.control.Close()
	}
	return b.db.Close()
}

// Snapshot is a read-only transaction: every fetch of one statement reads
// the same state of the data, so a count and the window or histogram it
// shapes cannot disagree under concurrent writes (PostgreSQL and MySQL:
// REPEATABLE READ; SQLite: a deferred transaction, which reads one
// snapshot). Close it when done; it is not safe for concurrent use.
type Snapshot struct {
	b *Backend
	// conn is the statement connection tx runs on (pg holds its own);
	// release gives back its user's turn (userTurn).
	conn    *sql.Conn
	release func()
	// The transaction: pg on PostgreSQL, tx on the other dialects.
	pg *pgTx
	tx *sql.Tx
	// q runs the fetches: pg or tx, or on MySQL and MariaDB tx with each
	// fetch's text tagged for armKill.
	q queryer
	// stopKill, on MySQL and MariaDB, disarms the kill of the snapshot's
	// backend query when its statement is cancelled (armKill); it returns
	// once the kill's first attempt is over or can no longer start (its
	// retries, retryKill, can only match a connection the driver has
	// closed). Disarm and Close call it from the statement's goroutine.
	stopKill func()
	// read holds the result of every fetch run so far, by its SQL: within
	// one snapshot the same fetch has the same result, so releases that
	// need the same numbers (AVG and VARIANCE of one column both read its
	// grid sums and windows) read them once.
	read map[string]any
	// profiles are the profile fetches run so far (profile.go), from
	// which later fetches over the same rows are computed.
	profiles []*profiled
	// sortable caches, per table and column, whether the backend sorts
	// the column as numbers (sortsAsNumbers), read once per snapshot.
	sortable map[[2]string]bool
}

// SetDefaultIsolation makes every Snapshot a plain transaction at the
// server's default isolation level, sending neither SET TRANSACTION
// ISOLATION LEVEL nor READ ONLY (catalog.IsolationNone, for distributed
// engines such as Vitess that refuse them). Its fetches then read one
// snapshot only if the server's default level gives one (MySQL and
// MariaDB's REPEATABLE READ on one server does; Vitess across shards does
// not). Call it before the first Snapshot.
func (b *Backend) SetDefaultIsolation() { b.defaultIsolation = true }

// Snapshot starts a read-only transaction for a statement of user (on
// PostgreSQL it is sent with the first fetch: pgTx).
//
// It first waits, within ctx, for user's turn and for a free connection
// (SetLimits); a wait that ctx ends fails as a fetch does (below) before
// anything is sent to the backend.
//
// If ctx has a deadline (the statement timeout), every fetch is bounded by
// it twice: by ctx, which the drivers honour by cancelling the query
// (SQLite interrupts it), and by the backend's own statement timeout set to
// the time left, so that the backend stops working for a statement nobody
// waits for: PostgreSQL's statement_timeout for the transaction (SET
// LOCAL, to the time left at the first fetch), MariaDB's
// max_statement_time (SET STATEMENT ... FOR), MySQL's MAX_EXECUTION_TIME
// hint and Vitess's QUERY_TIMEOUT_MS directive on each fetch. A fetch
// that runs out of time fails with a dperr Timeout error, one whose ctx
// is cancelled with a Canceled error.
func (b *Backend) Snapshot(ctx context.Context, user string) (*Snapshot, error) {
	opts := &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	if b.dialect == sqlrewrite.SQLite || b.defaultIsolation {
		opts = nil
	}
	// The transaction outlives ctx: database/sql rolls back a transaction
	// whose context ends and then discards its connection, so a snapshot
	// closed (Close, always called) just after its statement's context
	// ended cost a new backend connection per statement (a PostgreSQL
	// backend process: 32 clients got 160 statements/s instead of over a
	// thousand, bench/RESULTS-load.md). Each fetch still runs under ctx,
	// and the wait for the connection too (Conn: once taken, the
	// connection does not depend on ctx).
	//
	// The flavor is asked before the transaction holds a connection: the
	// first time, it takes one of its own. On the MySQL dialect no fetch
	// runs until it is known: on Vitess they are rendered without bind
	// arguments (render).
	killable := false
	if b.dialect == sqlrewrite.MySQL {
		_, vitess, err := b.readFlavor(ctx)
		if err != nil {
			return nil, b.fail(ctx, flavorQuery, err)
		}
		killable = !vitess
	}
	release, err := b.userTurn(ctx, user)
	if err != nil {
		return nil, b.fail(ctx, waitingText, err)
	}
	conn, err := b.db.Conn(ctx)
	if err != nil {
		release()
		return nil, b.fail(ctx, waitingText, err)
	}
	if b.dialect == sqlrewrite.PostgreSQL {
		begin := "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
		if b.defaultIsolation {
			begin = "BEGIN READ WRITE" // what database/sql's BeginTx sends for no options
		}
		pg := &pgTx{db: b.db, conn: conn, begin: begin}
		return &Snapshot{b: b, release: release, pg: pg, q: pg, read: map[string]any{}, sortable: map[[2]string]bool{}, stopKill: func() {}}, nil
	}
	tx, err := conn.BeginTx(context.WithoutCancel(ctx), opts)
	if err != nil {
		conn.Close()
		release()
		return nil, b.fail(ctx, "BEGIN", err)
	}
	s := &Snapshot{b: b, conn: conn, release: release, tx: tx, q: tx, read: map[string]any{}, sortable: map[[2]string]bool{}, stopKill: func() {}}
	if killable {
		s.armKill(ctx)
	}
	return s, nil
}

// waitingText is what the log names for a Snapshot whose wait for a
// connection failed (fail).
const waitingText = "(waiting for a backend connection)"

// pgTx is a snapshot's transaction on PostgreSQL. It is the connection's,
// not a *sql.Tx, so that its BEGIN costs no round trip of its own: BEGIN,
// under a deadline SET LOCAL statement_timeout to the time left, and the
// first fetch go to the server as one simple query, which runs them in
// order, the fetch in the transaction BEGIN started (a fetch with bind
// arguments cannot join a simple query: BEGIN is then sent just before
// it). database/sql's BeginTx would send BEGIN alone, and the timeout
// another round trip later, before any fetch could go; PostgreSQL arms
// statement_timeout per statement of a simple query (from version 13),
// so the fetch runs under the value set just before it. The transaction
// therefore starts with the first fetch, not when the Snapshot is made:
// a failure of its BEGIN is a failure of a fetch that was sent (and
// charged, exec's budget rule), and a snapshot that never fetched has
// nothing to end. The first query is also the first use of the pooled
// connection: one the server ended while it was idle (a restart,
// pg_terminate_backend, an idle timeout), which BeginTx found dead before
// any fetch was sent, now fails the first fetch; that query is sent
// again, once, on a fresh connection (connectionLost), so that the
// statement is answered rather than charged for a connection that was
// gone before it began. No answer came from the lost connection, and the
// fetch only reads. Close ends the transaction with ROLLBACK and discards
// the connection if that fails, so that no connection goes back to the
// pool inside a transaction.
type pgTx struct {
	db   *sql.DB
	conn *sql.Conn
	// begin starts the transaction; it is sent with the first query.
	begin string
	// began is set once begin was sent.
	began bool
}

// QueryContext runs query in the transaction, starting it first.
func (t *pgTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if t.began {
		return t.conn.QueryContext(ctx, query, args...)
	}
	t.began = true
	begin := t.begin
	if left, ok := timeLeft(ctx); ok {
		begin += fmt.Sprintf("; SET LOCAL statement_timeout = %d", left.Milliseconds())
	}
	rows, err := t.first(ctx, begin, query, args)
	if !connectionLost(err) {
		return rows, err
	}
	t.conn.Close() // the driver marked it bad: the pool discards it
	conn, cerr := t.db.Conn(ctx)
	if cerr != nil {
		t.began = false // nothing to roll back on the closed connection
		return nil, err
	}
	t.conn = conn
	return t.first(ctx, begin, query, args)
}

// first sends begin and the first query.
func (t *pgTx) first(ctx context.Context, begin, query string, args []any) (*sql.Rows, error) {
	if len(args) == 0 {
		return t.conn.QueryContext(ctx, begin+"; "+query)
	}
	if _, err := t.conn.ExecContext(ctx, begin); err != nil {
		return nil, err
	}
	return t.conn.QueryContext(ctx, query, args...)
}

// connectionLost reports whether err says that a query's connection
// failed: the driver found it dead (driver.ErrBadConn, which lib/pq
// reports for an EOF or a FATAL error such as an administrator's
// termination) or its socket failed.
func connectionLost(err error) bool {
	var netErr *net.OpError
	return errors.Is(err, driver.ErrBadConn) || errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// end rolls the transaction back, if it began; if that fails, the
// connection, whose state is then unknown, is discarded. It gives the
// connection back to the pool.
func (t *pgTx) end() error {
	defer t.conn.Close()
	if !t.began {
		return nil
	}
	_, err := t.conn.ExecContext(context.Background(), "ROLLBACK")
	if err != nil {
		_ = t.conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	return err
}

// armKill makes the end of ctx stop the query the snapshot is running; it
// is for MySQL and MariaDB (not Vitess), whose servers go on running a
// query whose client went away. Each fetch's text starts with a comment
// naming the snapshot (a random tag); a cancelled statement (KILL QUERY on
// the proxy, a client that hung up) looks the tag up in the server's
// process list and sends KILL QUERY for the connection running it, over
// the control connection, which no statement holds (Open), so that it
// runs when the statements hold every connection, or over a statement
// connection if the control connection fails (killTagged). A first
// attempt that fails is retried until ctx's deadline (retryKill), so
// that a server that had no connection to spare stops the query once it
// has one. Only a query of this snapshot can match, and the normal path
// costs no round trip. PostgreSQL's driver cancels by itself (a cancel
// request, which opens no session and counts against no connection
// limit) and SQLite is interrupted. Disarm (and Close) stop it once the
// fetches are over.
func (s *Snapshot) armKill(ctx context.Context) {
	var token [8]byte
	_, _ = rand.Read(token[:])
	tag := "dpproxy-fetch-" + hex.EncodeToString(token[:])
	s.q = taggedQueryer{tx: s.tx, comment: "/* " + tag + " */ "}
	killed := make(chan struct{})
	until, ok := ctx.Deadline()
	stop := context.AfterFunc(ctx, func() {
		if !ok {
			until = time.Now().Add(killTimeout)
		}
		err := s.b.killTagged(tag)
		close(killed)
		if err != nil {
			s.b.log.Warn("backend: stopping the query of a cancelled statement failed; retrying until the statement's deadline", "err", err)
			s.b.retryKill(tag, until)
		}
	})
	s.stopKill = func() {
		if !stop() {
			<-killed
		}
	}
}

// taggedQueryer runs queries on tx with comment before their text.
type taggedQueryer struct {
	tx      *sql.Tx
	comment string
}

func (t taggedQueryer) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return t.tx.QueryContext(ctx, t.comment+query, args...)
}

// killTagged sends KILL QUERY for every other connection whose running
// query contains tag, over the control connection or, if that fails (the
// server closed it and has no connection to spare for a new one: its
// max_connections or the login's limit reached by other clients), over a
// connection of the statements' pool, which an idle one serves without a
// new session. It gives up after killTimeout, the waits for a connection
// included; nil means the process list was read and each of its matches
// sent KILL QUERY (or none matched).
func (b *Backend) killTagged(tag string) error {
	ctx, cancel := context.WithTimeout(context.Background(), killTimeout)
	defer cancel()
	err := killOn(ctx, b.control, tag)
	if err != nil && b.control != b.db {
		if perr := killOn(ctx, b.db, tag); perr == nil {
			b.log.Warn("backend: the control connection failed; the query of a cancelled statement was stopped over a statement connection", "err", err)
			return nil
		}
	}
	return err
}

// killOn looks tag up in the process list of the server db connects to
// and sends KILL QUERY for each other connection running a query that
// contains it, all on one connection of db.
// A connection found broken (driver.ErrBadConn: the server closed it) is
// replaced once.
func killOn(ctx context.Context, db *sql.DB, tag string) error {
	err := killOnce(ctx, db, tag)
	if errors.Is(err, driver.ErrBadConn) {
		err = killOnce(ctx, db, tag)
	}
	return err
}

// killOnce is one attempt of killOn.
func killOnce(ctx context.Context, db *sql.DB, tag string) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var threads []int64
	rows, err := conn.QueryContext(ctx, "SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE ? AND ID <> CONNECTION_ID()", "%"+tag+"%")
	if err != nil {
		return err
	}
	for rows.Next() {
		var id int64
		if err = rows.Scan(&id); err != nil {
			break
		}
		threads = append(threads, id)
	}
	rows.Close()
	if err == nil {
		err = rows.Err()
	}
	for _, id := range threads {
		if _, kerr := conn.ExecContext(ctx, fmt.Sprintf("KILL QUERY %d", id)); kerr != nil && err == nil {
			err = kerr
		}
	}
	return err
}

// retryKill runs killTagged again, at growing intervals (killRetryFirst
// doubling up to killRetryMax), until one attempt succeeds, until passes
// (the statement's deadline: the backend's own statement timeout, set to
// it, stops the query then) or the backend is closed. It runs after the
// snapshot's Close, which is safe: a query of the snapshot still running
// when its context ended had its connection closed by the driver, which
// the pool then discards, so whatever connection still runs the tag runs
// nothing else of this proxy's. A slot freed on the server (another
// client leaving) thus lets the kill through.
func (b *Backend) retryKill(tag string, until time.Time) {
	wait := killRetryFirst
	for time.Now().Add(wait).Before(until) {
		select {
		case <-b.closed:
			return
		case <-time.After(wait):
		}
		if b.killTagged(tag) == nil {
			b.log.Info("backend: the query of a cancelled statement was stopped on a later attempt")
			return
		}
		wait = min(2*wait, killRetryMax)
	}
	b.log.Warn("backend: gave up stopping the query of a cancelled statement; the backend's statement timeout stops it")
}

// killTimeout bounds one attempt of killTagged; killRetryFirst and
// killRetryMax are the first and the longest wait between attempts
// (retryKill).
const (
	killTimeout    = 5 * time.Second
	killRetryFirst = 100 * time.Millisecond
	killRetryMax   = 2 * time.Second
)

// once runs fetch f of the given kind, or returns (a copy of) the result of
// the identical fetch run before in this snapshot.
func once[T any](s *Snapshot, kind string, f sqlrewrite.Fetch, run func() ([]T, error)) ([]T, error) {
	q, err := s.b.render(f)
	if err != nil {
		return run() // reports the error
	}
	key := onceKey(kind, q.text, q.args)
	if v, ok := s.read[key]; ok {
		return slices.Clone(v.([]T)), nil
	}
	out, err := run()
	if err == nil {
		s.read[key] = slices.Clone(out)
	}
	return out, err
}

// onceKey is the key of a fetch's result in Snapshot.read.
func onceKey(kind, text string, args []any) string {
	return fmt.Sprintf("%s\x00%s\x00%#v", kind, text, args)
}

// hasRead reports whether once ran fetch f of the given kind in this
// snapshot.
func (s *Snapshot) hasRead(kind string, f sqlrewrite.Fetch) bool {
	q, err := s.b.render(f)
	if err != nil {
		return false
	}
	_, ok := s.read[onceKey(kind, q.text, q.args)]
	return ok
}

// timeLeft is the time until ctx's deadline, at least 1 ms, if it has one.
func timeLeft(ctx context.Context) (time.Duration, bool) {
	dl, ok := ctx.Deadline()
	if !ok {
		return 0, false
	}
	return max(time.Until(dl), time.Millisecond), true
}

// flavor reads which server the MySQL dialect talks to: MariaDB, Vitess's
// vtgate, or MySQL (neither). The version is read until one read succeeds
// (a server not yet up when the proxy starts is asked again at the next
// call); while it cannot be read the server counts as MySQL, but no
// Snapshot starts (readFlavor).
func (b *Backend) flavor(ctx context.Context) (mariaDB, vitess bool) {
	mariaDB, vitess, _ = b.readFlavor(ctx)
	return mariaDB, vitess
}

// flavorQuery reads the server's version (readFlavor).
const flavorQuery = "SELECT VERSION()"

// readFlavor is flavor, with the error of a version that could not be read.
func (b *Backend) readFlavor(ctx context.Context) (mariaDB, vitess bool, err error) {
	if b.dialect != sqlrewrite.MySQL {
		return false, false, nil
	}
	b.flavorMu.Lock()
	defer b.flavorMu.Unlock()
	if b.flavorKnown {
		return b.mariaDB, b.vitess, nil
	}
	var version string
	if err := b.db.QueryRowContext(ctx, flavorQuery).Scan(&version); err != nil {
		return false, false, err
	}
	b.flavorKnown = true
	b.mariaDB = strings.Contains(strings.ToLower(version), "mariadb")
	// vtgate reports its own version (8.4.6-Vitess), whatever its
	// shards run; it ignores MAX_EXECUTION_TIME and kills the shards'
	// queries (error 3024) past its directive's timeout.
	b.vitess = strings.Contains(strings.ToLower(version), "vitess")
	return b.mariaDB, b.vitess, nil
}

// knownVitess reports whether the server's version was read and is
// vtgate's, without asking the server (Snapshot has read it before any
// fetch).
func (b *Backend) knownVitess() bool {
	b.flavorMu.Lock()
	defer b.flavorMu.Unlock()
	return b.flavorKnown && b.vitess
}

// Vitess reports whether the backend is Vitess's vtgate (its version says
// so), asking the server until it answers once.
func (b *Backend) Vitess(ctx context.Context) bool {
	_, vitess := b.flavor(ctx)
	return vitess
}

// maxSortLength is the max_sort_length every MariaDB and MySQL fetch runs
// with: window functions and sorts compare strings on their first
// max_sort_length bytes of sort key only (1024 by default), so a unit
// bound's PARTITION BY and DENSE_RANK over text keys longer than that
// merged the keys sharing a prefix (each person counted toward one of two
// keys: an independent review). MariaDB's sort keys have this fixed size
// and its sort buffer must hold several of them (at the largest value,
// 8 MiB, every sort fails with 1038 "Out of sort memory" in the default
// 2 MiB buffer), so it is 16 KiB: 128 keys in MariaDB's default buffer, 16
// in MySQL's 256 KiB. A unit bound reads no row whose person id or key
// has a longer sort key (sqlrewrite.MySQLSortLength).
const maxSortLength = sqlrewrite.MySQLSortLength

// withTimeout adds the MySQL dialect's per-statement settings to a fetch:
// the statement timeout when ctx has a deadline, and on MariaDB and MySQL
// (not Vitess, whose tables with a privacy unit are refused) maxSortLength.
func (b *Backend) withTimeout(ctx context.Context, text string) string {
	if b.dialect != sqlrewrite.MySQL {
		return text
	}
	left, deadline := timeLeft(ctx)
	mariaDB, vitess := b.flavor(ctx)
	rest, isSelect := strings.CutPrefix(text, "SELECT ")
	switch {
	case vitess:
		if deadline && isSelect {
			return fmt.Sprintf("SELECT /*vt+ QUERY_TIMEOUT_MS=%d */ %s", left.Milliseconds(), rest)
		}
		return text
	case mariaDB:
		settings := fmt.Sprintf("max_sort_length = %d", maxSortLength)
		if deadline {
			settings = fmt.Sprintf("max_statement_time = %.3f, %s", left.Seconds(), settings)
		}
		return "SET STATEMENT " + settings + " FOR " + text
	case isSelect:
		hints := fmt.Sprintf("SET_VAR(max_sort_length = %d)", maxSortLength)
		if deadline {
			hints = fmt.Sprintf("MAX_EXECUTION_TIME(%d) %s", left.Milliseconds(), hints)
		}
		return "SELECT /*+ " + hints + " */ " + rest
	}
	return text
}

// Close ends the transaction (it wrote nothing, so it is rolled back) and
// gives its connection back to the pool, and its turn to its user.
func (s *Snapshot) Close() error {
	s.Disarm()
	var err error
	if s.pg != nil {
		err = s.pg.end()
	} else {
		err = s.tx.Rollback()
		s.conn.Close()
	}
	s.release()
	return err
}

// Disarm says the snapshot's fetches are over: the end of its statement's
// context no longer sends KILL QUERY (armKill). Close disarms too; a caller
// that closes the snapshot in the background, after the statement's
// context may have ended, disarms it first. It may be called more than once.
func (s *Snapshot) Disarm() {
	s.stopKill()
	s.stopKill = func() {}
}

// Summary runs a summary fetch and returns one number per term, in order.
func (s *Snapshot) Summary(ctx context.Context, f sqlrewrite.Fetch) ([]float64, error) {
	if out, ok := s.profileSummary(f); ok {
		return out, nil
	}
	return once(s, "summary", f, func() ([]float64, error) {
		parts := s.b.distinctParts(f.Summary)
		if len(parts) == 1 {
			return s.b.summary(ctx, s.q, f)
		}
		out := make([]float64, len(f.Summary))
		for _, part := range parts {
			sub := f
			sub.Summary = nil
			for _, i := range part {
				sub.Summary = append(sub.Summary, f.Summary[i])
			}
			vals, err := s.b.summary(ctx, s.q, sub)
			if err != nil {
				return nil, err
			}
			for j, i := range part {
				out[i] = vals[j]
			}
		}
		return out, nil
	})
}

// distinctParts splits the indices of a fetch's summary terms into the
// parts to read with one query each: all of them in one, except on
// Vitess, whose vtgate refuses a query with COUNT(DISTINCT) of two
// different expressions (VT12001 "only one DISTINCT aggregation is
// allowed in a SELECT": a statement with COUNT(DISTINCT a) and
// COUNT(DISTINCT b) failed, charged, with a backend error), where the
// first part holds every term but the COUNT(DISTINCT) of the second and
// later distinct columns, and each of those columns has a part of its
// own. The parts read the same snapshot (the statement's transaction).
func (b *Backend) distinctParts(terms []sqlrewrite.SummaryTerm) [][]int {
	parts := [][]int{nil}
	part := map[string]int{} // the part of each distinct column
	for i, t := range terms {
		p := 0
		if t.Kind == sqlrewrite.CountDistinctValues && b.knownVitess() {
			if q, ok := part[t.Column]; ok {
				p = q
			} else if len(part) > 0 {
				p = len(parts)
				parts = append(parts, nil)
			}
			part[t.Column] = p
		}
		parts[p] = append(parts[p], i)
	}
	return parts
}

// Window runs a window fetch and returns the sorted clamped values.
// A grouped window's value counts are read once per snapshot whatever its
// ranks, so the windows of one column that several releases ask for cost
// one scan.
func (s *Snapshot) Window(ctx context.Context, f sqlrewrite.Fetch) ([]float64, error) {
	if w := f.Window; w != nil && w.Grouped {
		groups, err := s.groupsOf(ctx, f, w.Column, w.Lower, w.Upper, w.GridUnit)
		if err != nil {
			return nil, err
		}
		return takeRanks(groups, w.Offset, w.Limit), nil
	}
	if f.Window != nil {
		var err error
		if f, err = s.ranked(ctx, f, f.Window.Column); err != nil {
			return nil, err
		}
	}
	return once(s, "window", f, func() ([]float64, error) { return s.b.window(ctx, s.q, f) })
}

// ranked returns f, a fetch that ranks the rows by column (a Window, or
// GridSums with Ranks), set to rank them by the value it reads
// (sqlrewrite.Fetch.OrderByValue) unless the backend sorts the column as
// numbers: on MySQL and MariaDB the column's type is read in the
// snapshot's transaction (sortsAsNumbers), since a text column is read as
// numbers but sorted as text, which put a window's values out of their
// ranks (and made the mechanism fail) only when the rows held a value such
// as '10' beside '9'. The choice depends on the column's type alone,
// never on its rows, and ranks the same values either way on a numeric
// column. PostgreSQL refuses a clamp of a non-numeric column whatever its
// rows, and SQLite's windows read only integers and reals, which it sorts
// as numbers; a derived column is a double either way.
func (s *Snapshot) ranked(ctx context.Context, f sqlrewrite.Fetch, column string) (sqlrewrite.Fetch, error) {
	if s.b.dialect != sqlrewrite.MySQL || f.OrderByValue || slices.ContainsFunc(f.Derived, func(d sqlrewrite.DerivedColumn) bool { return d.Name == column }) {
		return f, nil
	}
	numeric, err := s.sortsAsNumbers(ctx, f.Table, column)
	if err != nil {
		return f, err
	}
	f.OrderByValue = !numeric
	return f, nil
}

// sortsAsNumbers reports whether the MySQL or MariaDB backend sorts column
// of table as numbers: whether its type, as the driver reports it for a
// probe of the column (sqlrewrite.ColumnProbe, which holds the table's
// metadata lock to the end of the snapshot's transaction, so that no
// ALTER TABLE changes it under the snapshot's fetches), is an integer,
// DECIMAL, FLOAT, DOUBLE or YEAR type. Read once per snapshot.
func (s *Snapshot) sortsAsNumbers(ctx context.Context, table, column string) (bool, error) {
	key := [2]string{table, column}
	if numeric, ok := s.sortable[key]; ok {
		return numeric, nil
	}
	probe, err := sqlrewrite.ColumnProbe(table, column, s.b.dialect)
	if err != nil {
		return false, dperr.Wrap(dperr.Internal, err, "internal error: cannot render fetch")
	}
	rows, err := s.q.QueryContext(ctx, s.b.withTimeout(ctx, probe))
	if err != nil {
		return false, s.b.fail(ctx, probe, err)
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err == nil && len(types) != 1 {
		err = fmt.Errorf("probe returned %d columns", len(types))
	}
	if err != nil {
		return false, s.b.fail(ctx, probe, err)
	}
	numeric := mysqlNumericTypes[strings.TrimPrefix(types[0].DatabaseTypeName(), "UNSIGNED ")]
	s.sortable[key] = numeric
	return numeric, nil
}

// mysqlNumericTypes are the types, as the MySQL driver names them, of the
// columns MySQL and MariaDB sort as numbers.
var mysqlNumericTypes = map[string]bool{
	"TINYINT": true, "SMALLINT": true, "MEDIUMINT": true, "INT": true, "BIGINT": true,
	"DECIMAL": true, "FLOAT": true, "DOUBLE": true, "YEAR": true,
}

// Histogram runs a histogram fetch and returns the count of every bin.
func (s *Snapshot) Histogram(ctx context.Context, f sqlrewrite.Fetch) ([]int64, error) {
	if out, ok := s.profileHistogram(f); ok {
		return out, nil
	}
	return once(s, "histogram", f, func() ([]int64, error) { return s.b.histogram(ctx, s.q, f) })
}

// GridSums runs a grid-sums fetch and returns its exact n, Σk and Σk²
// (sqlrewrite.GridSums), or n and Σk from the snapshot's profile where it
// carries them. Each integer is read as text and parsed, so that
// no driver converts it through float64.
func (s *Snapshot) GridSums(ctx context.Context, f sqlrewrite.Fetch) (sqlrewrite.GridTotals, error) {
	if t, ok := s.profileGridSums(f); ok {
		return t.Of(f.GridSums), nil
	}
	if g := f.GridSums; g != nil && g.Ranks != nil {
		var err error
		if f, err = s.ranked(ctx, f, g.Column); err != nil {
			return sqlrewrite.GridTotals{}, err
		}
	}
	out, err := once(s, "grid sums", f, func() ([]sqlrewrite.GridTotals, error) {
		t, err := s.gridSums(ctx, f)
		return []sqlrewrite.GridTotals{t}, err
	})
	if err != nil {
		return sqlrewrite.GridTotals{}, err
	}
	return out[0].Of(f.GridSums), nil
}

// GridSumsGrouped returns what GridSums returns (of the ranks it asks
// for, if any), computed exactly (in big
// integers) from the grouped window of the same grid indices: for a column
// with few distinct values, the grid sums, the minimum, the maximum and
// every window of the column's grid indices then cost one scan of the
// backend together (the groups are read once per snapshot). On MySQL and
// MariaDB, n and Σk alone (SumOnly, every rank) are read by GridSums
// unless the snapshot read the groups already: its one-row DOUBLE sum
// costs MariaDB 0.77× the GROUP BY (planner.groupsSums), and gives the
// same integers.
func (s *Snapshot) GridSumsGrouped(ctx context.Context, f sqlrewrite.Fetch) (sqlrewrite.GridTotals, error) {
	g := f.GridSums
	if g == nil {
		return sqlrewrite.GridTotals{}, dperr.New(dperr.Internal, "internal error: grid-sums fetch without grid")
	}
	if t, ok := s.profileGridSums(f); ok {
		return t.Of(g), nil
	}
	w := f
	w.GridSums = nil
	w.Window = &sqlrewrite.Window{Column: g.Column, Lower: g.Lower, Upper: g.Upper, GridUnit: g.Unit, Grouped: true, Limit: 1} // the groups do not depend on the ranks
	if _, ok := s.profileGroups(w, g.Column, g.Lower, g.Upper, g.Unit); !ok && s.b.dialect == sqlrewrite.MySQL &&
		g.SumOnly && g.Ranks == nil && !s.hasRead("groups", w) {
		return s.GridSums(ctx, f)
	}
	groups, err := s.groupsOf(ctx, w, g.Column, g.Lower, g.Upper, g.Unit)
	if err != nil {
		return sqlrewrite.GridTotals{}, err
	}
	if g.Ranks != nil {
		groups = rankedGroups(groups, g.Ranks.Offset, g.Ranks.Limit)
	}
	out, err := gridSumsOf(groups)
	return out.Of(g), err
}

// rankedGroups returns the groups of the values ranked offset to
// offset+limit−1 (0-based, ascending) among those of groups (ascending),
// each count cut to the ranks it holds there.
func rankedGroups(groups []group, offset, limit int64) []group {
	var out []group
	var rank int64 // the rank of the current group's first value
	for _, g := range groups {
		if first, end := max(rank, offset), min(rank+g.count, offset+limit); first < end {
			out = append(out, group{value: g.value, count: end - first})
		}
		rank += g.count
	}
	return out
}

// groupsOf returns the groups of the grouped window f (of column over
// [lo, hi], grid indices of unit gridUnit if not 0): from the snapshot's
// profile if it determines them, else read once per snapshot.
func (s *Snapshot) groupsOf(ctx context.Context, f sqlrewrite.Fetch, column string, lo, hi, gridUnit float64) ([]group, error) {
	if groups, ok := s.profileGroups(f, column, lo, hi, gridUnit); ok {
		return groups, nil
	}
	return once(s, "groups", f, func() ([]group, error) { return s.b.groups(ctx, s.q, f) })
}

// gridSumsOf computes n, Σk and Σk² exactly from the counts of grid
// indices k the groups hold.
func gridSumsOf(groups []group) (sqlrewrite.GridTotals, error) {
	out := sqlrewrite.GridTotals{Sum: new(big.Int), SumSquares: new(big.Int)}
	var term, count big.Int
	for _, g := range groups {
		k := int64(g.value)
		if float64(k) != g.value || k < 0 {
			return sqlrewrite.GridTotals{}, dperr.Wrap(dperr.Internal, fmt.Errorf("grid index %v is not a natural number", g.value), "internal error: malformed grid sums")
		}
		out.Count += g.count
		count.SetInt64(g.count)
		kb := big.NewInt(k)
		out.Sum.Add(out.Sum, term.Mul(&count, kb))
		out.SumSquares.Add(out.SumSquares, term.Mul(term.Mul(&count, kb), kb))
	}
	return out, nil
}

func (s *Snapshot) gridSums(ctx context.Context, f sqlrewrite.Fetch) (sqlrewrite.GridTotals, error) {
	g := f.GridSums
	if g == nil {
		return sqlrewrite.GridTotals{}, dperr.New(dperr.Internal, "internal error: grid-sums fetch without grid")
	}
	if s.b.dialect == sqlrewrite.MySQL && g.Ranks == nil && !g.FloatSum {
		// Σk as DOUBLE first (GridSums.FloatSum); a sum it cannot vouch
		// for (2^53 or more) is read again as DECIMAL. Only the time
		// differs, never the totals.
		float := *g
		float.FloatSum = true
		ff := f
		ff.GridSums = &float
		if t, exact, err := s.floatGridSums(ctx, ff); err != nil || exact {
			return t, err
		}
	}
	var out sqlrewrite.GridTotals
	err := s.b.query(ctx, s.q, f, func(rows *sql.Rows) error {
		if !rows.Next() {
			return errors.New("grid-sums fetch returned no row")
		}
		text := make([]sql.RawBytes, sqlrewrite.GridSumWidth(s.b.dialect))
		dest := make([]any, len(text))
		for i := range text {
			dest[i] = &text[i]
		}
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		ints := make([]*big.Int, len(text))
		for i, t := range text {
			v, ok := new(big.Int).SetString(string(t), 10)
			if !ok {
				return fmt.Errorf("grid sum %d: %q is not an integer", i, t)
			}
			ints[i] = v
		}
		var err error
		out, err = sqlrewrite.DecodeGridSums(s.b.dialect, ints)
		return err
	})
	return out, err
}

// floatGridSums runs a FloatSum grid-sums fetch (n, Σk as a DOUBLE, and
// Σk² as an integer, 0 for SumOnly): exact is false when Σk is not one it
// can vouch for (sqlrewrite.DecodeFloatGridSum).
func (s *Snapshot) floatGridSums(ctx context.Context, f sqlrewrite.Fetch) (out sqlrewrite.GridTotals, exact bool, err error) {
	err = s.b.query(ctx, s.q, f, func(rows *sql.Rows) error {
		if !rows.Next() {
			return errors.New("grid-sums fetch returned no row")
		}
		var count, sum, squares sql.RawBytes
		if err := rows.Scan(&count, &sum, &squares); err != nil {
			return err
		}
		n, ok := new(big.Int).SetString(string(count), 10)
		if !ok || !n.IsInt64() {
			return fmt.Errorf("grid count %q", count)
		}
		if out.SumSquares, ok = new(big.Int).SetString(string(squares), 10); !ok {
			return fmt.Errorf("grid sum of squares %q is not an integer", squares)
		}
		out.Count = n.Int64()
		out.Sum, exact = sqlrewrite.DecodeFloatGridSum(string(sum))
		return nil
	})
	return out, exact && err == nil, err
}

// Pairs runs a pairs fetch and returns every row's clamped (y, x).
func (s *Snapshot) Pairs(ctx context.Context, f sqlrewrite.Fetch) ([][2]float64, error) {
	return once(s, "pairs", f, func() ([][2]float64, error) { return s.pairs(ctx, f) })
}

func (s *Snapshot) pairs(ctx context.Context, f sqlrewrite.Fetch) ([][2]float64, error) {
	if f.Pairs == nil {
		return nil, dperr.New(dperr.Internal, "internal error: pairs fetch without pairs")
	}
	var out [][2]float64
	err := s.b.query(ctx, s.q, f, func(rows *sql.Rows) error {
		for rows.Next() {
			var p [2]float64
			if err := rows.Scan(&p[0], &p[1]); err != nil {
				return err
			}
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

// queryer is a pool or a transaction.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// summary runs a summary fetch and returns one number per term, in order.
func (b *Backend) summary(ctx context.Context, q queryer, f sqlrewrite.Fetch) ([]float64, error) {
	if len(f.Summary) == 0 {
		return nil, dperr.New(dperr.Internal, "internal error: summary fetch without terms")
	}
	out := make([]float64, len(f.Summary))
	err := b.query(ctx, q, f, func(rows *sql.Rows) error {
		if !rows.Next() {
			return errors.New("summary fetch returned no row")
		}
		dest := make([]any, len(out))
		vals := make([]sql.NullFloat64, len(out))
		for i := range vals {
			dest[i] = &vals[i]
		}
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		for i, v := range vals {
			out[i] = v.Float64 // NULL (a sum over no rows) is 0
		}
		return nil
	})
	return out, err
}

func (b *Backend) window(ctx context.Context, q queryer, f sqlrewrite.Fetch) ([]float64, error) {
	if f.Window == nil {
		return nil, dperr.New(dperr.Internal, "internal error: window fetch without window")
	}
	out := make([]float64, 0, f.Window.Limit)
	err := b.query(ctx, q, f, func(rows *sql.Rows) error {
		for rows.Next() {
			var v float64
			if err := rows.Scan(&v); err != nil {
				return err
			}
			out = append(out, v)
		}
		return nil
	})
	return out, err
}

// group is a distinct value of a grouped window and how often it occurs.
type group struct {
	value float64
	count int64
}

// groups runs a grouped window fetch: the (value, count) rows, values
// strictly increasing.
func (b *Backend) groups(ctx context.Context, q queryer, f sqlrewrite.Fetch) ([]group, error) {
	if f.Window == nil || !f.Window.Grouped {
		return nil, dperr.New(dperr.Internal, "internal error: grouped window fetch without grouped window")
	}
	var out []group
	err := b.query(ctx, q, f, func(rows *sql.Rows) error {
		prev := math.Inf(-1)
		for rows.Next() {
			var g group
			if err := rows.Scan(&g.value, &g.count); err != nil {
				return err
			}
			if g.count < 1 || !(g.value > prev) {
				return fmt.Errorf("grouped window: value %v count %d after %v", g.value, g.count, prev)
			}
			prev = g.value
			out = append(out, g)
		}
		return nil
	})
	return out, err
}

// takeRanks returns the values of ranks offset to offset+limit-1 (0-based)
// of the sorted column the groups describe: what ORDER BY … LIMIT limit
// OFFSET offset returns.
func takeRanks(groups []group, offset, limit int64) []float64 {
	out := make([]float64, 0, min(limit, 1<<16))
	var rank int64 // the rank of the current group's first value
	for _, g := range groups {
		if rank >= offset+limit {
			break
		}
		for r := max(rank, offset); r < min(rank+g.count, offset+limit); r++ {
			out = append(out, g.value)
		}
		rank += g.count
	}
	return out
}

func (b *Backend) histogram(ctx context.Context, q queryer, f sqlrewrite.Fetch) ([]int64, error) {
	if f.Histogram == nil {
		return nil, dperr.New(dperr.Internal, "internal error: histogram fetch without histogram")
	}
	counts := make([]int64, f.Histogram.Cells())
	err := b.query(ctx, q, f, func(rows *sql.Rows) error {
		for rows.Next() {
			var bin, n int64
			if err := rows.Scan(&bin, &n); err != nil {
				return err
			}
			if bin < 0 || bin >= int64(len(counts)) {
				return fmt.Errorf("histogram bin %d out of range", bin)
			}
			counts[bin] += n
		}
		return nil
	})
	return counts, err
}

// query renders f, runs it and hands the rows to scan; any error becomes a
// Backend error whose text the client sees only as a query id.
//
// The log gets the fetch's text as rendered (rendered.logged), without
// its bind arguments and without the per-statement settings withTimeout
// adds: it holds no number placed by the data (a window's ranks, which
// the exact count places, are arguments) and no time left to the
// statement, which the earlier fetches' durations set.
func (b *Backend) query(ctx context.Context, q queryer, f sqlrewrite.Fetch, scan func(*sql.Rows) error) error {
	r, err := b.render(f)
	if err != nil {
		return dperr.Wrap(dperr.Internal, err, "internal error: cannot render fetch")
	}
	text := b.withTimeout(ctx, r.text)
	start := time.Now()
	err = func() error {
		rows, err := q.QueryContext(ctx, text, r.args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		if err := scan(rows); err != nil {
			return err
		}
		return rows.Err()
	}()
	if err != nil {
		return b.fail(ctx, r.logged, err)
	}
	b.log.Debug("backend fetch", "sql", r.logged, "elapsed", time.Since(start))
	return nil
}

// fail logs a backend failure of the fetch whose text to log is logged
// (rendered.logged) under a fresh query id and returns the client's
// generic error.
//
// A statement out of time (ctx's deadline, or the backend's own statement
// timeout, which may fire first) is a Timeout error; other cancellations
// are Canceled.
func (b *Backend) fail(ctx context.Context, logged string, err error) error {
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return dperr.Wrap(dperr.Canceled, err, "query canceled")
	case ctx.Err() != nil || isBackendTimeout(err):
		b.log.Warn("backend fetch timed out", "sql", logged)
		return dperr.Wrap(dperr.Timeout, err, "Query execution was interrupted, maximum statement execution time exceeded")
	}
	id := queryID()
	b.log.Error("backend fetch failed", "query_id", id, "sql", logged, "err", err)
	return dperr.Wrap(dperr.Backend, err, "backend error (query id %s); the proxy log has the details", id)
}

// isBackendTimeout reports whether err is a backend's own statement
// timeout: PostgreSQL's query_canceled (57014, which statement_timeout
// raises), MariaDB's 1969 and MySQL's 3024.
func isBackendTimeout(err error) bool {
	if pe, ok := errors.AsType[*pq.Error](err); ok {
		return pe.Code == "57014"
	}
	if me, ok := errors.AsType[*mysql.MySQLError](err); ok {
		return me.Number == 1969 || me.Number == 3024
	}
	return false
}

func queryID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
