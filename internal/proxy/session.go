package proxy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/catalogdb"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/exec"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// Session is one client connection's state. It is used by one goroutine at a time.
type Session struct {
	engine *Engine
	user   string
	connID uint32
	parser *sqlrewrite.Parser
	// catalog is the session in the catalog engine: system and user
	// variables, current database.
	catalog *catalogdb.Session
	source  noise.Source

	// The privacy settings; zero epsilon/delta mean the configured defaults.
	epsilon  float64
	delta    float64
	mechName string
	trim     float64

	database string
	// prepared are the texts of SQL-level PREPARE, by lower-case name.
	prepared      map[string]string
	preparedBytes int // of the texts in prepared
	// markerLabels caches sqlrewrite.Parser.MarkerLabels by prepared
	// text (see relabel); markerLabelBytes is the length of its keys.
	markerLabels     map[string][]string
	markerLabelBytes int
	// notes are the conditions of the last statement (setNotes).
	notes notes
	// foundRows is FOUND_ROWS(): the number of rows of the last result
	// set the session sent (the client has seen them all), 0 before any.
	foundRows int64

	// tls is the connection's TLS version and cipher (SetTLS), which
	// Reset keeps.
	tls struct{ version, cipher string }
	// clientAddress is the client's address (SetClientAddress), which
	// Reset keeps.
	clientAddress string
	// heldAnswer releases the answer gate's reservation of the last
	// answer (holdAnswer) once it is written (Answered); nil if none.
	heldAnswer func()
}

// Close ends the session, releasing what its last answer holds.
func (s *Session) Close() { s.Answered() }

// Answered says that the last answer has been written to the client, or
// its write failed: the memory reserved for it at the answer gate
// (holdAnswer) is released. The server calls it after each command's
// answer; Execute and Reset call it too, as the previous answer was
// written before the next command was read.
func (s *Session) Answered() {
	if s.heldAnswer != nil {
		s.heldAnswer()
		s.heldAnswer = nil
	}
}

// holdAnswer waits until the answer gate lets the session hold the answer
// of qp, whose size its plan bounds (newAnswerGate); Answered releases
// it. It must come before anything is reserved or read: a wait that ends
// fails the statement uncharged (byteGate.enter).
func (s *Session) holdAnswer(ctx context.Context, qp *planner.QueryPlan) error {
	s.Answered() // none is held here (Execute released it); never wait for one's own
	release, err := s.engine.answers.enter(ctx, s.user, qp.ResultBound())
	if err != nil {
		return err
	}
	s.heldAnswer = release
	return nil
}

// SetTLS records that the session's connection uses TLS with this
// protocol version and cipher suite, named as MySQL names them
// ("TLSv1.3", "TLS_AES_128_GCM_SHA256"): SHOW SESSION STATUS shows them
// as Ssl_version and Ssl_cipher, which are "" on a plaintext connection.
func (s *Session) SetTLS(version, cipher string) {
	s.tls.version, s.tls.cipher = version, cipher
	s.catalog.SetTLS(version, cipher)
}

// SetClientAddress sets the client's address as the server sees it
// ("127.0.0.1:50334"), which SHOW PROCESSLIST shows as the connection's
// Host, as MySQL does.
func (s *Session) SetClientAddress(address string) {
	s.clientAddress = address
	s.catalog.SetClientHost(address)
}

// Reset answers COM_RESET_CONNECTION (connection pools send it when a
// connection is returned or lent again): the session becomes the one
// Engine.Open returned for its connection, so that every piece of state
// a statement can leave is gone: user variables, the privacy settings
// (@dp_epsilon, @dp_delta, @dp_mechanism, @dp_trim), system variables
// set by SET (sql_mode, sql_select_limit, time_zone, the character set
// and collation, ...), SQL-level PREPAREd statements, the warnings,
// FOUND_ROWS() and everything the catalog engine keeps (LAST_INSERT_ID(),
// ROW_COUNT()). What belongs to the connection stays: the user, the
// connection id, the TLS state and the client's address, the noise source (a reset must not restart
// a stream of noise) and the current database (MySQL and MariaDB keep it).
//
// Nothing budget-related is session state: what the user spent is in
// the ledger and stays spent, and repeated answers are kept in the ledger
// per analyst or per table (exec.Executor.SetRepeatWindow), so a reset
// neither refunds nor forgets anything there.
func (s *Session) Reset() {
	s.Answered()
	fresh := s.engine.Open(s.user, s.connID)
	fresh.source = s.source
	fresh.setDatabase(s.database)
	fresh.SetTLS(s.tls.version, s.tls.cipher)
	fresh.SetClientAddress(s.clientAddress)
	*s = *fresh
}

