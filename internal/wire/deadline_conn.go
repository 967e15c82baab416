package wire

import (
	"errors"
	"net"
	"sync"
	"time"
)

// maxCommandBytes caps the bytes read for one command (or the handshake), as
// MySQL's max_allowed_packet does, so a client cannot make go-mysql buffer an
// unbounded packet.
const maxCommandBytes = 64 << 20

var (
	errDraining       = errors.New("wire: server is shutting down")
	errCommandTooLong = errors.New("wire: command larger than 64 MiB")
)

// deadlineConn is the client's net.Conn with the server's timeouts applied to
// every Read and Write. It sits under go-mysql (and under TLS), so it sees
// every byte whatever go-mysql buffers.
//
// The command loop calls awaitCommand before reading the next command: the
// first Read after it may wait IdleTimeout, the following ones ReadTimeout.
// drain makes pending and future Reads fail at once, so a connection waiting
// for a command ends while one executing a command still writes its answer.
type deadlineConn struct {
	net.Conn
	readTimeout, writeTimeout, idleTimeout time.Duration
	maxRead                                int64 // bytes one command may take

	mu        sync.Mutex // guards the fields below and orders them with SetReadDeadline
	idle      bool       // the next Read waits for a new command
	readSoFar int64      // bytes read since the last awaitCommand
	draining  bool
}

func newDeadlineConn(c net.Conn, cfg Config) *deadlineConn {
	return &deadlineConn{Conn: c, readTimeout: cfg.ReadTimeout, writeTimeout: cfg.WriteTimeout, idleTimeout: cfg.IdleTimeout, maxRead: maxCommandBytes}
}

// awaitCommand starts the idle wait for the next command.
func (d *deadlineConn) awaitCommand() {
	d.mu.Lock()
	d.idle, d.readSoFar = true, 0
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

// Read reads with the idle or the per-read deadline.
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
	timeout := d.readTimeout
	if d.idle {
		timeout, d.idle = d.idleTimeout, false
	}
	err := d.Conn.SetReadDeadline(time.Now().Add(timeout))
	d.mu.Unlock()
	if err != nil {
		return 0, err
	}
	n, err := d.Conn.Read(p)
	d.mu.Lock()
	d.readSoFar += int64(n)
	d.mu.Unlock()
	return n, err
}

// Write writes with the per-write deadline.
func (d *deadlineConn) Write(p []byte) (int, error) {
	if err := d.Conn.SetWriteDeadline(time.Now().Add(d.writeTimeout)); err != nil {
		return 0, err
	}
	return d.Conn.Write(p)
}
