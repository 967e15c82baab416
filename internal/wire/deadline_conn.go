package wire

import (
	"errors"
	"net"
	"sync"
	"time"
)

// maxCommandBytes caps the bytes read from the socket for one command (or
// the handshake), a second bound behind packetGuard's. It is the largest
// MaxAllowedPacket plus 1/32 for what the socket carries besides the
// payload (a 4-byte header per 16 MiB piece, TLS record framing), so a
// packet the guard accepts is never cut short here.
const maxCommandBytes = maxMaxAllowedPacket + maxMaxAllowedPacket/32

// minAnswerRate is the slowest a client may read an answer: one must be
// written whole within WriteTimeout plus its bytes at this rate (a 64 MiB
// answer: 1,024 s more).
const minAnswerRate = 64 << 10

var (
	errDraining       = errors.New("wire: server is shutting down")
	errCommandTooLong = errors.New("wire: command larger than the largest max_allowed_packet")
)

// deadlineConn is the client's net.Conn with the server's timeouts applied to
// every Read and Write. It sits under go-mysql (and under TLS), so it sees
// every byte whatever go-mysql buffers.
//
// Before login (until loggedIn), no Read or Write may end after the
// handshake deadline, Config.HandshakeTimeout after accept, however the
// client spaces its bytes.
//
// The command loop calls awaitCommand before reading the next command: the
// first Read after it may wait IdleTimeout; once it has brought the
// command's first bytes, the rest of the command must arrive within
// ReadTimeout of them, however the client spaces its bytes (so a stalled
// large packet holds its share of Config.MaxBufferedBytes at most that
// long). If the command's first bytes were already read, ahead with the
// previous command, the command loop says so (awaitCommand(true)) and the
// ReadTimeout starts at once. Before the first awaitCommand, each Read may
// wait ReadTimeout.
// An answer (what is written between two awaitCommands) must be written
// whole within WriteTimeout plus its bytes at minAnswerRate, however the
// client spaces its reads: each Write's deadline is the earlier of
// WriteTimeout from it and that total for the bytes written so far with
// it (a client reading 2 KB every 20 s held a 65 MB answer, each Write
// re-arming WriteTimeout, for as long as it liked). A Write that misses it
// fails, and the connection is closed.
//
// drain makes pending and future Reads fail at once, so a connection waiting
// for a command ends while one executing a command still writes its answer.
type deadlineConn struct {
	net.Conn
	readTimeout, writeTimeout, idleTimeout time.Duration
	maxRead                                int64 // bytes one command may take
	minAnswerRate                          int64 // bytes per second an answer is written at, at least

	mu                sync.Mutex // guards the fields below and orders them with SetReadDeadline
	handshakeDeadline time.Time  // before login, no Read or Write outlasts it
	idle              bool       // the next Read waits for a new command
	commandDeadline   time.Time  // the current command must have arrived by then; zero before one started
	readSoFar         int64      // bytes read since the last awaitCommand
	answerStart       time.Time  // the first Write since the last awaitCommand; zero before it
	written           int64      // bytes written since the last awaitCommand
	draining          bool
}

func newDeadlineConn(c net.Conn, cfg Config) *deadlineConn {
	d := &deadlineConn{Conn: c, readTimeout: cfg.ReadTimeout, writeTimeout: cfg.WriteTimeout, idleTimeout: cfg.IdleTimeout, maxRead: maxCommandBytes, minAnswerRate: minAnswerRate}
	if cfg.HandshakeTimeout > 0 {
		d.handshakeDeadline = time.Now().Add(cfg.HandshakeTimeout)
	}
	return d
}

// loggedIn lifts the handshake deadline.
func (d *deadlineConn) loggedIn() {
	d.mu.Lock()
	d.handshakeDeadline = time.Time{}
	d.mu.Unlock()
}

// deadline is now+timeout, or the handshake deadline if that comes first.
func (d *deadlineConn) deadline(timeout time.Duration) time.Time {
	t := time.Now().Add(timeout)
	if !d.handshakeDeadline.IsZero() && d.handshakeDeadline.Before(t) {
		return d.handshakeDeadline
	}
	return t
}

// awaitCommand starts the idle wait for the next command or, if started
// (some of the command was read ahead with the previous one: go-mysql's
// buffered reader reads up to 64 KiB at a time), the command's ReadTimeout:
// a client must not get IdleTimeout to finish a packet it has begun.
func (d *deadlineConn) awaitCommand(started bool) {
	d.mu.Lock()
	d.idle, d.readSoFar, d.commandDeadline = !started, 0, time.Time{}
	d.answerStart, d.written = time.Time{}, 0
	if started {
		d.commandDeadline = time.Now().Add(d.readTimeout)
	}
	d.mu.Unlock()
}

// drain interrupts a pending Read and fails every later one.
func (d *deadlineConn) drain() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.draining = true
	_ = d.Conn.SetReadDeadline(time.Now())
}

// isDraining reports whether drain was called.
func (d *deadlineConn) isDraining() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.draining
}

// Read reads with the idle, the command's or the per-read deadline.
func (d *deadlineConn) Read(p []byte) (int, error) {
	d.mu.Lock()
	if d.draining {
		d.mu.Unlock()
		return 0, errDraining
	}
	if d.readSoFar >= d.maxRead {
		d.mu.Unlock()
		return 0, errCommandTooLong
	}
	waitingForCommand := d.idle
	deadline := d.deadline(d.readTimeout)
	switch {
	case d.idle:
		deadline, d.idle = d.deadline(d.idleTimeout), false
	case !d.commandDeadline.IsZero():
		deadline = d.commandDeadline
	}
	err := d.Conn.SetReadDeadline(deadline)
	d.mu.Unlock()
	if err != nil {
		return 0, err
	}
	n, err := d.Conn.Read(p)
	d.mu.Lock()
	d.readSoFar += int64(n)
	if waitingForCommand {
		d.commandDeadline = time.Now().Add(d.readTimeout)
	}
	d.mu.Unlock()
	return n, err
}

// Write writes with the per-write deadline, or the answer's if earlier.
func (d *deadlineConn) Write(p []byte) (int, error) {
	d.mu.Lock()
	deadline := d.deadline(d.writeTimeout)
	if d.answerStart.IsZero() {
		d.answerStart = time.Now()
	}
	d.written += int64(len(p))
	whole := d.answerStart.Add(d.writeTimeout + time.Duration(float64(d.written)/float64(d.minAnswerRate)*float64(time.Second)))
	if whole.Before(deadline) {
		deadline = whole
	}
	d.mu.Unlock()
	if err := d.Conn.SetWriteDeadline(deadline); err != nil {
		return 0, err
	}
	return d.Conn.Write(p)
}
