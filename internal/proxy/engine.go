// Package proxy is dpproxy's statement engine: one Session per client
// connection parses each statement, answers settings and bootstrap
// statements from the session and the catalog, plans private queries and has
// the executor run them. It knows nothing of the wire protocol; cmd/dpproxy
// adapts it to package wire.
//
// Contract: no statement reaches the backend except through a plan, and every
// error returned is a dperr error whose message is safe for the analyst.
package proxy

import (
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/catalogdb"
	"github.com/dpproxy/dpproxy/internal/exec"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// Database is the name of the one database dpproxy shows its tables in.
const Database = sqlrewrite.DataDatabase

// Engine holds what all sessions share.
type Engine struct {
	cat *catalog.Config
	// catalogDB answers metadata statements from the configured schema (rows: none).
	catalogDB *catalogdb.Engine
	planner   *planner.Planner
	executor  *exec.Executor
	ledger    *budget.Ledger
	log       *slog.Logger
	// newSource returns the noise source of a new session.
	newSource func() noise.Source
	queries   atomic.Uint64
	observe   func(outcome string, elapsed time.Duration)
	// connections answers KILL; nil until SetConnections.
	connections Connections
	// charsets are the backend character sets of text columns, which
	// every session's parser checks text constants against; nil until
	// SetCharsets.
	charsets *catalog.Charsets
	// zones are the backend's date and timestamp columns with a time
	// zone; nil (none known) until SetColumnZones.
	zones *catalog.ColumnZones
	// parses bounds the memory of concurrent parses (newParseGate).
	parses *byteGate
	// answers bounds the private answers held until written
	// (newAnswerGate).
	answers *byteGate
}

// Connections is what KILL reaches: the server's client connections.
type Connections interface {
	// Kill interrupts, on behalf of user, the statement connection id is
	// running and, if wholeConnection, closes the connection. It reports
	// whether a logged-in connection of user has that id; it does nothing
	// otherwise (another user's connection is not found).
	Kill(user string, id uint32, wholeConnection bool) (found bool)
}

// SetConnections makes KILL reach c's connections; without it KILL is
// refused. Call it before sessions are opened.
func (e *Engine) SetConnections(c Connections) { e.connections = c }

// SetObserver makes every later statement report its outcome ("ok", or the
// dperr kind of its error: "parse", "budget exhausted", "backend",
// "timeout", ...) and its duration to f, for metrics. Call it before
// sessions are opened.
func (e *Engine) SetObserver(f func(outcome string, elapsed time.Duration)) { e.observe = f }

// NewEngine returns an engine whose sessions draw noise from crypto/rand,
// and makes executor hold each analyst to the budget cat configures
// (exec.Executor.SetUserLimits); executor may be nil in tests that run no
// private statement.
func NewEngine(cat *catalog.Config, executor *exec.Executor, ledger *budget.Ledger, log *slog.Logger) (*Engine, error) {
	if log == nil {
		log = slog.Default()
	}
	catalogDB, err := catalogdb.New(cat, Database, catalogdb.Variables{
		"version": ServerVersion, "version_comment": VersionComment,
		// What wire enforces (catalog applies the defaults); a user's own
		// max_user_connections is its session value (see Open).
		"max_allowed_packet":   cat.MaxAllowedPacket,
		"max_connections":      int64(cat.MaxConnections),
		"max_user_connections": int64(cat.MaxUserConnections),
		// The process's zone (dpproxy serve makes it backend.time_zone),
		// which the engine reads 'SYSTEM' in; its own default is the
		// zone when the process started.
		"system_time_zone": systemTimeZone(),
		// Names are shown as configured and resolve without case, as
		// MySQL's 2 says (stored as given, compared in lower case).
		"lower_case_table_names": int64(2),
	})
	if err != nil {
		return nil, err
	}
	e := &Engine{
		cat: cat, catalogDB: catalogDB, planner: planner.New(cat), executor: executor, ledger: ledger, log: log,
		newSource: noise.NewCryptoSource, parses: newParseGate(), answers: newAnswerGate(),
	}
	// Each proxy holds its analysts to its own configuration, against
	// the usage all proxies sharing the ledger add to.
	if executor != nil {
		executor.SetUserLimits(e.userLimit)
	}
	for _, u := range cat.Users {
		if err := catalogdb.CheckSessionVariables(e.sessionVariables(u.Name)); err != nil {
			return nil, fmt.Errorf("user %s: %w", u.Name, err)
		}
	}
	return e, nil
}

// userLimit returns the configured budget of user.
func (e *Engine) userLimit(user string) (budget.Cost, bool) {
	u, ok := e.cat.User(user)
	if !ok {
		return budget.Cost{}, false
	}
	return budget.Cost{Epsilon: u.Epsilon, Delta: u.Delta}, true
}

// SetColumnZones tells every session which date and timestamp columns the
// backend stores with a time zone, which a statement may not read while
// the session's time_zone differs from backend.time_zone
// (sqlrewrite.Parser.SetColumnZones). z may be updated while sessions
// run. Call it before sessions are opened.
func (e *Engine) SetColumnZones(z *catalog.ColumnZones) { e.zones = z }

// SetCharsets makes every session refuse, before anything is reserved, a
// text constant that the character set of a text column it meets cannot
// represent (sqlrewrite.Parser.SetCharsets). cs may be updated while
// sessions run. Call it before sessions are opened.
func (e *Engine) SetCharsets(cs *catalog.Charsets) { e.charsets = cs }

// RefusePrivacyUnits makes statements on tables with a privacy unit fail
// with an Unsupported error giving why (planner.RefusePrivacyUnits). Call
// it before sessions are opened.
func (e *Engine) RefusePrivacyUnits(why string) { e.planner.RefusePrivacyUnits(why) }

// Open starts the session of an authenticated connection. Its current
// database is dpproxy's until USE: unqualified names mean the configured
// tables, for the private path and the catalog engine alike.
func (e *Engine) Open(user string, connID uint32) *Session {
	s := &Session{
		engine:   e,
		user:     user,
		connID:   connID,
		parser:   sqlrewrite.NewParser(e.cat),
		catalog:  e.catalogDB.Open(user, connID, e.sessionVariables(user)),
		source:   e.newSource(),
		mechName: "auto",
	}
	s.setDatabase(Database)
	s.parser.SetCharsets(e.charsets)
	s.parser.SetColumnZones(e.zones)
	return s
}

// SetPort makes @@port the port the proxy listens on, as MySQL reports
// its own (3306 until then). Call it before serving: sessions opened
// afterwards see it.
func (e *Engine) SetPort(port int) error {
	return catalogdb.SetGlobalVariables(catalogdb.Variables{"port": int64(port)})
}

// sessionVariables are the system variables whose session value differs
// for user: max_user_connections when the user has its own limit, as MySQL
// shows an account's MAX_USER_CONNECTIONS.
func (e *Engine) sessionVariables(user string) catalogdb.Variables {
	if u, ok := e.cat.User(user); ok && u.MaxUserConnections > 0 {
		return catalogdb.Variables{"max_user_connections": int64(u.MaxUserConnections)}
	}
	return nil
}

// Result is the answer to one statement: a result set (Columns or Typed
// non-nil) or an OK.
type Result struct {
	// Typed, when set, defines the columns with their MySQL types (answers
	// of the catalog engine, private answers); Rows then hold nil or text
	// (in a DOUBLE column also a planner.FixedDouble: answer), and Columns
	// is unused.
	Typed        []catalogdb.Column
	Columns      []string
	Rows         [][]any
	AffectedRows uint64
	// Warnings is the number of rows SHOW WARNINGS would now list.
	Warnings uint16
}

// systemTimeZone is the name of the process's time zone now, as MySQL's
// system_time_zone shows its own ('UTC', 'JST').
func systemTimeZone() string {
	name, _ := time.Now().Zone()
	return name
}
