package wire

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// loginFrom logs in to addr from the loopback address source.
func loginFrom(ctx context.Context, addr, source, user, password string) (*client.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(source)}}
	return client.ConnectWithDialer(ctx, "tcp", addr, user, password, "", d.DialContext)
}

// TestLoginBackoff: eight clients guessing passwords from one address for
// 1.5 s get a handful of guesses checked, not thousands (2,506 guesses/s
// from one client before the fix); a valid login from another address, and
// from an address that logged in as the user before, does not wait; the
// failures are logged on few lines, without the password.
func TestLoginBackoff(t *testing.T) {
	ts := startServer(t, Config{HandshakeTimeout: 10 * time.Second})
	ctx := context.Background()
	// The user's usual address logs in once before the attack.
	if c, err := loginFrom(ctx, ts.addr(), "127.0.0.1", testUser, testPassword); err != nil {
		t.Fatal(err)
	} else {
		c.Close()
	}

	const guessPassword = "guess-123456"
	var guesses atomic.Int64
	attackCtx, stop := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer stop()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for attackCtx.Err() == nil {
				c, err := loginFrom(attackCtx, ts.addr(), "127.0.0.2", testUser, guessPassword)
				if err == nil {
					c.Close()
					t.Error("a wrong password logged in")
					return
				}
				if me, ok := errors.AsType[*gomysql.MyError](err); ok && me.Code == gomysql.ER_ACCESS_DENIED_ERROR {
					guesses.Add(1)
				}
			}
		})
	}
	// During the attack, valid logins from elsewhere are prompt.
	time.Sleep(500 * time.Millisecond)
	for _, source := range []string{"127.0.0.1", "127.0.0.3"} {
		start := time.Now()
		c, err := loginFrom(ctx, ts.addr(), source, testUser, testPassword)
		if err != nil {
			t.Fatalf("valid login from %s during the attack: %v", source, err)
		}
		c.Close()
		if took := time.Since(start); source == "127.0.0.1" && took > 300*time.Millisecond {
			t.Errorf("valid login from the user's usual address took %v during the attack", took)
		}
	}
	wg.Wait()
	n := guesses.Load()
	t.Logf("%d guesses answered in 1.5 s from 8 clients", n)
	if n > 40 {
		t.Errorf("%d guesses answered in 1.5 s, want at most 40", n)
	}
	if got := ts.Server.FailedLogins(); got < uint64(n) {
		t.Errorf("FailedLogins = %d, want at least %d", got, n)
	}
	logs := ts.logs.String()
	if lines := strings.Count(logs, "wire: login refused"); lines == 0 || lines > 5 {
		t.Errorf("%d log lines for %d failed logins, want 1 to 5", lines, n)
	}
	if strings.Contains(logs, guessPassword) {
		t.Error("the log contains the guessed password")
	}
}

// TestLoginLimiterBackoff checks the schedule: free failures, then doubling
// delays up to the cap, per source and per user; trusted pairs skip the
// user's delay; a success clears the source.
func TestLoginLimiterBackoff(t *testing.T) {
	l := newLoginLimiter()
	now := time.Unix(1e9, 0)
	l.now = func() time.Time { return now }
	for range loginFreeFailures {
		if d := l.delay("a", "u"); d != 0 {
			t.Fatalf("delay %v within the free failures", d)
		}
		l.record("a", "u", false)
	}
	for i, want := range []time.Duration{100, 200, 400, 800, 1600, 3200, 5000, 5000} {
		if d := l.delay("a", "x"); d != want*time.Millisecond {
			t.Errorf("failure %d: source delay %v, want %v", loginFreeFailures+i, d, want*time.Millisecond)
		}
		l.record("a", "u", false)
	}
	if d := l.delay("b", "u"); d != loginMaxDelay {
		t.Errorf("user delay from a new source: %v, want %v", d, loginMaxDelay)
	}
	l.record("c", "u", true) // clears u; c is now trusted for u
	if d := l.delay("c", "u"); d != 0 {
		t.Errorf("after a success: %v", d)
	}
	now = now.Add(loginForget)
	if d := l.delay("a", "u"); d != 0 {
		t.Errorf("after loginForget: %v", d)
	}
}

// TestHandshakeErrorCodes: malformed handshake responses get 1043 "Bad
// handshake", never 1105 with go-mysql's internal text.
func TestHandshakeErrorCodes(t *testing.T) {
	ts := startServer(t, Config{})
	for name, caps := range map[string]uint32{
		"no CLIENT_PROTOCOL_41":       0,
		"no CLIENT_SECURE_CONNECTION": gomysql.CLIENT_PROTOCOL_41,
	} {
		c, err := net.Dial("tcp", ts.addr())
		if err != nil {
			t.Fatal(err)
		}
		readRawPacket(t, c)
		payload := make([]byte, 40)
		payload[0], payload[1], payload[2], payload[3] = byte(caps), byte(caps>>8), byte(caps>>16), byte(caps>>24)
		if _, err := c.Write(append([]byte{40, 0, 0, 1}, payload...)); err != nil {
			t.Fatal(err)
		}
		p := readRawPacket(t, c)
		c.Close()
		code := uint16(p[1]) | uint16(p[2])<<8
		if p[0] != gomysql.ERR_HEADER || code != gomysql.ER_HANDSHAKE_ERROR || string(p[9:]) != "Bad handshake" {
			t.Errorf("%s: got %d %q, want 1043 Bad handshake", name, code, p[3:])
		}
	}
}