// UseDatabase switches the current database (COM_INIT_DB and USE): dpproxy's
// or the read-only information_schema.
func (s *Session) UseDatabase(_ context.Context, name string) error {
	switch {
	case strings.EqualFold(name, Database):
		name = Database
	case strings.EqualFold(name, sqlrewrite.CatalogDatabase):
		name = sqlrewrite.CatalogDatabase
	default:
		return dperr.New(dperr.UnknownDatabase, "Unknown database '%s' (dpproxy serves '%s' and '%s')", name, Database, sqlrewrite.CatalogDatabase)
	}
	s.setDatabase(name)
	return nil
}

// setDatabase makes name, a database dpproxy serves, the current one.
func (s *Session) setDatabase(name string) {
	s.database = name
	s.parser.SetDatabase(name)
	s.catalog.SetDatabase(name)
}

// Execute runs one statement.
//
// No statement panics out of Execute: a panic is logged on one line and
// answered as an internal error (a parser panic as a parse error).
func (s *Session) Execute(ctx context.Context, query string) (res *Result, err error) {
	if s.engine.observe != nil {
		start := time.Now()
		defer func() {
			outcome := "ok"
			if err != nil {
				outcome = dperr.KindOf(err).String()
			}
			s.engine.observe(outcome, time.Since(start))
		}()
	}
	defer func() {
		if r := recover(); r != nil {
			s.engine.log.Error("statement panicked", "conn", s.connID, "user", s.user, "panic", fmt.Sprint(r))
			res, err = nil, dperr.New(dperr.Internal, "internal error")
			s.setWarnings(errorWarning(err))
		}
		if err != nil {
			s.Answered() // an error holds no answer
		}
	}()
	s.Answered()
	stmt, err := s.parse(ctx, query)
	if err != nil {
		var pp *sqlrewrite.ParserPanic
		if errors.As(err, &pp) {
			s.engine.log.Error("parser panicked; statement refused", "conn", s.connID, "user", s.user, "panic", fmt.Sprint(pp.Value))
		}
		s.setWarnings(errorWarning(err))
		return nil, err
	}
	res, err = s.execute(ctx, stmt)
	if err == nil {
		err = checkResult(res)
	}
	if err != nil {
		if dperr.KindOf(err) == dperr.Internal {
			// The cause may quote data-dependent detail: the log only.
			s.engine.log.Error("statement failed", "conn", s.connID, "user", s.user, "err", err, "cause", errors.Unwrap(err))
		}
		s.setWarnings(errorWarning(err))
		return nil, err
	}
	if res != nil && (len(res.Columns) > 0 || res.Typed != nil) {
		s.foundRows = int64(len(res.Rows))
	}
	return res, nil
}

// execute answers one statement, then cuts the answer of a top-level
// SELECT without a LIMIT of its own to the session's sql_select_limit, as
// MySQL does (JDBC's Statement.setMaxRows sets it), its columns announced
// as without the cut. The cut is
// post-processing of the rows the answer released, whichever path answered
// it: a private answer is charged what it was planned to cost, however
// many of its rows the client is sent. FOUND_ROWS() then counts the rows
// sent, as MySQL counts a statement's rows up to its limit.
func (s *Session) execute(ctx context.Context, stmt sqlrewrite.Statement) (*Result, error) {
	res, err := s.dispatch(ctx, stmt)
	if err != nil || res == nil {
		return res, err
	}
	if limit := s.selectLimit(stmt); uint64(len(res.Rows)) > limit {
		if limit == 0 && res.Typed == nil {
			// Cut to no row, a result typed by its values (a constant
			// SELECT's) would announce every column as NULL: it keeps the
			// types its rows give it, as a private answer cut by LIMIT 0
			// keeps its plan's.
			if typed, ok := valueColumns(res.Columns, res.Rows); ok {
				res.Typed = typed
			}
		}
		res.Rows = res.Rows[:limit]
	}
	return res, nil
}

