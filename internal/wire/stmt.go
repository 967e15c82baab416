package wire

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"

	"github.com/dpproxy/dpproxy/internal/bind"
)

// Limits on prepared statements, per connection. With them a connection
// holds at most maxPreparedBytes for its prepared statements (text and
// markers, see preparedCost) and maxConnLongDataBytes of long data, besides
// the packet being read.
const (
	maxPreparedStatements = 1024     // like a per-connection max_prepared_stmt_count
	maxPreparedBytes      = 16 << 20 // preparedCost of the connection's prepared statements
	maxLongDataBytes      = 16 << 20 // COM_STMT_SEND_LONG_DATA bytes per statement
	maxConnLongDataBytes  = 16 << 20 // and for all the connection's statements together
	// maxPreparedColumns is MySQL's limit on a table's columns: a
	// statement whose result has more is not prepared (its definitions,
	// held until the prepare's answer is sent, took about 80 bytes a
	// column, and COM_STMT_PREPARE_OK counts columns in 2 bytes).
	maxPreparedColumns = 4096
)

// Errors for the per-connection limits; like the per-statement long data
// limit, they are 1153, with a message naming the limit.
var (
	errPreparedBytes = gomysql.NewError(gomysql.ER_NET_PACKET_TOO_LARGE, fmt.Sprintf(
		"The prepared statements of this connection would hold more than %d bytes (text, plus 6 bytes per ? marker); close some first", maxPreparedBytes))
	// errTooManyColumns is MySQL's ER_TOO_MANY_FIELDS (1117, 42000);
	// MariaDB prepares such a statement, and one of more than 65535
	// columns announces their count modulo 65536.
	errTooManyColumns = &gomysql.MyError{Code: gomysql.ER_TOO_MANY_FIELDS, State: "42000", Message: fmt.Sprintf(
		"Too many columns: a prepared statement may return at most %d", maxPreparedColumns)}
	errConnLongDataBytes = gomysql.NewError(gomysql.ER_NET_PACKET_TOO_LARGE, fmt.Sprintf(
		"The prepared statements of this connection would hold more than %d bytes of long data; execute or reset them first", maxConnLongDataBytes))
)

// prepared is what wire keeps of one prepared statement: it is emulated, so
// only the text, its markers and the arguments' wire state are needed.
type prepared struct {
	query   string
	offsets []uint32 // byte offsets of the ? markers in query, with no spare capacity
	types   []byte   // type and flag byte per parameter, from the last execution that sent them

	// columns are the definitions of the result columns announced at
	// prepare (Session.Describe), until they are sent.
	columns [][]byte

	longData      map[int][]byte // parameters sent with COM_STMT_SEND_LONG_DATA
	longDataBytes int
	longDataErr   error // reported by the next execution (SEND_LONG_DATA has no reply)

	cursor *cursor // the open cursor of the last execution, or nil
}

// clearLongData forgets p's long data, as MySQL does after each execution,
// on COM_STMT_RESET and when the statement is closed.
func (c *connection) clearLongData(p *prepared) {
	c.longDataBytes -= p.longDataBytes
	p.longData, p.longDataBytes, p.longDataErr = nil, 0, nil
}

// preparedCost is what a prepared statement of text query with params ?
// markers counts against maxPreparedBytes: its text, 4 bytes per marker's
// offset and 2 per marker's type and flag bytes (kept once an execution
// sends them). A text of only markers thus costs 7 bytes per byte.
func preparedCost(query string, params int) int {
	return len(query) + 6*params
}

// prepareStmt answers COM_STMT_PREPARE. A statement that would take the
// connection's prepared statements past maxPreparedBytes is refused with
// 1153; the text alone is checked before its markers are counted. Text
// that is not UTF-8 is refused (checkText).
func (c *connection) prepareStmt(query string) (*server.Stmt, error) {
	if err := c.checkText(query, ""); err != nil {
		return nil, err
	}
	if len(c.stmts) >= maxPreparedStatements {
		return nil, gomysql.NewDefaultError(gomysql.ER_MAX_PREPARED_STMT_COUNT_REACHED, maxPreparedStatements)
	}
	if c.stmtBytes+len(query) > maxPreparedBytes {
		return nil, errPreparedBytes
	}
	params, columns, ctx, err := c.HandleStmtPrepare(query)
	if err != nil {
		return nil, err
	}
	cost := preparedCost(query, params)
	if c.stmtBytes+cost > maxPreparedBytes {
		return nil, errPreparedBytes
	}
	c.lastStmtID++
	st := &server.Stmt{Query: query, Context: ctx}
	st.ID, st.Params, st.Columns = c.lastStmtID, params, columns
	p := ctx.(*prepared)
	st.RawColumnFields, p.columns = p.columns, nil
	c.stmts[st.ID] = st
	c.stmtBytes += cost
	return st, nil
}

