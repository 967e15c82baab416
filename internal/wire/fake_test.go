package wire

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	gosqldriver "github.com/go-sql-driver/mysql"
)

// The test account.
const (
	testUser     = "analyst"
	testPassword = "s3cret pass"
)

// fakeAccounts maps users to their accounts.
type fakeAccounts map[string]Account

func (a fakeAccounts) Account(user string) (Account, bool) {
	acc, ok := a[user]
	return acc, ok
}

func (a fakeAccounts) Plugins() (native, cachingSHA2 int) {
	for _, acc := range a {
		if acc.CachingSHA2 {
			cachingSHA2++
		} else {
			native++
		}
	}
	return native, cachingSHA2
}

// NameSecret is the users' names and hashes in name order.
func (a fakeAccounts) NameSecret() []byte {
	var secret []byte
	for _, user := range slices.Sorted(maps.Keys(a)) {
		secret = append(append(append(secret, user...), 0), a[user].NativeHash...)
	}
	return secret
}

// testSHA2User logs in with caching_sha2_password and testPassword.
const testSHA2User = "analyst8"

// testLimitedUser logs in with testPassword and may have one connection.
const testLimitedUser = "analyst1"

// testOtherUser is another mysql_native_password user with testPassword.
const testOtherUser = "analyst2"

// testAccounts are the accounts of startServer.
var testAccounts = fakeAccounts{
	testUser:        {NativeHash: NativePasswordHash(testPassword)},
	testSHA2User:    {NativeHash: NativePasswordHash(testPassword), CachingSHA2: true},
	testLimitedUser: {NativeHash: NativePasswordHash(testPassword), MaxConnections: 1},
	testOtherUser:   {NativeHash: NativePasswordHash(testPassword)},
}

// codedError is an error with a MySQL code, as dperr.Error is.
type codedError struct {
	code  uint16
	state string
	msg   string
}

func (e *codedError) Error() string             { return e.msg }
func (e *codedError) SQLCode() (uint16, string) { return e.code, e.state }

// Statements the fake session understands. A lower-case "select" without
// "from" gets one row with each expression's text as its value; any other
// text is echoed back as a one-row result with the column "query", so tests
// see exactly what the session received.
const (
	qVersionComment = "select @@version_comment limit 1"
	qRows           = "ROWS"        // typed rows, NULL in the first row
	qEmpty          = "EMPTY"       // columns, no rows
	qOK             = "OK"          // OK packet, 3 affected rows
	qWarn           = "WARN"        // one row and 2 warnings
	qWarnOK         = "WARN OK"     // OK packet and 1 warning
	qCoded          = "ERR CODED"   // a coded error
	qWrapped        = "ERR WRAPPED" // a coded error wrapped with %w
	qPlain          = "ERR PLAIN"   // a plain error whose text must not leak
	qBlock          = "BLOCK"       // waits for fakeEngine.release or ctx
	qStuck          = "STUCK"       // waits for fakeEngine.release only, ignoring ctx
	qBadRow         = "BAD ROW"     // a value of a type wire cannot send
	qBig            = "BIG"         // one row of bigRowBytes
	qPanic          = "PANIC"       // the session panics
	// qTyped is described at prepare (fakeSession.Describe) with one
	// marker, and executes with the same columns, typedFields.
	qTyped      = "TYPED ?"
	plainSecret = "backend said: salary=123456"
)

// bigRowBytes is the size of qBig's row: two take a connection's open
// cursors past maxConnCursorBytes, one does not.
const bigRowBytes = maxConnCursorBytes/2 + 1

var (
	rowsColumns = []string{"COUNT(*)", "avg_salary", "name", "blob", "big"}
	rowsValues  = [][]any{
		{nil, 1.5, "x'y", []byte{0, 1}, uint64(1 << 63)},
		{int64(-7), nil, nil, nil, uint64(1)},
		{int64(42), -0.25, "ünï", []byte{}, nil},
	}
	typedFields = []Field{
		{Name: "category", Type: gomysql.MYSQL_TYPE_VAR_STRING, Length: 1020},
		{Name: "COUNT(*)", Type: gomysql.MYSQL_TYPE_LONGLONG, Flags: gomysql.BINARY_FLAG, Length: 20},
		{Name: "avg", Type: gomysql.MYSQL_TYPE_DOUBLE, Flags: gomysql.BINARY_FLAG, Length: 22, Decimals: 31},
	}
	codedErr = &codedError{code: 1226, state: "42000", msg: "privacy budget exhausted: remaining epsilon 0"}
)