// selectLimit is how many rows of stmt's answer the client is sent: the
// session's sql_select_limit if it cuts stmt (sqlrewrite.SelectLimitApplies),
// no limit otherwise. The catalog engine reads no more (catalogQuery), so
// that its bound on a statement's rows counts only the rows sent.
func (s *Session) selectLimit(stmt sqlrewrite.Statement) uint64 {
	if !sqlrewrite.SelectLimitApplies(stmt) {
		return math.MaxUint64
	}
	return s.catalog.SelectLimit()
}

// dispatch answers one statement on the path its kind takes.
func (s *Session) dispatch(ctx context.Context, stmt sqlrewrite.Statement) (*Result, error) {
	if sqlrewrite.ColumnsOnlyApplies(stmt) {
		return s.columnsOnly(stmt)
	}
	switch st := stmt.(type) {
	case *sqlrewrite.Select:
		return s.selectPrivate(ctx, st)
	case *sqlrewrite.Query:
		return s.query(ctx, st)
	case *sqlrewrite.Explain:
		return s.explain(st)
	case *sqlrewrite.SetVariables:
		return s.set(ctx, st)
	case *sqlrewrite.ShowWarnings:
		return s.showWarnings(st), nil
	case *sqlrewrite.ShowGrants:
		return s.showGrants(st)
	case *sqlrewrite.Catalog:
		// The catalog engine parses the statement again, and so does a
		// zero-row probe's private reading.
		release, err := s.engine.parses.enter(ctx, s.user, int64(len(st.SQL)))
		if err != nil {
			return nil, err
		}
		defer release()
		res, err := s.catalogQuery(ctx, st.SQL, s.selectLimit(st))
		if err == nil && st.ZeroRow != "" && res.Typed != nil {
			res.Typed = s.probeColumns(st.SQL, res.Typed, false)
		}
		if err != nil && st.ZeroRow != "" && dperr.KindOf(err) == dperr.Unsupported {
			if empty, ok := s.emptyPrivate(ctx, st.SQL); ok {
				return empty, nil
			}
		}
		return res, err
	case *sqlrewrite.Prepare:
		return s.prepare(ctx, st)
	case *sqlrewrite.ExecutePrepared:
		return s.executePrepared(ctx, st)
	case *sqlrewrite.Deallocate:
		return s.deallocate(st)
	case *sqlrewrite.ConstantSelect:
		return s.constantSelect(ctx, st)
	case *sqlrewrite.ConstantUnion:
		return s.constantUnion(ctx, st)
	case *sqlrewrite.Use:
		if err := s.UseDatabase(ctx, st.Database); err != nil {
			return nil, err
		}
		s.setWarnings(nil)
		return &Result{}, nil
	case *sqlrewrite.Kill:
		return s.kill(st)
	case *sqlrewrite.Empty:
		s.setWarnings(nil)
		return &Result{}, nil
	}
	return nil, dperr.New(dperr.Internal, "internal error: unhandled statement %T", stmt)
}

// emptyPrivate answers a zero-row probe the catalog engine cannot run
// (WITH ROLLUP, a window function) as the private path reads it, when
// that reading plans no row whatever the data (planner.QueryPlan.Empty:
// LIMIT 0, sql_select_limit 0): its columns and no row, nothing
// reserved, read or spent. ok is false otherwise, for the engine's
// refusal to stand. Whether the probe fails does not depend on the data:
// the catalog engine's copy of the table holds no row.
func (s *Session) emptyPrivate(ctx context.Context, sql string) (*Result, bool) {
	if len(sql) > largeStatementBytes {
		return nil, false // parsed again only behind the large-parse gate
	}
	stmt, err := s.parser.ParseDescribed(sql)
	q, isQuery := stmt.(*sqlrewrite.Query)
	if err != nil || !isQuery || q.FromLess != "" {
		return nil, false
	}
	qp, err := s.engine.planner.PlanQuery(q, s.settings())
	if err != nil || !qp.Empty {
		return nil, false
	}
	out, err := s.engine.executor.RunQuery(ctx, s.user, qp, s.source)
	if err != nil {
		return nil, false
	}
	res, err := answer(out)
	if err != nil {
		return nil, false
	}
	s.setWarnings(out.Warnings)
	return res, true
}

