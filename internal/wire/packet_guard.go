package wire

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// preAuthMaxPacket caps a client packet before login. A handshake response
// carries a user name, a 20-byte scramble, a database name, a plugin name
// and connection attributes: real clients send a few hundred bytes.
const preAuthMaxPacket = 16 << 10

// freePacketBytes is the largest packet not counted against
// Config.MaxBufferedBytes. Logins and ordinary statements fit, so clients
// that announce large packets and stall cannot lock others out by using up
// the budget; what small packets can take is bounded by the connections
// (MaxConnections × freePacketBytes, 16 MiB at the default 256).
const freePacketBytes = 64 << 10

// errPacketTooLarge is sent, and returned by Read, when a client announces a
// packet above the limit in force; errPacketMemory when the packets all
// connections are receiving would exceed Config.MaxBufferedBytes, and
// errUserPacketMemory when those of one user's connections would exceed
// the user's share of it (packetMemory.userLimit).
var (
	errPacketTooLarge   = gomysql.NewError(gomysql.ER_NET_PACKET_TOO_LARGE, "Got a packet bigger than 'max_allowed_packet' bytes")
	errPacketMemory     = gomysql.NewError(gomysql.ER_OUT_OF_RESOURCES, "Out of memory for client packets; try again later")
	errUserPacketMemory = gomysql.NewError(gomysql.ER_OUT_OF_RESOURCES, "Out of memory for this user's client packets: its connections are receiving too many large packets at once; try again later")
	// errPacketsOutOfOrder answers a command packet whose sequence number is
	// wrong, as MySQL does (go-mysql closed the connection without a word).
	errPacketsOutOfOrder = gomysql.NewDefaultError(gomysql.ER_NET_PACKETS_OUT_OF_ORDER)
)

// packetMemory counts the bytes of the logical packets above freePacketBytes
// being received on all connections: each piece's announced length is taken
// when its header arrives, before go-mysql allocates it, on top of what the
// earlier pieces of the same logical packet hold (go-mysql appends every
// piece of a logical packet to one buffer until the last), and all of it is
// given back when the logical packet's last byte has been read or its
// connection ends. Besides the total (limit), the
// packets of one user's connections together may take at most userLimit
// (userPacketLimit), so that one user, within max_user_connections, cannot
// take all of it and lock others out of large packets.
type packetMemory struct {
	used             atomic.Int64 // changed under mu, read without it
	limit, userLimit int64

	mu     sync.Mutex
	byUser map[string]int64 // bytes taken per user, only users holding some
}

// userPacketLimit is a user's share of maxBuffered: a quarter, but at least
// one packet of maxAllowed. With maxBuffered >= 2 × maxAllowed (which the
// configuration requires) a user's share leaves room for at least one packet
// of maxAllowed for the others.
func userPacketLimit(maxBuffered, maxAllowed int64) int64 {
	return max(maxBuffered/4, maxAllowed)
}

func newPacketMemory(maxBuffered, maxAllowed int64) *packetMemory {
	return &packetMemory{limit: maxBuffered, userLimit: userPacketLimit(maxBuffered, maxAllowed), byUser: make(map[string]int64)}
}

// take reserves n bytes for user, or returns the error to refuse them with.
func (m *packetMemory) take(user string, n int64) *gomysql.MyError {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.used.Load()+n > m.limit:
		return errPacketMemory
	case m.byUser[user]+n > m.userLimit:
		return errUserPacketMemory
	}
	m.byUser[user] += n
	m.used.Add(n)
	return nil
}

