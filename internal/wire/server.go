package wire

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"
)

// Server accepts MySQL connections and serves each with its own Session.
type Server struct {
	cfg      Config
	accounts Accounts
	auth     *authenticator
	engine   Engine
	mysql    *server.Server
	log      *slog.Logger

	started   time.Time
	questions atomic.Uint64 // commands received, for the metrics
	panics    atomic.Uint64 // connections ended by a recovered panic
	// panicStackLogged is set once a panic's stack was logged at ERROR.
	panicStackLogged atomic.Bool
	accepted         atomic.Uint64 // connections admitted
	refused          atomic.Uint64 // connections refused with 1040
	oversized        atomic.Uint64 // connections closed for a packet above the limit

	mu       sync.Mutex
	serving  bool
	draining bool
	conns    map[*connection]struct{}
	// handshakes counts the connections still in the handshake, in total
	// ("") and per source IP address.
	handshakes map[string]int
	// users counts the logged-in connections per user (see takeUserSlot).
	users map[string]int
	wg    sync.WaitGroup // connection goroutines, including refusals

	throttle     *logThrottle  // warnings about floods: refusals, oversized packets, failed logins, panics
	packetMemory *packetMemory // client packets being received, all connections
}

// NewServer returns a server that authenticates users against accounts and
// opens their sessions with engine. Zero fields of cfg take their defaults.
func NewServer(cfg Config, accounts Accounts, engine Engine) (*Server, error) {
	if accounts == nil || engine == nil {
		return nil, errors.New("wire: NewServer needs Accounts and an Engine")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	auth := newAuthenticator(accounts, cfg)
	return &Server{
		cfg:          cfg,
		accounts:     accounts,
		engine:       engine,
		auth:         auth,
		mysql:        server.NewServerWithAuth(cfg.ServerVersion, utf8mb4Collation, cfg.HandshakePlugin, cfg.RSAKey, goMySQLTLS(cfg.TLS), auth),
		log:          cfg.Logger,
		started:      time.Now(),
		conns:        make(map[*connection]struct{}),
		handshakes:   make(map[string]int),
		users:        make(map[string]int),
		throttle:     newLogThrottle(cfg.Logger, time.Second),
		packetMemory: newPacketMemory(cfg.MaxBufferedBytes, cfg.MaxAllowedPacket),
	}, nil
}

// ListenAndServe listens on Config.Addr and calls Serve. Tests and callers
// that need the bound address (port 0) call Serve with their own listener.
func (s *Server) ListenAndServe(ctx context.Context) error {
	l, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("wire: %w", err)
	}
	return s.Serve(ctx, l)
}

// Serve accepts connections on l until ctx is cancelled or l fails, then
// shuts down: it closes l, ends connections waiting for a command, lets
// statements in flight finish for up to Config.ShutdownGrace, then cancels
// their contexts and closes their connections. It returns once every
// connection goroutine has exited, or a further Config.ShutdownGrace
// after the cancellation, abandoning (and logging) the goroutines of
// statements that ignore it: nil after ctx was cancelled, else the
// listener's error. Serve closes l, and may be called once per Server.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	defer l.Close()
	s.mu.Lock()
	if s.serving {
		s.mu.Unlock()
		return errors.New("wire: Serve called twice")
	}
	s.serving = true
	s.mu.Unlock()

	connCtx, cancelConns := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelConns()
	stopClosing := context.AfterFunc(ctx, func() { l.Close() })
	defer stopClosing()

	s.log.Info("wire: serving", "addr", l.Addr().String())
	err := s.acceptLoop(ctx, connCtx, l)
	s.shutdown(cancelConns)
	s.log.Info("wire: stopped", "addr", l.Addr().String())
	return err
}