// columnsOnly answers a private statement that sql_select_limit 0 leaves
// no row whatever the data, but whose LIMIT 0 form is refused
// (sqlrewrite.TopLevel.ColumnsOnly): it is planned, and refused as it
// would be otherwise, and answered with the columns its plan announces
// and no row. Nothing is reserved, read or spent.
func (s *Session) columnsOnly(stmt sqlrewrite.Statement) (*Result, error) {
	cols, err := s.planColumns(stmt, false)
	if err != nil {
		return nil, err
	}
	if cols == nil {
		return nil, dperr.New(dperr.Internal, "internal error: no columns planned for %T", stmt)
	}
	s.setWarnings([]exec.Warning{{Level: "Note", Code: exec.NoteCode,
		Message: "sql_select_limit = 0 leaves no row whatever the data: no data read, no budget spent"}})
	return &Result{Typed: cols, Warnings: 1}, nil
}

// kill answers KILL [QUERY | CONNECTION] id as MySQL does for a user
// without the PROCESS privilege: only the user's own connections, 1094 for
// an id no connection of the user has. MySQL answers 1095 for another
// user's connection, which tells that the id is in use; dpproxy answers
// 1094 there too. The killed statement fails
// with 1317 "query canceled"; it is charged if its fetch was already sent
// (the budget rule of every cancelled statement). Clients send KILL QUERY
// on a second connection when the user presses Ctrl-C (the mariadb and
// mysql command-line clients do). KILL of the session's own id interrupts
// the KILL itself: 1317, as in MySQL (KILL CONNECTION then closes it).
func (s *Session) kill(k *sqlrewrite.Kill) (*Result, error) {
	if s.engine.connections == nil {
		return nil, dperr.New(dperr.Unsupported, "not supported: KILL in this server")
	}
	if k.ConnectionID > math.MaxUint32 {
		return nil, dperr.New(dperr.NoSuchConnection, "Unknown thread id: %d", k.ConnectionID)
	}
	if !s.engine.connections.Kill(s.user, uint32(k.ConnectionID), !k.Query) {
		return nil, dperr.New(dperr.NoSuchConnection, "Unknown thread id: %d", k.ConnectionID)
	}
	if k.ConnectionID == uint64(s.connID) {
		// KILL of one's own connection interrupts the KILL itself, which
		// MySQL answers with 1317 (and KILL CONNECTION then closes it).
		return nil, dperr.New(dperr.Canceled, "Query execution was interrupted")
	}
	s.setWarnings(nil)
	return &Result{}, nil
}

// settings returns the privacy settings of the next statement.
func (s *Session) settings() planner.Settings {
	p := s.engine.cat.Privacy
	st := planner.Settings{Epsilon: p.DefaultEpsilon, Delta: p.DefaultDelta, Mechanism: s.mechName, Trim: planner.DefaultTrim}
	if s.epsilon > 0 {
		st.Epsilon = s.epsilon
	}
	if s.delta > 0 {
		st.Delta = s.delta
	}
	if s.trim > 0 {
		st.Trim = s.trim
	}
	return st
}

func (s *Session) selectPrivate(ctx context.Context, sel *sqlrewrite.Select) (*Result, error) {
	plan, err := s.engine.planner.Plan(sel, s.settings())
	if err != nil {
		return nil, err
	}
	if err := s.withinCap(ctx, plan); err != nil {
		return nil, err
	}
	out, err := s.engine.executor.Run(ctx, s.user, plan, s.source)
	if err != nil {
		return nil, err
	}
	s.engine.queries.Add(1)
	s.setWarnings(out.Warnings)
	return answer(out)
}

// withinCap refuses, before anything is reserved, a statement that could
// spend more than privacy.max_epsilon: its releases and the synopses it
// would build (each charged once, to the statement that builds it).
func (s *Session) withinCap(ctx context.Context, plan *planner.Plan) error {
	builds, columns, err := s.engine.executor.SynopsisBuilds(ctx, plan)
	if err != nil || builds == 0 {
		return err
	}
	limit := s.engine.cat.Privacy.MaxEpsilon
	total := plan.Cost.Epsilon + builds
	if total <= limit {
		return nil
	}
	advice := fmt.Sprintf("lower @dp_epsilon to %g or less", limit-builds)
	if builds >= limit {
		advice = "ask for the range counts of fewer columns in one statement"
	}
	return dperr.New(dperr.InvalidValue,
		"this statement would spend epsilon = %g: %g for its answers and %g to build the synopses of %s (once, for every later statement), above privacy.max_epsilon = %g; %s",
		total, plan.Cost.Epsilon, builds, strings.Join(columns, ", "), limit, advice)
}