// give returns n bytes that take reserved for user.
func (m *packetMemory) give(user string, n int64) {
	if n == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byUser[user] -= n; m.byUser[user] <= 0 {
		delete(m.byUser, user)
	}
	m.used.Add(-n)
}

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
// TLS. On a server with TLS the guard performs the upgrade itself, so that
// it sits above TLS from the first packet sent inside it (the handshake
// response) and go-mysql never reads a header the guard has not checked:
// when the first client packet is an SSLRequest (32 bytes of payload, which
// is how go-mysql and MySQL recognise it), the guard consumes it, runs the
// TLS handshake on the connection beneath and reads the decrypted stream
// from then on. go-mysql, which did not see the SSLRequest, expects the
// handshake response with sequence number 1 where the client sends 2, and
// answers with numbers one below the client's: until the handshake ends
// (handshakeDone) the guard subtracts one from the sequence number of every
// packet read and adds one to every packet written. go-mysql's own TLS
// upgrade must never run (it would put TLS above the guard): the guard
// refuses an SSLRequest sent inside TLS, and the server gives go-mysql a
// TLS configuration that fails every handshake (see goMySQLTLS).
type packetGuard struct {
	net.Conn                    // the client connection, or its TLS layer once upgraded
	memory        *packetMemory // shared by the server's connections
	held          int64         // bytes of memory held for the current logical packet
	heldUser      string        // the user they are held for
	tlsConfig     *tls.Config   // non-nil: the server accepts SSLRequest
	tls           *tls.Conn     // set once the connection is upgraded
	user          string        // set by loggedIn, before authenticated
	authenticated atomic.Bool   // set by loggedIn
	maxAfterAuth  int64

	header    [4]byte
	headerN   int   // header bytes seen of the current packet
	remaining int64 // payload bytes still to come in the current packet
	logical   int64 // payload bytes of the current logical packet so far
	lastPiece bool  // the current piece ends its logical packet (is shorter than MaxPayloadLen)
	piece     byte  // sequence number the next header must have after login: its piece's index in the logical packet
	packets   int   // complete headers seen (inside TLS once upgraded)
	failed    error // set once a packet was refused or the upgrade failed

	// firstRead is false until the first Read, which looks for an SSLRequest
	// on a TLS server; pending holds the bytes it read (already checked)
	// when the first packet was something else.
	firstRead bool
	pending   []byte
	// shiftSeq is set from the upgrade until handshakeDone: sequence numbers
	// are rewritten as described above; outHeaderN, outLength and
	// outRemaining parse the written stream for it.
	shiftSeq     bool
	outHeaderN   int
	outLength    int
	outRemaining int
	// discardWrites drops writes (reporting success): set when wire has
	// already sent the connection's last packet itself.
	discardWrites bool
	// batching is set while the connection answers a command (holdWrites
	// to flushWrites): written packets collect in out and reach the
	// connection in one write when the answer is complete, before the
	// next Read, or when out would exceed maxHeldWrites. A result set is
	// at least five packets (column count, columns, EOF, rows, EOF), each
	// one write and one system call without it.
	batching bool
	out      []byte
}

// maxHeldWrites bounds the bytes a connection holds back while batching; a
// larger write goes out at once, after what was held.
const maxHeldWrites = 16 << 10

// sslRequestLen is the payload length of an SSLRequest: capabilities, max
// packet size, charset and 23 reserved bytes.
const sslRequestLen = 4 + 4 + 1 + 23

// errBadHandshake answers a second SSLRequest inside TLS.
var errBadHandshake = gomysql.NewError(gomysql.ER_HANDSHAKE_ERROR, "Bad handshake")

func newPacketGuard(c net.Conn, memory *packetMemory, tlsConfig *tls.Config, maxAfterAuth int64) *packetGuard {
	return &packetGuard{Conn: c, memory: memory, tlsConfig: tlsConfig, maxAfterAuth: maxAfterAuth}
}

// release gives back the memory held for the current logical packet. scan
// calls it when the packet's last byte has been read, the connection when
// it ends (with a packet not fully received).
func (g *packetGuard) release() {
	g.memory.give(g.heldUser, g.held)
	g.held = 0
}

// loggedIn raises the packet limit to maxAfterAuth and charges later large
// packets to user; the connection calls it at login, from the goroutine
// that reads.
func (g *packetGuard) loggedIn(user string) {
	g.user = user
	g.authenticated.Store(true)
}

// transport is how the client reached the server: over TLS once upgraded.
func (g *packetGuard) transport() Transport {
	if g.tls == nil {
		return Transport{}
	}
	return tlsTransport(g.tls.ConnectionState())
}

// midPacket reports whether the guard has read part of a packet: a header
// or some of one, or a header and not all of its payload.
func (g *packetGuard) midPacket() bool { return g.headerN > 0 || g.remaining > 0 }

// handshakeDone ends the sequence-number rewriting of a TLS upgrade; the
// connection calls it once go-mysql has sent the login's OK packet.
func (g *packetGuard) handshakeDone() { g.shiftSeq = false }

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
	if !g.firstRead {
		g.firstRead = true
		if err := g.readHandshakeResponse(); err != nil {
			g.failed = err
			return 0, err
		}
	}
	// The client may wait for the answer held back before it sends more.
	if err := g.writeHeld(); err != nil {
		return 0, err
	}
	if len(g.pending) > 0 {
		n := copy(p, g.pending)
		g.pending = g.pending[n:]
		return n, nil
	}
	n, err := g.Conn.Read(p)
	if perr := g.scan(p[:n]); perr != nil {
		g.failed = perr
		return 0, perr
	}
	return n, err
}

