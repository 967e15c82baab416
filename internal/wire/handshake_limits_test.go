package wire

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// slowClient connects from source (a loopback address such as 127.0.0.2),
// reads the first packet and then sends one byte of a handshake response
// every interval until the server closes the connection or stop is closed.
// It returns the first packet (the handshake, or a 1040 refusal) and a
// channel that is closed when the server ended the connection.
func slowClient(t *testing.T, addr, source string, interval time.Duration, stop <-chan struct{}) ([]byte, <-chan struct{}) {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(source)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	first := readRawPacket(t, c)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		defer c.Close()
		// A 100-byte handshake response, one byte at a time.
		msg := append([]byte{100, 0, 0, 1}, make([]byte, 100)...)
		for _, b := range msg {
			select {
			case <-stop:
				return
			case <-time.After(interval):
			}
			if _, err := c.Write([]byte{b}); err != nil {
				return
			}
		}
		_, _ = c.Read(make([]byte, 1))
	}()
	return first, ended
}

func isRefusal(p []byte) bool {
	return p[0] == gomysql.ERR_HEADER && uint16(p[1])|uint16(p[2])<<8 == gomysql.ER_CON_COUNT_ERROR
}

// TestHandshakeDeadline: a client that keeps sending a byte well within
// ReadTimeout is still cut off when the whole handshake exceeds
// HandshakeTimeout. Before the fix only each read was bounded, so such a
// client held its slot forever.
func TestHandshakeDeadline(t *testing.T) {
	ts := startServer(t, Config{HandshakeTimeout: 400 * time.Millisecond})
	stop := make(chan struct{})
	defer close(stop)
	start := time.Now()
	_, ended := slowClient(t, ts.addr(), "127.0.0.1", 50*time.Millisecond, stop)
	select {
	case <-ended:
		if took := time.Since(start); took < 300*time.Millisecond {
			t.Errorf("closed after %v, before the handshake deadline", took)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("a slow handshake was still open after 3s, want it closed after 400ms")
	}
}

// TestSlowHandshakesCannotLockOutLogins: twenty clients from one address
// dribbling their handshakes take at most MaxHandshakesPerSource slots, so
// a login from elsewhere works while they are connected; and connections in
// the handshake never take the ReservedSessions slots. Before the fix the
// twenty took every slot and the login got 1040.
func TestSlowHandshakesCannotLockOutLogins(t *testing.T) {
	ts := startServer(t, Config{MaxConnections: 20, MaxHandshakesPerSource: 4, HandshakeTimeout: 5 * time.Second})
	stop := make(chan struct{})
	defer close(stop)
	admitted := 0
	for range 20 {
		if first, _ := slowClient(t, ts.addr(), "127.0.0.2", 200*time.Millisecond, stop); !isRefusal(first) {
			admitted++
		}
	}
	if admitted != 4 {
		t.Errorf("admitted %d slow handshakes from one address, want 4", admitted)
	}
	db := ts.open(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		t.Fatalf("login while slow handshakes are open: %v", err)
	}

	// Many addresses: handshakes get MaxConnections - ReservedSessions slots.
	ts2 := startServer(t, Config{MaxConnections: 10, ReservedSessions: 3, HandshakeTimeout: 5 * time.Second})
	admitted = 0
	for i := range 10 {
		if first, _ := slowClient(t, ts2.addr(), fmt.Sprintf("127.0.1.%d", i+1), 200*time.Millisecond, stop); !isRefusal(first) {
			admitted++
		}
	}
	if admitted != 7 {
		t.Errorf("admitted %d slow handshakes, want 10 - 3 reserved = 7", admitted)
	}
}

// TestDefaultHandshakesPerSourceScales: with max_connections below about
// 71, the old default per-address cap (64) was at least the handshake
// slots, and one address opening silent connections took them all (an
// independent review). The default is now a quarter of the slots.
func TestDefaultHandshakesPerSourceScales(t *testing.T) {
	ts := startServer(t, Config{MaxConnections: 40}) // 36 handshake slots, 9 per address
	dialer := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
	for range 36 {
		nc, err := dialer.Dial("tcp", ts.addr())
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
	}
	waitFor(t, "the refusals", 2*time.Second, func() bool { return ts.refused.Load() == 36-9 })
	db := ts.open(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		t.Errorf("login while another address holds 36 silent connections: %v", err)
	}
}
