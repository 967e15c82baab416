package wire

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// packet frames payload as a client packet with sequence number seq.
func packet(seq byte, payload ...byte) []byte {
	n := len(payload)
	return append([]byte{byte(n), byte(n >> 8), byte(n >> 16), seq}, payload...)
}

// FuzzPackets sends arbitrary bytes to an in-process server, before login
// (after reading the handshake) when the first byte is even, after logging
// in when it is odd, then half-closes and reads until the server hangs up.
// The server must never panic, must end every such connection within its
// deadlines, and must still accept a login afterwards. Seeds: well-formed
// and malformed commands, oversized headers. Run longer with
//
//	go test -run '^$' -fuzz FuzzPackets -fuzztime 10m ./internal/wire
func FuzzPackets(f *testing.F) {
	query := append([]byte{gomysql.COM_QUERY}, "select 1"...)
	prepare := append([]byte{gomysql.COM_STMT_PREPARE}, "select ?"...)
	execute := binary.LittleEndian.AppendUint32([]byte{gomysql.COM_STMT_EXECUTE}, 1)
	execute = append(execute, 0, 1, 0, 0, 0, 0, 1, gomysql.MYSQL_TYPE_NEWDECIMAL, 0, 3, '1', '.', '5')
	for _, seed := range [][]byte{
		packet(0, query...),
		append(packet(0, prepare...), packet(0, execute...)...),
		packet(0, gomysql.COM_PING),
		packet(0, gomysql.COM_STMT_SEND_LONG_DATA, 1, 0, 0, 0, 0, 0, 'x'),
		packet(0, gomysql.COM_FIELD_LIST, 't', 0),
		packet(0, gomysql.COM_STATISTICS),
		packet(0),
		{0xff, 0xff, 0xff, 0},
		packet(1, make([]byte, 32)...),
		packet(1, 0x85, 0xa6, 0xff, 0x01, 0, 0, 0, 1, 0x21),
		packet(1, handshakeResponse(testUser, []byte{0x01, 0xfc})...),
	} {
		f.Add(append([]byte{0}, seed...))
		f.Add(append([]byte{1}, seed...))
	}
	ts := startServer(f, Config{HandshakeTimeout: time.Second, ReadTimeout: time.Second, MaxAllowedPacket: 1 << 20})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		afterLogin, stream := data[0]%2 == 1, data[1:]
		var conn net.Conn
		if afterLogin {
			c, err := client.Connect(ts.addr(), testUser, testPassword, "")
			if err != nil {
				t.Fatalf("login: %v", err)
			}
			conn = c.Conn.Conn
		} else {
			c, err := net.Dial("tcp", ts.addr())
			if err != nil {
				t.Fatal(err)
			}
			readRawPacket(t, c)
			conn = c
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		_, _ = conn.Write(stream)
		_ = conn.(*net.TCPConn).CloseWrite()
		// The server ends the connection with a FIN, or with a reset when
		// it closes with fuzzed bytes still unread (TCP's rule, as for
		// MySQL's own server); a timeout is what the test catches.
		if _, err := io.Copy(io.Discard, conn); err != nil && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("the server did not end the connection: %v", err)
		}
		if ts.Panics() != 0 {
			t.Fatalf("the server panicked:\n%s", ts.logs.String())
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c, err := client.ConnectWithContext(ctx, ts.addr(), testUser, testPassword, "", 5*time.Second)
		if err != nil {
			t.Fatalf("login after the fuzzed connection: %v", err)
		}
		c.Close()
	})
}
