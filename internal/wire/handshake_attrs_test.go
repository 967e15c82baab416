package wire

import (
	"encoding/binary"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// handshakeResponse is a protocol-41 handshake response for user with a
// 20-byte (wrong) scramble, the mysql_native_password plugin and attrs as
// the connection attributes block, as the reviewer's client sent it.
func handshakeResponse(user string, attrs []byte) []byte {
	caps := uint32(gomysql.CLIENT_LONG_PASSWORD | gomysql.CLIENT_PROTOCOL_41 | gomysql.CLIENT_SECURE_CONNECTION |
		gomysql.CLIENT_PLUGIN_AUTH | gomysql.CLIENT_CONNECT_ATTRS)
	b := binary.LittleEndian.AppendUint32(nil, caps)
	b = binary.LittleEndian.AppendUint32(b, 1<<24)
	b = append(b, 45)
	b = append(b, make([]byte, 23)...)
	b = append(b, user...)
	b = append(b, 0, 20)
	b = append(b, make([]byte, 20)...)
	b = append(b, gomysql.AUTH_NATIVE_PASSWORD...)
	b = append(b, 0)
	return append(b, attrs...)
}

// TestTruncatedConnectAttrs: a handshake response whose connection
// attributes end inside a length-encoded integer (01 fc) is refused with
// 1043 before go-mysql parses it. go-mysql's readAttributes indexed past the
// packet's end and panicked, and every such connection logged an ERROR with
// a full stack: megabytes of log a second from one unauthenticated client.
func TestTruncatedConnectAttrs(t *testing.T) {
	ts := startServer(t, Config{})
	for _, attrs := range [][]byte{{0x01, 0xfc}, {0xfc, 0x01}, {0x05, 0x01, 'k', 0xfd, 0x01, 0x02}, {0x02, 0x01, 'k', 0xfe}} {
		c, err := net.Dial("tcp", ts.addr())
		if err != nil {
			t.Fatal(err)
		}
		readRawPacket(t, c)
		if _, err := c.Write(packet(1, handshakeResponse(testUser, attrs)...)); err != nil {
			t.Fatal(err)
		}
		p := readRawPacket(t, c)
		if p[0] != gomysql.ERR_HEADER || uint16(p[1])|uint16(p[2])<<8 != gomysql.ER_HANDSHAKE_ERROR {
			t.Errorf("attributes % x: got %q, want error 1043", attrs, p)
		}
		c.Close()
	}
	if n := ts.Panics(); n != 0 {
		t.Errorf("%d connections panicked", n)
	}
	if strings.Contains(ts.logs.String(), "panicked") {
		t.Errorf("the log reports a panic:\n%s", ts.logs.String())
	}
	// Well-formed attributes (go-mysql's client sends some) still log in.
	conn, err := client.Connect(ts.addr(), testUser, testPassword, "", func(c *client.Conn) error {
		c.SetAttributes(map[string]string{"_client_name": "test", "program_name": strings.Repeat("p", 300)})
		return nil
	})
	if err != nil {
		t.Fatalf("login with connection attributes: %v", err)
	}
	conn.Close()
}

func TestCheckHandshakeResponse(t *testing.T) {
	for _, tc := range []struct {
		attrs []byte
		ok    bool
	}{
		{nil, true},
		{[]byte{0}, true},
		{[]byte{0x04, 0x01, 'k', 0x01, 'v'}, true},
		{[]byte{0xfc, 0x04, 0x00, 0x01, 'k', 0x01, 'v'}, true},
		{[]byte{0x04, 0x01, 'k', 0x01, 'v', 0xfb}, true},
		{[]byte{0x01, 0xfc}, false},
		{[]byte{0xfc}, false},
		{[]byte{0xfd, 0x01, 0x00}, false},
		{[]byte{0x09, 0x01, 'k'}, false},             // block longer than the packet
		{[]byte{0x03, 0x01, 'k', 0x05, 'v'}, false},  // value longer than the packet
		{[]byte{0x03, 0x01, 'k', 0xfe, 1, 2}, false}, // 8-byte length cut short
	} {
		if got := checkHandshakeResponse(handshakeResponse("u", tc.attrs)); got != tc.ok {
			t.Errorf("attributes % x: check = %v, want %v", tc.attrs, got, tc.ok)
		}
	}
	// Without CLIENT_CONNECT_ATTRS the bytes after the plugin are not attributes.
	p := handshakeResponse("u", []byte{0x01, 0xfc})
	p[2] &^= byte(gomysql.CLIENT_CONNECT_ATTRS >> 16)
	if !checkHandshakeResponse(p) {
		t.Error("a response without CLIENT_CONNECT_ATTRS was refused")
	}
	// An auth length past the packet's end, with or without attributes:
	// go-mysql's readDb or readAttributes then sliced past the end and
	// panicked (an independent review of the first guard). So does a user
	// name without its NUL.
	for _, caps := range []uint32{
		gomysql.CLIENT_PROTOCOL_41 | gomysql.CLIENT_SECURE_CONNECTION | gomysql.CLIENT_CONNECT_WITH_DB,
		gomysql.CLIENT_PROTOCOL_41 | gomysql.CLIENT_SECURE_CONNECTION | gomysql.CLIENT_CONNECT_ATTRS,
	} {
		b := binary.LittleEndian.AppendUint32(nil, caps)
		b = binary.LittleEndian.AppendUint32(b, 1<<24)
		b = append(b, 45)
		b = append(b, make([]byte, 23)...)
		b = append(b, "demo\x00\x05"...)
		if checkHandshakeResponse(b) {
			t.Errorf("caps %#x: an auth length past the end was let through", caps)
		}
		if checkHandshakeResponse(append(b[:sslRequestLen:sslRequestLen], "demo"...)) {
			t.Errorf("caps %#x: a user name without its NUL was let through", caps)
		}
	}
}

// TestPanicLogThrottled: twenty connections from one address that each end
// in a panic are counted twenty times but logged on one ERROR line (with the
// number of panics it stands for), and only the first carries a stack.
// Before the fix each logged an ERROR with its stack, unthrottled.
func TestPanicLogThrottled(t *testing.T) {
	ts := startServer(t, Config{})
	const n = 20
	start := time.Now()
	for range n {
		conn, err := client.Connect(ts.addr(), testUser, testPassword, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Execute(qPanic); err == nil {
			t.Error("a panicking statement succeeded")
		}
		conn.Close()
	}
	waitFor(t, "panics counted", 10*time.Second, func() bool { return ts.Panics() == n })
	// One line a second per source: on a loaded machine the 20 panics may
	// span more than the 3 seconds an idle one takes.
	maxLines := 3 + int(time.Since(start)/time.Second)
	var errorLines, stacks int
	for _, line := range strings.Split(ts.logs.String(), "\n") {
		if strings.Contains(line, "level=ERROR") && strings.Contains(line, "connection panicked") {
			errorLines++
			if strings.Contains(line, "stack=") {
				stacks++
			}
			if !strings.Contains(line, "remote=127.0.0.1") || !strings.Contains(line, "events=") {
				t.Errorf("panic line without the source address or the event count: %s", line)
			}
		}
	}
	if errorLines < 1 || errorLines > maxLines || stacks != 1 {
		t.Errorf("%d panics logged on %d ERROR lines, %d with a stack; want 1 to %d lines, one stack", n, errorLines, stacks, maxLines)
	}
}