func (s *Session) explain(ex *sqlrewrite.Explain) (*Result, error) {
	if ex.ZeroRow != "" {
		s.setWarnings(nil)
		cols, rows := planner.ExplainZeroRow(ex.ZeroRow)
		return &Result{Columns: cols, Rows: rows}, nil
	}
	if ex.Query != nil {
		qp, err := s.engine.planner.PlanQuery(ex.Query, s.settings())
		if err != nil {
			return nil, err
		}
		s.setWarnings(nil)
		cols, rows := qp.Explain()
		return &Result{Columns: cols, Rows: rows}, nil
	}
	plan, err := s.engine.planner.Plan(ex.Select, s.settings())
	if err != nil {
		return nil, err
	}
	s.setWarnings(nil)
	cols, rows := plan.Explain()
	return &Result{Columns: cols, Rows: rows}, nil
}

// set applies SET: dp_* user variables are privacy settings, validated here;
// every other variable is set by the catalog engine, which keeps the session's
// values. Nothing changes unless every assignment is valid.
func (s *Session) set(ctx context.Context, st *sqlrewrite.SetVariables) (*Result, error) {
	p := s.engine.cat.Privacy
	// Validate everything first so a bad assignment changes nothing.
	type change func()
	var changes []change
	for _, a := range st.Assignments {
		a := a
		switch a.Name {
		case "dp_epsilon":
			if a.Default {
				changes = append(changes, func() { s.epsilon = 0 })
				continue
			}
			v, err := number(a)
			if err != nil {
				return nil, err
			}
			// Below the smallest ε any mechanism accepts, every statement
			// would be refused; say so now.
			if !(v >= planner.MinEpsilon) || v > p.MaxEpsilon {
				return nil, dperr.New(dperr.InvalidValue, "@dp_epsilon must be in [2^-50, %g], got %g", p.MaxEpsilon, v)
			}
			changes = append(changes, func() { s.epsilon = v })
		case "dp_delta":
			if a.Default {
				changes = append(changes, func() { s.delta = 0 })
				continue
			}
			v, err := number(a)
			if err != nil {
				return nil, err
			}
			if !(v >= planner.MinDelta) || v > p.MaxDelta {
				return nil, dperr.New(dperr.InvalidValue, "@dp_delta must be in [2^-1000, %g], got %g", p.MaxDelta, v)
			}
			changes = append(changes, func() { s.delta = v })
		case "dp_trim":
			if a.Default {
				changes = append(changes, func() { s.trim = 0 })
				continue
			}
			v, err := number(a)
			if err != nil {
				return nil, err
			}
			if !(v > 0 && v < 1) {
				return nil, dperr.New(dperr.InvalidValue, "@dp_trim is the total fraction the trimmed mean drops, in (0, 1), got %g", v)
			}
			changes = append(changes, func() { s.trim = v })
		case "dp_mechanism":
			name := "auto"
			if !a.Default {
				if !a.Value.IsText {
					return nil, dperr.New(dperr.InvalidValue, "@dp_mechanism takes a name in quotes: %s", strings.Join(s.engine.planner.MechanismNames(), ", "))
				}
				name = strings.ToLower(a.Value.Str)
			}
			if err := s.engine.planner.Withdrawn(name); err != nil {
				return nil, err
			}
			if !s.engine.planner.ValidMechanism(name) {
				return nil, dperr.New(dperr.InvalidValue, "unknown mechanism '%s'; valid: %s", a.Value.Str, strings.Join(s.engine.planner.MechanismNames(), ", "))
			}
			changes = append(changes, func() { s.mechName = name })
		default:
			return nil, dperr.New(dperr.InvalidValue, "unknown dpproxy setting @%s; the settings are @dp_epsilon, @dp_delta, @dp_mechanism and @dp_trim", a.Name)
		}
	}
	if st.Catalog != "" {
		if _, err := s.catalogQuery(ctx, st.Catalog, math.MaxUint64); err != nil {
			return nil, err
		}
	}
	for _, c := range changes {
		c()
	}
	s.setWarnings(nil)
	return &Result{}, nil
}

func number(a sqlrewrite.Assignment) (float64, error) {
	if a.Value.IsText || math.IsNaN(a.Value.Num) || math.IsInf(a.Value.Num, 0) {
		return 0, dperr.New(dperr.InvalidValue, "@%s takes a number", a.Name)
	}
	return a.Value.Num, nil
}

// setWarnings records w, the conditions of the statement that just
// ended (setNotes).
func (s *Session) setWarnings(w []exec.Warning) {
	n := s.newNotes()
	n.add(w...)
	s.setNotes(n)
}