// fakeEngine opens fakeSessions and records what they saw.
type fakeEngine struct {
	release chan struct{} // closed to let BLOCK and STUCK statements finish
	started chan string   // receives the query of each BLOCK and STUCK statement

	mu       sync.Mutex
	sessions []*fakeSession
}

func newFakeEngine() *fakeEngine {
	return &fakeEngine{release: make(chan struct{}), started: make(chan string, 16)}
}

func (e *fakeEngine) Open(user string, connID uint32, transport Transport) Session {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := &fakeSession{engine: e, user: user, connID: connID, transport: transport, closed: make(chan struct{})}
	e.sessions = append(e.sessions, s)
	return s
}

// session returns the i-th session opened.
func (e *fakeEngine) session(t *testing.T, i int) *fakeSession {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if i >= len(e.sessions) {
		t.Fatalf("got %d sessions, want more than %d", len(e.sessions), i)
	}
	return e.sessions[i]
}

func (e *fakeEngine) sessionCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.sessions)
}

// fakeSession answers the statements listed above.
type fakeSession struct {
	engine    *fakeEngine
	user      string
	connID    uint32
	transport Transport
	closed    chan struct{}

	mu      sync.Mutex
	dbs     []string
	queries []string
	// described are the statements Describe saw, each with its marker count.
	described []string
	// prepared are the prepared texts ExecutePrepared saw.
	prepared []string
	ctxErr   error // ctx.Err() seen by a BLOCK statement
	ctxCause error // and context.Cause(ctx)
	resets   int   // calls of Reset
	// answered counts the calls of Answered; answeredAt is its count as
	// each Execute began.
	answered   int
	answeredAt []int
	// refused are the errors Refused recorded, as "code message".
	refused []string
}

func (s *fakeSession) Execute(ctx context.Context, query string) (*Result, error) {
	s.mu.Lock()
	s.queries = append(s.queries, query)
	s.answeredAt = append(s.answeredAt, s.answered)
	s.mu.Unlock()
	if bound, ok := strings.CutPrefix(query, "TYPED "); ok {
		return &Result{Fields: typedFields, Rows: [][]any{{bound, "7", "1.5"}}}, nil
	}
	switch query {
	case qVersionComment:
		return &Result{Columns: []string{"@@version_comment"}, Rows: [][]any{{"dpproxy (fake)"}}}, nil
	case qRows:
		return &Result{Columns: rowsColumns, Rows: rowsValues}, nil
	case qEmpty:
		return &Result{Columns: []string{"a", "b"}}, nil
	case qOK:
		return &Result{AffectedRows: 3}, nil
	case qWarn:
		return &Result{Columns: []string{"v"}, Rows: [][]any{{int64(1)}}, Warnings: 2}, nil
	case qWarnOK:
		return &Result{Warnings: 1}, nil
	case qCoded:
		return nil, codedErr
	case qWrapped:
		return nil, fmt.Errorf("planning: %w", codedErr)
	case qPlain:
		return nil, errors.New(plainSecret)
	case qPanic:
		panic("fake session: " + query)
	case qBig:
		return &Result{Columns: []string{"big"}, Rows: [][]any{{strings.Repeat("x", bigRowBytes)}}}, nil
	case qBadRow:
		return &Result{Columns: []string{"t"}, Rows: [][]any{{time.Now()}}}, nil
	case qStuck:
		s.engine.started <- query
		<-s.engine.release
		return &Result{Columns: []string{"done"}, Rows: [][]any{{int64(1)}}}, nil
	case qBlock:
		s.engine.started <- query
		select {
		case <-s.engine.release:
			return &Result{Columns: []string{"done"}, Rows: [][]any{{int64(1)}}}, nil
		case <-ctx.Done():
			s.mu.Lock()
			s.ctxErr, s.ctxCause = ctx.Err(), context.Cause(ctx)
			s.mu.Unlock()
			return nil, ctx.Err()
		}
	}
	if fields, ok := strings.CutPrefix(query, "select "); ok && !strings.Contains(fields, " from ") {
		// Like the session's answers to client bootstrap statements such as
		// mariadb's "select DATABASE(), USER() limit 1": one row, one
		// value per selected expression (here its own text).
		fields, _, _ = strings.Cut(fields, " limit ")
		names := strings.Split(fields, ", ")
		row := make([]any, len(names))
		for i, n := range names {
			row[i] = n
		}
		return &Result{Columns: names, Rows: [][]any{row}}, nil
	}
	return &Result{Columns: []string{"query"}, Rows: [][]any{{query}}}, nil
}