// acceptLoop accepts until ctx is cancelled (nil) or l fails for good.
func (s *Server) acceptLoop(ctx, connCtx context.Context, l net.Listener) error {
	var backoff time.Duration
	for {
		nc, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return fmt.Errorf("wire: %w", err)
			}
			// Out of file descriptors and the like: wait and retry, as net/http does.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.log.Warn("wire: accept failed; retrying", "err", err, "in", backoff)
			select {
			case <-time.After(backoff):
				continue
			case <-ctx.Done():
				return nil
			}
		}
		backoff = 0
		s.admit(connCtx, nc)
	}
}

// admit starts serving nc, or refuses it when the server is full or stopping.
func (s *Server) admit(connCtx context.Context, nc net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.draining {
		nc.Close()
		return
	}
	s.wg.Add(1)
	source := sourceOf(nc.RemoteAddr())
	if why := s.full(source); why != "" {
		s.refused.Add(1)
		s.throttle.warn("refused "+why, "wire: too many connections; refusing", "remote", nc.RemoteAddr().String(), "limit", why)
		go func() {
			defer s.wg.Done()
			s.refuse(nc, errTooManyConnections)
		}()
		return
	}
	s.accepted.Add(1)
	c := newConnection(connCtx, s, newDeadlineConn(nc, s.cfg), source)
	s.conns[c] = struct{}{}
	s.handshakes[""]++
	s.handshakes[source]++
	go func() {
		defer s.wg.Done()
		defer s.forget(c)
		c.serve()
	}()
}

// full says why a new connection from source cannot be admitted, or "".
// Connections in the handshake may not take more than MaxHandshakesPerSource
// from one address (checked first, so the refusal of a flooding address
// names its own cap), nor the ReservedSessions slots. Callers hold s.mu.
func (s *Server) full(source string) string {
	switch {
	case len(s.conns) >= s.cfg.MaxConnections:
		return "max_connections"
	case s.handshakes[source] >= s.cfg.MaxHandshakesPerSource:
		return "handshakes per source"
	case s.handshakes[""] >= s.cfg.MaxConnections-s.cfg.ReservedSessions:
		return "handshake slots"
	}
	return ""
}

// handshakeDone releases c's handshake slot; it is called once, at login or
// when a connection that never logged in ends.
func (s *Server) handshakeDone(c *connection) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !c.inHandshake {
		return
	}
	c.inHandshake = false
	s.handshakes[""]--
	if s.handshakes[c.source]--; s.handshakes[c.source] == 0 {
		delete(s.handshakes, c.source)
	}
}

func (s *Server) forget(c *connection) {
	s.handshakeDone(c)
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
	if u := c.slotUser; u != "" {
		if s.users[u]--; s.users[u] <= 0 {
			delete(s.users, u)
		}
	}
}

