package wire

import (
	"errors"
	"net"
	"sync/atomic"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// preAuthMaxPacket caps a client packet before login. A handshake response
// carries a user name, a 20-byte scramble, a database name, a plugin name
// and connection attributes: real clients send a few hundred bytes.
const preAuthMaxPacket = 16 << 10

// errPacketTooLarge is sent, and returned by Read, when a client announces a
// packet above the limit in force; errPacketMemory when the packets all
// connections are receiving would exceed Config.MaxBufferedBytes.
var (
	errPacketTooLarge = gomysql.NewError(gomysql.ER_NET_PACKET_TOO_LARGE, "Got a packet bigger than 'max_allowed_packet' bytes")
	errPacketMemory   = gomysql.NewError(gomysql.ER_OUT_OF_RESOURCES, "Out of memory for client packets; try again later")
)

// packetMemory counts the bytes of the packets being received on all
// connections: a packet's announced length is taken when its header
// arrives, before go-mysql allocates it, and given back when its last byte
// has been read or its connection ends.
type packetMemory struct {
	used  atomic.Int64
	limit int64
}

// take reserves n bytes, or reports false if they do not fit.
func (m *packetMemory) take(n int64) bool {
	if m.used.Add(n) > m.limit {
		m.used.Add(-n)
		return false
	}
	return true
}

func (m *packetMemory) give(n int64) { m.used.Add(-n) }

// packetGuard reads the client's MySQL packet headers before go-mysql does,
// and fails the connection when one announces more than the limit in force:
// preAuthMaxPacket before login, Config.MaxAllowedPacket after. go-mysql
// allocates a packet's whole announced length as soon as it has read the
// 4-byte header, so without the guard 4 bytes of traffic cost 16 MiB.
//
// The guard parses the byte stream as packets (3-byte little-endian length,
// 1-byte sequence, payload) without buffering: it passes every byte through
// unchanged and only withholds a header it refuses. A logical packet split
// into 16 MiB - 1 pieces counts as their sum. On refusal it writes error 1153
// to the client with the next sequence number and every later Read fails.
//
// A connection upgraded to TLS carries TLS records, not packets, after its
// SSLRequest: the guard lets them through (passthrough), and connection
// places a second guard above the TLS layer once the handshake is done. The
// handshake response sent inside TLS is therefore not checked by this layer
// (see the README's limits).
type packetGuard struct {
	net.Conn
	memory        *packetMemory // shared by the server's connections
	held          int64         // bytes of memory held for the current packet
	tlsEnabled    bool          // the server accepts SSLRequest
	authenticated atomic.Bool   // set by connection after login
	maxAfterAuth  int64

	header      [4]byte
	headerN     int   // header bytes seen of the current packet
	remaining   int64 // payload bytes still to come in the current packet
	logical     int64 // payload bytes of the current logical packet so far
	packets     int   // complete headers seen
	passthrough bool  // the stream is TLS records from here on
	failed      error // set once a packet was refused
	// discardWrites drops writes (reporting success): set when wire has
	// already sent the connection's last packet itself.
	discardWrites bool
}

func newPacketGuard(c net.Conn, memory *packetMemory, tlsEnabled bool, maxAfterAuth int64) *packetGuard {
	return &packetGuard{Conn: c, memory: memory, tlsEnabled: tlsEnabled, maxAfterAuth: maxAfterAuth}
}

// release gives back the memory held for a packet not fully received; the
// connection calls it when it ends.
func (g *packetGuard) release() {
	g.memory.give(g.held)
	g.held = 0
}

// limit is the largest logical packet accepted now.
func (g *packetGuard) limit() int64 {
	if g.authenticated.Load() {
		return g.maxAfterAuth
	}
	return preAuthMaxPacket
}

// Read reads from the connection and checks every packet header in what it read.
func (g *packetGuard) Read(p []byte) (int, error) {
	if g.failed != nil {
		return 0, g.failed
	}
	n, err := g.Conn.Read(p)
	if g.passthrough {
		return n, err
	}
	if perr := g.scan(p[:n]); perr != nil {
		g.failed = perr
		return 0, perr
	}
	return n, err
}

// Write writes p, or drops it after a refusal or once discardWrites is set:
// go-mysql then writes an error of its own, which must not reach the client.
func (g *packetGuard) Write(p []byte) (int, error) {
	if g.failed != nil || g.discardWrites {
		return len(p), nil
	}
	return g.Conn.Write(p)
}

// scan advances the packet parser over b; it returns an error for a header
// above the limit, after telling the client.
func (g *packetGuard) scan(b []byte) error {
	for len(b) > 0 {
		if g.passthrough {
			return nil
		}
		if g.remaining > 0 {
			skip := min(g.remaining, int64(len(b)))
			g.remaining -= skip
			b = b[skip:]
			if g.remaining == 0 {
				g.release()
			}
			g.afterPayload()
			continue
		}
		g.header[g.headerN] = b[0]
		g.headerN++
		b = b[1:]
		if g.headerN < 4 {
			continue
		}
		g.headerN = 0
		g.packets++
		length := int64(g.header[0]) | int64(g.header[1])<<8 | int64(g.header[2])<<16
		g.logical += length
		if g.logical > g.limit() {
			g.refuse(errPacketTooLarge, g.header[3]+1)
			return errPacketTooLarge
		}
		if !g.memory.take(length) {
			g.refuse(errPacketMemory, g.header[3]+1)
			return errPacketMemory
		}
		g.held, g.remaining = length, length
		if length < int64(gomysql.MaxPayloadLen) {
			g.logical = 0
		}
		g.afterPayload()
	}
	return nil
}

// afterPayload switches to passthrough once the SSLRequest (the first
// client packet, 32 bytes of payload) has gone by on a TLS-enabled server.
func (g *packetGuard) afterPayload() {
	const sslRequestLen = 4 + 4 + 1 + 23
	if g.remaining == 0 && g.headerN == 0 && g.tlsEnabled && g.packets == 1 && !g.authenticated.Load() &&
		int(g.header[0])|int(g.header[1])<<8|int(g.header[2])<<16 == sslRequestLen {
		g.passthrough = true
	}
}

// refuse writes e with sequence number seq; the connection is about to be
// closed, so a failed write changes nothing.
func (g *packetGuard) refuse(e *gomysql.MyError, seq byte) {
	payload := append([]byte{gomysql.ERR_HEADER, byte(e.Code), byte(e.Code >> 8), '#'}, e.State...)
	payload = append(payload, e.Message...)
	n := len(payload)
	_, _ = g.Conn.Write(append([]byte{byte(n), byte(n >> 8), byte(n >> 16), seq}, payload...))
}

// refused reports whether the guard refused a packet (go-mysql wraps the
// error Read returned into text, so callers ask the guard).
func (g *packetGuard) refused() bool {
	return errors.Is(g.failed, errPacketTooLarge) || errors.Is(g.failed, errPacketMemory)
}