// setNotes records the conditions of the statement that just ended,
// which SHOW WARNINGS lists (at most max_error_count of them: notes) and
// the next statements' @@warning_count and @@error_count count (the
// catalog engine reads them: a statement that reads them, which has no
// outcome yet, reads its predecessor's, as in MySQL).
func (s *Session) setNotes(n *notes) {
	s.notes = *n
	s.catalog.SetConditions(n.count)
}

func (s *Session) showWarnings(st *sqlrewrite.ShowWarnings) *Result {
	if st.Count {
		// SHOW COUNT(*) WARNINGS | ERRORS: what @@warning_count and
		// @@error_count read, under MySQL's column names.
		n, name := s.notes.count.All, "@@session.warning_count"
		if st.Errors {
			n, name = s.notes.count.Errors, "@@session.error_count"
		}
		return &Result{Columns: []string{name}, Rows: [][]any{{int64(n)}}}
	}
	rows := [][]any{}
	for _, w := range s.notes.kept {
		if !st.Errors || w.Level == "Error" {
			rows = append(rows, []any{w.Level, int64(w.Code), w.Message})
		}
	}
	if st.Limit != nil {
		start, end := st.Limit.Rows(len(rows))
		rows = rows[start:end]
	}
	// SHOW WARNINGS does not clear the warnings it shows.
	return &Result{Columns: []string{"Level", "Code", "Message"}, Rows: rows}
}

// Refused records that the wire layer refused a statement with the error
// code and message before the session saw it (1300 for text that is not
// UTF-8), as a statement's own error is recorded: SHOW WARNINGS then
// lists it alone, at level Error, and @@warning_count and @@error_count
// count it, as in MariaDB.
func (s *Session) Refused(code uint16, message string) {
	s.setWarnings([]exec.Warning{{Level: "Error", Code: code, Message: message}})
}

// errorWarning is what SHOW WARNINGS lists after a failed statement, as
// MySQL does: the message the client was sent, never the text of a cause
// (an error that is not a *dperr.Error reaches the client as an internal
// error, wire.toMyError).
func errorWarning(err error) []exec.Warning {
	code, _ := dperr.KindOf(err).Code()
	message := "internal error"
	if e, ok := errors.AsType[*dperr.Error](err); ok {
		message = e.Error()
	}
	return []exec.Warning{{Level: "Error", Code: code, Message: message}}
}

// remaining returns what remains of the user's budget, as this proxy
// configures it, after what the user spent through every proxy sharing
// the ledger.
func (s *Session) remaining(ctx context.Context) (eps, delta float64, err error) {
	limit, ok := s.engine.userLimit(s.user)
	if !ok {
		return 0, 0, dperr.New(dperr.Internal, "no privacy budget is configured for user %s", s.user)
	}
	c, err := s.engine.ledger.RemainingUnder(ctx, catalog.UserAccount(s.user), limit)
	if err != nil {
		return 0, 0, dperr.Wrap(dperr.Internal, err, "internal error: budget ledger unavailable")
	}
	return c.Epsilon, c.Delta, nil
}

func (s *Session) String() string { return fmt.Sprintf("session %d (%s)", s.connID, s.user) }

// parse parses one statement of the session once the engine's parse gate
// (newParseGate) lets it (a wait that ends returns its error: byteGate.enter).
func (s *Session) parse(ctx context.Context, text string) (sqlrewrite.Statement, error) {
	release, err := s.engine.parses.enter(ctx, s.user, int64(len(text)))
	if err != nil {
		return nil, err
	}
	defer release()
	return s.parseText(text)
}

// parseText parses text under the session's settings; the caller holds
// the parse gate for it.
func (s *Session) parseText(text string) (sqlrewrite.Statement, error) {
	// NOW() in a private statement reads the zone the catalog engine's
	// NOW() reads: the session's time_zone.
	s.parser.SetSessionTimeZone(s.catalog.TimeZone())
	// Post-processing compares literals' text in the collation the
	// catalog engine compares them in: the session's collation_connection.
	s.parser.SetSessionCollation(s.catalog.CollationConnection())
	// Under sql_select_limit 0 a private SELECT is read as with LIMIT 0:
	// no row, nothing read or spent.
	s.parser.SetSelectLimitZero(s.catalog.SelectLimit() == 0)
	return s.parser.Parse(text)
}
