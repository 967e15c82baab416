package wire

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"
)

// serverStatus is the status announced in OK and EOF packets: dpproxy has no
// transactions, so every connection is in autocommit mode.
const serverStatus = gomysql.SERVER_STATUS_AUTOCOMMIT

// connection is one client connection: go-mysql does the handshake, and
// connection's own command loop reads each command and answers it.
//
// It runs its own loop rather than go-mysql's Conn.HandleCommand for two
// reasons: HandleCommand wraps every COM_STMT_EXECUTE error with
// errors.Trace, so go-mysql's writeError no longer sees a *mysql.MyError and
// sends 1105 instead of the session's code; and the loop must know when a
// connection is between commands, for the idle timeout and for shutdown.
type connection struct {
	srv    *Server
	raw    *deadlineConn
	guard  *packetGuard // between raw and go-mysql, doing the TLS upgrade; see packetGuard
	source string       // the client's IP address

	inHandshake bool            // holds a handshake slot; guarded by srv.mu
	slotUser    string          // the user whose connection count includes this one; guarded by srv.mu
	ctx         context.Context // cancelled when the server stops for good
	log         *slog.Logger

	mc      *server.Conn // set after the handshake
	id      uint32
	user    string
	loginDB string  // database named in the handshake, applied after auth
	session Session // opened after auth

	running runningStatement // what Server.Kill reaches

	stmts         map[uint32]*server.Stmt
	lastStmtID    uint32
	stmtBytes     int    // preparedCost of the statements in stmts
	longDataBytes int    // bytes of long data held by stmts
	cursorBytes   int    // bytes of rows held by the open cursors of stmts
	commands      uint64 // commands read so far, for error references
}

func newConnection(ctx context.Context, srv *Server, raw *deadlineConn, source string) *connection {
	return &connection{
		srv:         srv,
		raw:         raw,
		guard:       newPacketGuard(raw, srv.packetMemory, srv.cfg.TLS, srv.cfg.MaxAllowedPacket),
		source:      source,
		inHandshake: true,
		ctx:         ctx,
		log:         srv.log.With("remote", raw.RemoteAddr().String()),
		stmts:       make(map[uint32]*server.Stmt),
	}
}

// serve runs the connection to its end and releases everything it holds.
func (c *connection) serve() {
	defer func() {
		if p := recover(); p != nil {
			c.srv.connectionPanicked(c, p, debug.Stack())
		}
	}()
	defer c.closeSession()
	defer func() { c.guard.release() }()
	defer c.raw.Close()

	mc, err := c.srv.mysql.NewCustomizedConn(c.guard, c, c)
	if err != nil {
		if c.guard.refused() {
			c.srv.oversized.Add(1)
			c.srv.throttle.warn("preauth packet "+c.source, "wire: packet above the pre-login limit; connection closed",
				"remote", c.source, "limit", preAuthMaxPacket)
		} else {
			c.log.Debug("wire: handshake failed", "err", err)
		}
		return
	}
	c.mc = mc
	c.guard.handshakeDone()
	mc.SetStatus(serverStatus)
	c.commandLoop()
	c.log.Debug("wire: connection closed")
}

// connectionPanicked counts and logs a panic that ended c. A client that can
// make a connection panic can do it on every connection, so the ERROR line
// is throttled per source address (one a second, with the number of panics
// it stands for), and carries the stack only for the server's first panic;
// every stack is logged at debug level.
func (s *Server) connectionPanicked(c *connection, p any, stack []byte) {
	s.panics.Add(1)
	args := []any{"remote", c.source, "panic", fmt.Sprint(p)}
	if c.user != "" {
		args = append(args, "conn", c.id, "user", c.user)
	}
	first := !s.panicStackLogged.Swap(true)
	if first {
		args = append(args, "stack", string(stack))
	}
	s.throttle.error("panic "+c.source, "wire: connection panicked", args...)
	if !first {
		c.log.Debug("wire: connection panicked", "panic", p, "stack", string(stack))
	}
}

func (c *connection) closeSession() {
	if c.session != nil {
		c.session.Close()
		c.session = nil
	}
}