// executeStmt runs a COM_STMT_EXECUTE: statement id (4 bytes), flags (1),
// iteration count (4, always 1), then the arguments. It returns the
// statement and whether the flags ask for a read-only cursor
// (CURSOR_TYPE_READ_ONLY; see answerWithCursor); the other flag bits are
// ignored, as MySQL and MariaDB ignore them (PARAMETER_COUNT_AVAILABLE
// means something only with query attributes, which the server does not
// offer, but go-mysql's client sets it anyway). The statement's open
// cursor, if any, is closed first, whatever the execution's outcome.
func (c *connection) executeStmt(body []byte) (p *prepared, cursor bool, r *gomysql.Result, err error) {
	if len(body) < 9 {
		return nil, false, nil, errMalformedPacket
	}
	st, err := c.stmt(body, "mysqld_stmt_execute")
	if err != nil {
		return nil, false, nil, err
	}
	p = st.Context.(*prepared)
	c.closeCursor(p)
	cursor = body[4]&gomysql.CURSOR_TYPE_READ_ONLY != 0
	longDataErr := p.longDataErr
	args, err := decodeArguments(p, body[9:])
	c.clearLongData(p)
	if longDataErr != nil {
		return nil, false, nil, longDataErr
	}
	if err != nil {
		c.refusedText(err) // a text argument that is not UTF-8
		return nil, false, nil, err
	}
	r, err = c.HandleStmtExecute(p, p.query, args)
	return p, cursor, r, err
}

// appendLongData handles COM_STMT_SEND_LONG_DATA: statement id (4 bytes),
// parameter index (2), data. It has no reply, so errors wait for the next
// execution; data for an unknown statement is dropped, as MySQL does.
func (c *connection) appendLongData(body []byte) {
	if len(body) < 6 {
		return
	}
	st, err := c.stmt(body, "mysqld_stmt_send_long_data")
	if err != nil {
		return
	}
	p := st.Context.(*prepared)
	i := int(binary.LittleEndian.Uint16(body[4:6]))
	data := body[6:]
	switch {
	case p.longDataErr != nil:
	case i >= len(p.offsets):
		p.longDataErr = errWrongArguments("long data for parameter %d of %d", i+1, len(p.offsets))
	case p.longDataBytes+len(data) > maxLongDataBytes:
		p.longDataErr = gomysql.NewDefaultError(gomysql.ER_NET_PACKET_TOO_LARGE)
	case c.longDataBytes+len(data) > maxConnLongDataBytes:
		p.longDataErr = errConnLongDataBytes
	default:
		if p.longData == nil {
			p.longData = make(map[int][]byte)
		}
		p.longData[i] = append(p.longData[i], data...)
		p.longDataBytes += len(data)
		c.longDataBytes += len(data)
	}
}

// resetStmt answers COM_STMT_RESET (statement id, 4 bytes) with OK; the
// statement's long data and open cursor are discarded.
func (c *connection) resetStmt(body []byte) error {
	if len(body) < 4 {
		return errMalformedPacket
	}
	st, err := c.stmt(body, "mysqld_stmt_reset")
	if err != nil {
		return err
	}
	c.clearLongData(st.Context.(*prepared))
	c.closeCursor(st.Context.(*prepared))
	return nil
}

// closeStmt handles COM_STMT_CLOSE (statement id, 4 bytes), which has no reply.
func (c *connection) closeStmt(body []byte) {
	if len(body) < 4 {
		return
	}
	if st, err := c.stmt(body, "mysqld_stmt_close"); err == nil {
		c.dropStmt(st)
	}
}

// dropStmt forgets a prepared statement, its long data and its cursor.
func (c *connection) dropStmt(st *server.Stmt) {
	_ = c.HandleStmtClose(st.Context)
	c.clearLongData(st.Context.(*prepared))
	c.closeCursor(st.Context.(*prepared))
	c.stmtBytes -= preparedCost(st.Query, st.Params)
	delete(c.stmts, st.ID)
}

// stmt looks up the statement whose id starts body.
func (c *connection) stmt(body []byte, command string) (*server.Stmt, error) {
	id := binary.LittleEndian.Uint32(body[:4])
	st, ok := c.stmts[id]
	if !ok {
		s := strconv.FormatUint(uint64(id), 10)
		return nil, gomysql.NewDefaultError(gomysql.ER_UNKNOWN_STMT_HANDLER, len(s), s, command)
	}
	return st, nil
}

// HandleStmtPrepare counts the statement's ? markers and announces the
// result columns the session describes (Session.Describe), or none when
// it cannot tell them before the statement runs (clients then learn them
// from the execution's result set, which always defines its columns). It
// runs nothing: the statement is checked when it executes.
func (c *connection) HandleStmtPrepare(query string) (params, columns int, ctx any, err error) {
	offsets := bind.Markers(query)
	if len(offsets) > math.MaxUint16 {
		return 0, 0, nil, gomysql.NewDefaultError(gomysql.ER_PS_MANY_PARAM)
	}
	p := &prepared{query: query, offsets: offsets}
	describeCtx, end := c.begin()
	fields := c.session.Describe(describeCtx, query, len(offsets))
	end()
	if len(fields) > maxPreparedColumns {
		return 0, 0, nil, errTooManyColumns
	}
	for _, f := range fields {
		p.columns = append(p.columns, f.mysqlField().Dump())
	}
	return len(offsets), len(p.columns), p, nil
}

// HandleStmtExecute substitutes args as literals into the prepared text and
// executes the result through the session (Session.ExecutePrepared); rows
// use the binary protocol.
func (c *connection) HandleStmtExecute(ctx any, query string, args []any) (*gomysql.Result, error) {
	text, err := bindArguments(query, ctx.(*prepared).offsets, args)
	if err != nil {
		return nil, err
	}
	stmtCtx, end := c.begin()
	defer end()
	r, err := c.session.ExecutePrepared(stmtCtx, query, text)
	if err != nil {
		return nil, err
	}
	return toMySQLResult(r, true)
}

// HandleStmtClose has nothing to release: the statement lives in wire only.
func (c *connection) HandleStmtClose(any) error { return nil }