// readHandshakeResponse reads the client's first packet; on a TLS server,
// if it is an SSLRequest, it upgrades the connection and reads the first
// packet inside TLS instead. That packet, the handshake response, is checked
// (its header by scan, its body by checkHandshakeResponse) and kept whole in
// pending for go-mysql, with whatever else the reads that brought it
// returned (at most one more read's worth): it is at most preAuthMaxPacket
// bytes.
func (g *packetGuard) readHandshakeResponse() error {
	buf := make([]byte, 0, 512)
	if g.tlsConfig != nil {
		var h [4]byte
		if _, err := io.ReadFull(g.Conn, h[:]); err != nil {
			return err
		}
		if int(h[0])|int(h[1])<<8|int(h[2])<<16 == sslRequestLen {
			var request [sslRequestLen]byte
			if _, err := io.ReadFull(g.Conn, request[:]); err != nil {
				return err
			}
			tc := tls.Server(g.Conn, g.tlsConfig)
			if err := tc.Handshake(); err != nil {
				return fmt.Errorf("wire: TLS handshake: %w", err)
			}
			g.Conn, g.tls, g.shiftSeq = tc, tc, true
		} else {
			if err := g.scan(h[:]); err != nil {
				return err
			}
			buf = append(buf, h[:]...)
		}
	}
	chunk := make([]byte, 4096)
	complete := func() bool { return len(buf) >= 4 && len(buf) >= 4+(int(buf[0])|int(buf[1])<<8|int(buf[2])<<16) }
	for !complete() {
		n, err := g.Conn.Read(chunk)
		if perr := g.scan(chunk[:n]); perr != nil {
			return perr
		}
		buf = append(buf, chunk[:n]...)
		if err != nil && !complete() {
			return err
		}
	}
	seq := buf[3] // as the client sent it: scan lowered it if shiftSeq
	if g.shiftSeq {
		seq++
	}
	if !checkHandshakeResponse(buf[4 : 4+(int(buf[0])|int(buf[1])<<8|int(buf[2])<<16)]) {
		g.refuse(errBadHandshake, seq+1)
		return errBadHandshake
	}
	g.pending = buf
	return nil
}

// checkHandshakeResponse reports false for a handshake response that is cut
// short anywhere go-mysql's parser (server/handshake_resp.go, v1.16.0)
// would slice or index past its end: readDb and readAttributes take
// data[pos:] after an auth length that ran past the packet, and
// readAttributes reads a length-encoded integer's bytes without checking
// they are there, and panic (an independent review replayed go-mysql's
// parse order on two million generated responses). It walks the response
// as go-mysql does: user name, auth data, database, plugin name,
// attributes. A response without CLIENT_PROTOCOL_41 or
// CLIENT_SECURE_CONNECTION is left to go-mysql, which refuses it without
// panicking; so is a complete one.
func checkHandshakeResponse(p []byte) bool {
	if len(p) <= sslRequestLen {
		return true // the SSL request, or too short for go-mysql to go past its first part
	}
	caps := uint32(p[0]) | uint32(p[1])<<8 | uint32(p[2])<<16 | uint32(p[3])<<24
	if caps&gomysql.CLIENT_PROTOCOL_41 == 0 || caps&gomysql.CLIENT_SECURE_CONNECTION == 0 {
		return true
	}
	pos := sslRequestLen
	// user name
	i := bytes.IndexByte(p[pos:], 0)
	if i < 0 {
		return false
	}
	pos += i + 1
	// auth data
	if caps&gomysql.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA != 0 {
		n, k, ok := lenencInt(p[pos:])
		if !ok || n > uint64(len(p)-pos-k) {
			return false
		}
		pos += k + int(n)
	} else {
		if pos >= len(p) || pos+1+int(p[pos]) > len(p) {
			return false
		}
		pos += 1 + int(p[pos])
	}
	// database, plugin name
	for _, flag := range []uint32{gomysql.CLIENT_CONNECT_WITH_DB, gomysql.CLIENT_PLUGIN_AUTH} {
		if caps&flag == 0 || (flag == gomysql.CLIENT_CONNECT_WITH_DB && pos == len(p)) {
			continue
		}
		i := bytes.IndexByte(p[pos:], 0)
		if i < 0 {
			return false
		}
		pos += i + 1
	}
	if caps&gomysql.CLIENT_CONNECT_ATTRS == 0 {
		return true
	}
	// The attributes: their total length (none at the packet's end, which
	// go-mysql reads as NULL), then key and value strings; like go-mysql,
	// read strings to the end of the packet.
	if pos == len(p) {
		return true
	}
	n, k, ok := lenencInt(p[pos:])
	if !ok || n > uint64(len(p)-pos-k) {
		return false
	}
	for pos += k; pos < len(p); {
		n, k, ok := lenencInt(p[pos:])
		if !ok || n > uint64(len(p)-pos-k) {
			return false
		}
		if p[pos] == 0xfb { // NULL ends the list
			return true
		}
		pos += k + int(n)
	}
	return true
}