// ExecutePrepared records the prepared text and executes bound.
func (s *fakeSession) ExecutePrepared(ctx context.Context, query, bound string) (*Result, error) {
	s.mu.Lock()
	s.prepared = append(s.prepared, query)
	s.mu.Unlock()
	return s.Execute(ctx, bound)
}

// Describe describes qTyped; it records the query and its marker count.
func (s *fakeSession) Describe(_ context.Context, query string, markers int) []Field {
	s.mu.Lock()
	s.described = append(s.described, fmt.Sprintf("%s (%d)", query, markers))
	s.mu.Unlock()
	if query == qTyped {
		return typedFields
	}
	if n, ok := strings.CutPrefix(query, "WIDE "); ok {
		cols, _ := strconv.Atoi(n)
		return slices.Repeat(typedFields[:1], cols)
	}
	return nil
}

func (s *fakeSession) UseDatabase(ctx context.Context, name string) error {
	if name == "nosuchdb" {
		return &codedError{code: 1049, state: "42000", msg: "Unknown database 'nosuchdb'"}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dbs = append(s.dbs, name)
	return nil
}

func (s *fakeSession) Refused(code uint16, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refused = append(s.refused, fmt.Sprintf("%d %s", code, message))
}

func (s *fakeSession) Answered() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answered++
}

func (s *fakeSession) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resets++
}

func (s *fakeSession) Close() { close(s.closed) }

func (s *fakeSession) isClosed() bool {
	select {
	case <-s.closed:
		return true
	default:
		return false
	}
}

// syncBuffer is a log sink the server writes from many goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// testServer is a Server on a loopback port with a fake engine.
type testServer struct {
	*Server
	address string
	engine  *fakeEngine
	logs    *syncBuffer
	cancel  context.CancelFunc
	done    chan error // receives Serve's result
}

// startServer serves on 127.0.0.1:0 until the test ends. cfg's zero fields
// get test-friendly values.
func startServer(t testing.TB, cfg Config) *testServer {
	t.Helper()
	logs := &syncBuffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if cfg.ShutdownGrace == 0 {
		cfg.ShutdownGrace = 2 * time.Second
	}
	engine := newFakeEngine()
	srv, err := NewServer(cfg, testAccounts, engine)
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ts := &testServer{Server: srv, address: l.Addr().String(), engine: engine, logs: logs, cancel: cancel, done: make(chan error, 1)}
	go func() { ts.done <- srv.Serve(ctx, l) }()
	t.Cleanup(func() {
		ts.cancel()
		select {
		case <-ts.done:
		case <-time.After(10 * time.Second):
			t.Errorf("Serve did not return after cancel")
		}
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	return ts
}

// addr is the server's host:port.
func (ts *testServer) addr() string { return ts.address }

// dsn is a go-sql-driver DSN for the server, without interpolateParams, so
// statements with arguments use COM_STMT_PREPARE/EXECUTE.
func (ts *testServer) dsn(user, password, db string) string {
	cfg := gosqldriver.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = user, password, "tcp", ts.addr(), db
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = 5*time.Second, 10*time.Second, 10*time.Second
	return cfg.FormatDSN()
}

// open returns a database/sql handle on the server as the test user.
func (ts *testServer) open(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", ts.dsn(testUser, testPassword, ""))
	if err != nil {
		t.Fatalf("sql.Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// mysqlError returns the *mysql.MySQLError in err, failing the test if none.
func mysqlError(t *testing.T, err error) *gosqldriver.MySQLError {
	t.Helper()
	var me *gosqldriver.MySQLError
	if !errors.As(err, &me) {
		t.Fatalf("got error %v (%T), want a *mysql.MySQLError", err, err)
	}
	return me
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v", what, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// scanAll returns the columns and all rows of rows scanned into []any, and
// closes rows.
func scanAll(rows *sql.Rows, err error) ([]string, [][]any, error) {
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, nil, err
	}
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		out = append(out, vals)
	}
	return cols, out, rows.Err()
}