// takeUserSlot counts c, which has just authenticated as user, against the
// user's connection limit (Account.MaxConnections, else
// Config.MaxUserConnections), or returns error 1203 if the user already
// has that many connections: without it one user could take every slot.
func (s *Server) takeUserSlot(c *connection, user string) error {
	limit := s.cfg.MaxUserConnections
	if acc, ok := s.accounts.Account(user); ok && acc.MaxConnections > 0 {
		limit = acc.MaxConnections
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.users[user] >= limit {
		s.throttle.warn("user connections "+user, "wire: too many connections for the user; refusing",
			"remote", c.source, "user", user, "max_user_connections", limit)
		return gomysql.NewDefaultError(gomysql.ER_TOO_MANY_USER_CONNECTIONS, user)
	}
	s.users[user]++
	c.slotUser = user
	return nil
}

// sourceOf is the IP address of a remote address (the whole address if it
// has no port).
func sourceOf(a net.Addr) string {
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// refuse sends e as the first packet, in place of the handshake (clients
// read an error packet there), and closes nc.
func (s *Server) refuse(nc net.Conn, e *gomysql.MyError) {
	defer nc.Close()
	payload := append([]byte{gomysql.ERR_HEADER, byte(e.Code), byte(e.Code >> 8), '#'}, e.State...)
	payload = append(payload, e.Message...)
	n := len(payload)
	packet := append([]byte{byte(n), byte(n >> 8), byte(n >> 16), 0}, payload...)
	_ = nc.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
	_, _ = nc.Write(packet)
}

// shutdown ends every connection: at once for those between commands, after
// their statement for the others, and by force after the grace period: it
// cancels their statements and closes them, and returns once their
// goroutines have exited or, for those still running after a further grace
// period (a statement that ignores its context), without them (logged).
func (s *Server) shutdown(cancelConns context.CancelFunc) {
	s.mu.Lock()
	s.draining = true
	for c := range s.conns {
		c.raw.drain()
	}
	s.mu.Unlock()

	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	grace := time.NewTimer(s.cfg.ShutdownGrace)
	defer grace.Stop()
	select {
	case <-done:
		return
	case <-grace.C:
	}

	s.mu.Lock()
	s.log.Warn("wire: shutdown grace expired; cancelling statements", "connections", len(s.conns))
	cancelConns()
	for c := range s.conns {
		c.raw.Close()
	}
	s.mu.Unlock()
	// A statement that ignores its context (a computation that reads none)
	// would otherwise keep the process from ever stopping.
	abandon := time.NewTimer(s.cfg.ShutdownGrace)
	defer abandon.Stop()
	select {
	case <-done:
	case <-abandon.C:
		s.logAbandoned()
	}
}

// logAbandoned logs the connections whose goroutines are still running
// after their statements were cancelled, which shutdown stops waiting for.
func (s *Server) logAbandoned() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.running.mu.Lock()
		id, user := c.running.id, c.running.user
		c.running.mu.Unlock()
		c.log.Error("wire: shutdown abandons a connection whose statement ignored its cancellation", "conn", id, "user", user)
	}
	s.log.Error("wire: shutdown stopped waiting for connections", "abandoned", len(s.conns))
}

// statistics is the COM_STATISTICS answer (mariadb's "status" prints it)
// for a connection that has read questions commands: its own counts, not
// the server's, which would tell one analyst how many others are
// connected and how much they ask (operators have the metrics).
func (s *Server) statistics(questions uint64) string {
	uptime := time.Since(s.started)
	return fmt.Sprintf("Uptime: %d  Threads: 1  Questions: %d  Queries per second avg: %.3f",
		int64(uptime.Seconds()), questions, float64(questions)/max(uptime.Seconds(), 1))
}

// Stats are the server's counters since it started, for metrics.
type Stats struct {
	Open             int    // connections now open, logged in or not
	InHandshake      int    // of which not logged in yet
	Accepted         uint64 // connections admitted
	Refused          uint64 // connections refused with 1040
	OversizedPackets uint64 // connections closed for a packet above the limit (1153)
	FailedLogins     uint64
	Commands         uint64
	Panics           uint64 // connections ended by a recovered panic
}

// Stats returns the server's counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	open, handshaking := len(s.conns), s.handshakes[""]
	s.mu.Unlock()
	return Stats{
		Open: open, InHandshake: handshaking, Accepted: s.accepted.Load(), Refused: s.refused.Load(),
		OversizedPackets: s.oversized.Load(), FailedLogins: s.FailedLogins(), Commands: s.questions.Load(), Panics: s.panics.Load(),
	}
}

// Panics is the number of connections ended by a panic (recovered and
// logged); it should stay 0.
func (s *Server) Panics() uint64 { return s.panics.Load() }

// FailedLogins is the number of failed logins since the server started.
func (s *Server) FailedLogins() uint64 { return s.auth.limiter.failedLogins() }

// goMySQLTLS is the TLS configuration go-mysql gets for a server with TLS:
// it makes go-mysql announce CLIENT_SSL, and fails any handshake go-mysql
// would run itself, since the packet guard performs the upgrade (see
// packetGuard) and a TLS layer above the guard would hide packets from it.
func goMySQLTLS(c *tls.Config) *tls.Config {
	if c == nil {
		return nil
	}
	return &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		return nil, errors.New("wire: TLS upgrades belong to the packet guard")
	}}
}