// commandLoop reads and answers commands until the client quits, a read or
// write fails (idle timeout, client gone) or the server drains.
func (c *connection) commandLoop() {
	for !c.raw.isDraining() {
		// A packet the guard has begun is the next command, read ahead
		// with the last: it must arrive within timeouts.read from now.
		c.raw.awaitCommand(c.guard.midPacket())
		data, err := c.mc.ReadPacket()
		if err != nil {
			if c.guard.refused() {
				c.srv.oversized.Add(1)
				c.log.Warn("wire: packet above max_allowed_packet; connection closed", "max_allowed_packet", c.srv.cfg.MaxAllowedPacket)
			} else {
				c.log.Debug("wire: read ended", "err", err)
			}
			return
		}
		c.commands++
		c.srv.questions.Add(1)
		ok := false
		c.guard.holdWrites()
		if len(data) == 0 {
			ok = c.respond(errMalformedPacket)
		} else {
			ok = c.dispatch(data[0], data[1:])
		}
		err = c.guard.flushWrites()
		if c.session != nil {
			c.session.Answered()
		}
		if err != nil {
			c.log.Debug("wire: write failed", "err", err)
			return
		}
		c.mc.ResetSequence()
		if !ok || c.wasKilled() {
			return
		}
	}
}

// dispatch answers one command; it returns false when the connection must end.
func (c *connection) dispatch(cmd byte, body []byte) bool {
	switch cmd {
	case gomysql.COM_QUIT:
		return false
	case gomysql.COM_PING:
		return c.respond(nil)
	case gomysql.COM_QUERY:
		return c.respond(answer(c.HandleQuery(string(body))))
	case gomysql.COM_INIT_DB:
		return c.respond(c.UseDB(string(body)))
	case gomysql.COM_FIELD_LIST:
		table, wildcard, _ := strings.Cut(string(body), "\x00")
		return c.respond(answer(c.HandleFieldList(table, wildcard)))
	case gomysql.COM_STMT_PREPARE:
		st, err := c.prepareStmt(string(body))
		if err != nil {
			return c.respond(err)
		}
		ok := c.respond(st)
		st.RawColumnFields = nil // sent; only the execution's result set defines columns again
		return ok
	case gomysql.COM_STMT_EXECUTE:
		p, cursor, r, err := c.executeStmt(body)
		if err == nil && cursor && r.Resultset != nil {
			return c.answerWithCursor(p, r)
		}
		return c.respond(answer(r, err))
	case gomysql.COM_STMT_FETCH:
		return c.fetchStmt(body)
	case gomysql.COM_STMT_SEND_LONG_DATA:
		c.appendLongData(body)
		return true
	case gomysql.COM_STMT_RESET:
		return c.respond(c.resetStmt(body))
	case gomysql.COM_STMT_CLOSE:
		c.closeStmt(body)
		return true
	case gomysql.COM_RESET_CONNECTION:
		c.resetConnection()
		return c.respond(nil)
	case gomysql.COM_CHANGE_USER:
		return c.respond(errChangeUser)
	case gomysql.COM_PROCESS_KILL:
		return c.respond(answer(c.processKill(body)))
	case gomysql.COM_STATISTICS:
		return c.writePayload([]byte(c.srv.statistics(c.commands)))
	case gomysql.COM_SET_OPTION:
		if err := c.HandleOtherCommand(cmd, body); err != nil {
			return c.respond(err)
		}
		return c.writePayload([]byte{gomysql.EOF_HEADER, 0, 0, byte(serverStatus), byte(serverStatus >> 8)})
	default:
		return c.respond(c.HandleOtherCommand(cmd, body))
	}
}

// processKill answers COM_PROCESS_KILL (connection id, 4 bytes), which
// MySQL's deprecated mysql_kill() sends, as the session answers KILL
// CONNECTION id (MySQL runs the command so): the same permission rule and
// answers, 1094 for an id no connection of the user has and 1317 for
// one's own.
func (c *connection) processKill(body []byte) (*gomysql.Result, error) {
	if len(body) < 4 {
		return nil, errMalformedPacket
	}
	return c.HandleQuery(fmt.Sprintf("KILL CONNECTION %d", binary.LittleEndian.Uint32(body[:4])))
}

// resetConnection handles COM_RESET_CONNECTION, which connection pools
// send when a connection is returned or lent again (MySQL
// Connector/Python's pool_reset_session, MariaDB Connector/C's
// mysql_reset_connection): the connection's prepared statements are
// closed, with their long data, and its session reset (Session.Reset).
// The login stays: user, connection id, TLS and the user's budget.
// Statement ids go on from where they were, so an id prepared before the
// reset names no statement after it.
func (c *connection) resetConnection() {
	for _, st := range c.stmts {
		c.dropStmt(st)
	}
	c.session.Reset()
}

// answer turns a handler's (value, error) pair into the value to write.
func answer[T any](v T, err error) any {
	if err != nil {
		return err
	}
	return v
}

