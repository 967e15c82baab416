//go:build unix

package wire

import (
	"net"
	"syscall"
	"time"
)

// watchHangup looks every hangupCheckInterval, until stop is called,
// whether the peer of conn has closed or reset the connection, and calls
// gone once if it has. It peeks (MSG_PEEK) without blocking, so bytes the
// client sent ahead (a pipelined command) stay for the command loop. A
// conn that is not a socket (net.Pipe in tests) is not watched.
func watchHangup(conn net.Conn, gone func()) (stop func()) {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return func() {}
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(hangupCheckInterval)
		defer t.Stop()
		var buf [1]byte
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			// Control, not Read: the peek never blocks, and the read
			// deadline of the command's last read must not count.
			closed := false
			err := rc.Control(func(fd uintptr) {
				n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
				closed = n == 0 && err == nil || err != nil && err != syscall.EAGAIN && err != syscall.EWOULDBLOCK && err != syscall.EINTR
			})
			if closed || err != nil { // err: the socket is closed
				gone()
				return
			}
		}
	}()
	return func() { close(done) }
}