// lenencInt decodes the length-encoded integer at the start of b, with the
// number of bytes it takes; ok is false if b is too short for it.
func lenencInt(b []byte) (n uint64, size int, ok bool) {
	if len(b) == 0 {
		return 0, 0, false
	}
	switch b[0] {
	case 0xfb:
		return 0, 1, true
	case 0xfc:
		size = 3
	case 0xfd:
		size = 4
	case 0xfe:
		size = 9
	default:
		return uint64(b[0]), 1, true
	}
	if len(b) < size {
		return 0, 0, false
	}
	for i := size - 1; i >= 1; i-- {
		n = n<<8 | uint64(b[i])
	}
	return n, size, true
}

// Write writes p, or drops it after a refusal or once discardWrites is set:
// go-mysql then writes an error of its own, which must not reach the client.
func (g *packetGuard) Write(p []byte) (int, error) {
	if g.failed != nil || g.discardWrites {
		return len(p), nil
	}
	b := p
	if g.shiftSeq {
		b = bytes.Clone(p)
		g.shiftWritten(b)
	}
	if g.batching {
		if len(g.out)+len(b) > maxHeldWrites {
			if err := g.writeHeld(); err != nil {
				return 0, err
			}
		}
		if len(b) <= maxHeldWrites {
			g.out = append(g.out, b...)
			return len(p), nil
		}
	}
	return g.Conn.Write(b)
}

// holdWrites starts batching the answer to a command (see batching).
func (g *packetGuard) holdWrites() { g.batching = true }

// flushWrites writes what is held and ends batching.
func (g *packetGuard) flushWrites() error {
	g.batching = false
	return g.writeHeld()
}

// writeHeld writes the bytes held back, if any. After a failed write the
// connection is unusable; the bytes are dropped.
func (g *packetGuard) writeHeld() error {
	if len(g.out) == 0 {
		return nil
	}
	out := g.out
	g.out = g.out[:0]
	if g.failed != nil || g.discardWrites {
		return nil
	}
	_, err := g.Conn.Write(out)
	return err
}

// shiftWritten adds one to the sequence number of every packet header in b,
// which continues the stream written so far.
func (g *packetGuard) shiftWritten(b []byte) {
	for i := 0; i < len(b); {
		if g.outRemaining > 0 {
			skip := min(g.outRemaining, len(b)-i)
			g.outRemaining -= skip
			i += skip
			continue
		}
		if g.outHeaderN < 3 {
			g.outLength |= int(b[i]) << (8 * g.outHeaderN)
		} else {
			b[i]++
		}
		g.outHeaderN++
		i++
		if g.outHeaderN == 4 {
			g.outHeaderN, g.outRemaining, g.outLength = 0, g.outLength, 0
		}
	}
}

// scan advances the packet parser over b; it returns an error for a header
// above the limit, or after login one with the wrong sequence number (1156),
// after telling the client. While shiftSeq is set it
// rewrites the sequence numbers in b.
func (g *packetGuard) scan(b []byte) error {
	for i := 0; i < len(b); {
		if g.remaining > 0 {
			skip := min(g.remaining, int64(len(b)-i))
			g.remaining -= skip
			i += int(skip)
			if g.remaining == 0 && g.lastPiece {
				g.release()
			}
			continue
		}
		g.header[g.headerN] = b[i]
		g.headerN++
		if g.headerN == 4 && g.shiftSeq {
			b[i]--
		}
		i++
		if g.headerN < 4 {
			continue
		}
		g.headerN = 0
		g.packets++
		length := int64(g.header[0]) | int64(g.header[1])<<8 | int64(g.header[2])<<16
		if g.tls != nil && g.packets == 1 && length == sslRequestLen {
			g.refuse(errBadHandshake, g.header[3]+1)
			return errBadHandshake
		}
		if g.authenticated.Load() && !g.shiftSeq {
			// After login every logical packet is one command, numbered
			// from 0 (go-mysql resets its count after each command).
			if g.header[3] != g.piece {
				g.refuse(errPacketsOutOfOrder, g.header[3]+1)
				return errPacketsOutOfOrder
			}
			g.piece++
		}
		g.logical += length
		if g.logical > g.limit() {
			g.refuse(errPacketTooLarge, g.header[3]+1)
			return errPacketTooLarge
		}
		// Hold the whole logical packet so far once it is above
		// freePacketBytes: go-mysql keeps the earlier pieces while it
		// reads this one.
		if g.logical > freePacketBytes {
			if err := g.memory.take(g.user, g.logical-g.held); err != nil {
				g.refuse(err, g.header[3]+1)
				return err
			}
			g.held, g.heldUser = g.logical, g.user
		}
		g.remaining = length
		g.lastPiece = length < int64(gomysql.MaxPayloadLen)
		if g.lastPiece {
			g.logical, g.piece = 0, 0
			if length == 0 {
				g.release() // an empty last piece: the logical packet is complete
			}
		}
	}
	return nil
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
	return errors.Is(g.failed, errPacketTooLarge) || errors.Is(g.failed, errPacketMemory) || errors.Is(g.failed, errUserPacketMemory)
}