// respond writes v as the answer to the current command: nil is an OK
// packet, an error an error packet (see wireError), anything else goes to
// go-mysql's WriteValue. It returns false if the write failed.
func (c *connection) respond(v any) bool {
	switch x := v.(type) {
	case error:
		v = c.wireError(x)
	case *gomysql.Result:
		// Resultsets announce warnings in their EOF packets, which take the
		// count from the connection.
		c.mc.SetWarnings(x.Warnings)
		defer c.mc.SetWarnings(0)
	}
	if err := c.mc.WriteValue(v); err != nil {
		c.log.Debug("wire: write failed", "err", err)
		return false
	}
	return true
}

// writePayload writes one packet with a payload go-mysql has no writer for.
func (c *connection) writePayload(payload []byte) bool {
	if err := c.mc.WritePacket(append(make([]byte, 4, 4+len(payload)), payload...)); err != nil {
		c.log.Debug("wire: write failed", "err", err)
		return false
	}
	return true
}

// wireError maps err for the client and logs what the client does not see.
func (c *connection) wireError(err error) *gomysql.MyError {
	ref := fmt.Sprintf("%d-%d", c.id, c.commands)
	me, internal := toMyError(err, ref)
	if internal {
		c.log.Error("wire: internal error", "ref", ref, "err", err)
	} else {
		c.log.Debug("wire: statement refused", "code", me.Code, "err", err)
	}
	return me
}

// connection is go-mysql's AuthenticationHandler for itself; the password
// check is the authenticator's.
var _ server.AuthenticationHandler = (*connection)(nil)

// GetCredential names the plugin user must log in with; see credentialFor.
func (c *connection) GetCredential(user string) (server.Credential, bool, error) {
	return c.srv.auth.credentialFor(user, c.srv.cfg.HandshakePlugin), true, nil
}

// OnAuthSuccess opens the connection's session and applies the database
// named at login; an error is sent instead of the OK packet.
//
// A user who already has as many connections as allowed gets 1203 instead.
func (c *connection) OnAuthSuccess(mc *server.Conn) error {
	if err := c.srv.takeUserSlot(c, mc.GetUser()); err != nil {
		return err
	}
	c.id, c.user = mc.ConnectionID(), mc.GetUser()
	c.loggedIn(c.id, c.user)
	c.guard.loggedIn(c.user)
	c.raw.loggedIn()
	c.srv.handshakeDone(c)
	c.log = c.log.With("conn", c.id, "user", c.user)
	transport := c.guard.transport()
	transport.Address = c.raw.RemoteAddr().String()
	c.session = c.srv.engine.Open(c.user, c.id, transport)
	if c.loginDB != "" {
		if err := c.UseDB(c.loginDB); err != nil {
			return c.wireError(err)
		}
	}
	c.log.Info("wire: login")
	return nil
}

// OnAuthFailure answers and logs a failed handshake. go-mysql would send
// any error that is not a bare *mysql.MyError as 1105 with its own internal
// text (and a stack trace in the log), so wire sends the error packet
// itself: the MyError in err's chain as it is (1045 for a wrong password,
// 1043 for a malformed handshake), anything else as 1043 "Bad handshake";
// go-mysql's own packet is then discarded.
//
// Failed logins are logged at most once a second per source address, with
// the number of failures the line stands for; a client that hangs up before
// sending a user (a TCP health check, a port scan) is logged at debug level.
// go-mysql's errors carry a stack trace after their first line, which the
// log leaves out. Passwords never reach the log: the server only sees a
// scramble, and does not log it.
func (c *connection) OnAuthFailure(mc *server.Conn, err error) {
	if c.guard.refused() {
		return // logged by serve; the guard already answered 1153
	}
	me := handshakeError(err)
	payload := append([]byte{gomysql.ERR_HEADER, byte(me.Code), byte(me.Code >> 8), '#'}, me.State...)
	payload = append(payload, me.Message...)
	_ = mc.WritePacket(append(make([]byte, 4, 4+len(payload)), payload...))
	c.guard.discardWrites = true

	msg, _, _ := strings.Cut(err.Error(), "\n")
	switch {
	case me.Code == gomysql.ER_ACCESS_DENIED_ERROR:
		c.srv.throttle.warn("login failed "+c.source, "wire: login refused", "remote", c.source, "user", mc.GetUser())
	case mc.GetUser() == "":
		c.log.Debug("wire: connection closed before login", "err", msg)
	default:
		c.log.Debug("wire: handshake failed", "user", mc.GetUser(), "code", me.Code, "err", msg)
	}
}

// handshakeError is the error packet for a failed handshake.
func handshakeError(err error) *gomysql.MyError {
	if me, ok := errors.AsType[*gomysql.MyError](err); ok {
		return me
	}
	return gomysql.NewError(gomysql.ER_HANDSHAKE_ERROR, "Bad handshake")
}
