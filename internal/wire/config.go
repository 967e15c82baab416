package wire

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"fmt"
	"log/slog"
	"time"
)

// Config configures a Server. Zero fields take the defaults below.
type Config struct {
	// Addr is the TCP address ListenAndServe listens on. Default "127.0.0.1:3307".
	Addr string
	// MaxConnections caps simultaneous connections, counting those still in
	// the handshake; one more is answered with error 1040 "Too many
	// connections" and closed. Default 100.
	MaxConnections int
	// ReservedSessions is how many of MaxConnections only logged-in sessions
	// may use: connections still in the handshake get at most
	// MaxConnections - ReservedSessions slots, so clients that never finish
	// logging in cannot take every slot. Default MaxConnections/10.
	ReservedSessions int
	// MaxUserConnections caps the logged-in connections of one user, as
	// MySQL's max_user_connections: one more is refused after its password
	// was checked, with 1203 "User x already has more than
	// 'max_user_connections' active connections". Account.MaxConnections
	// overrides it per user. Default MaxConnections/4 (at least 1), so that
	// one user cannot take every slot.
	MaxUserConnections int
	// MaxHandshakesPerSource caps the connections from one IP address that
	// are still in the handshake; one more is refused with 1040. Default
	// a quarter of the handshake slots (MaxConnections - ReservedSessions),
	// at least 1 and at most 64 (a client pool opening many connections at
	// once comes from one address). It must leave other addresses a slot:
	// at most the handshake slots - 1 (or 1 when there is only one slot).
	MaxHandshakesPerSource int
	// HandshakeTimeout bounds the whole handshake, from accept to login, however
	// the client spaces its bytes. Default 10s.
	HandshakeTimeout time.Duration
	// MaxAllowedPacket caps a client packet after login, as MySQL's
	// max_allowed_packet does (before login the cap is 16 KiB). A larger
	// packet is answered with 1153 and the connection closed before the
	// packet is buffered. Default 4 MiB; at most 64 MiB (MySQL allows
	// 1 GiB, but the proxy buffers every packet whole).
	MaxAllowedPacket int64
	// MaxBufferedBytes caps the client packets above 64 KiB being received
	// on all connections together (each counted at its announced length
	// from its header on): a packet that would exceed it is answered with
	// 1041 and its connection closed. Smaller packets (logins, ordinary
	// statements) are not counted, so stalled large packets cannot lock
	// other clients out. One user's connections together may take at most
	// a quarter of it, or one MaxAllowedPacket if that is more, so one user
	// cannot take it all. Default 256 MiB; at least 2 × MaxAllowedPacket.
	MaxBufferedBytes int64
	// ReadTimeout bounds each read from the client during the handshake, and
	// the arrival of a whole command, from its first byte to its last (so a
	// client trickling a packet cannot hold its buffer for longer). Default
	// 30s.
	ReadTimeout time.Duration
	// WriteTimeout bounds each write to the client. Default 30s.
	WriteTimeout time.Duration
	// IdleTimeout closes a connection that sends no command for this long
	// (MySQL's wait_timeout). Default 8h.
	IdleTimeout time.Duration
	// ShutdownGrace is how long Serve lets in-flight statements finish after
	// its context is cancelled before it cancels them and closes every
	// connection, and then how long it waits for statements that do not
	// stop before it returns without them. Default 10s.
	ShutdownGrace time.Duration
	// ServerVersion is announced in the handshake. Default "8.0.11-dpproxy".
	ServerVersion string
	// TLS, if set, lets clients upgrade the connection with SSLRequest.
	// It does not make TLS mandatory; RequireTLS does.
	TLS *tls.Config
	// RequireTLS refuses logins on connections that did not upgrade to TLS
	// with MySQL's error 3159, before the password is checked. It needs TLS.
	RequireTLS bool
	// HandshakePlugin is the authentication plugin announced in the initial
	// handshake: PluginNativePassword (the default) or PluginCachingSHA2.
	// Clients answer with it if they can, and are asked to switch when
	// their account uses the other one. Clients that refuse
	// mysql_native_password outright (go-sql-driver with
	// allowNativePasswords=false) need PluginCachingSHA2 here.
	HandshakePlugin string
	// RSAKey decrypts caching_sha2_password passwords sent without TLS;
	// clients may ask for its public half. If nil and HandshakePlugin is
	// PluginCachingSHA2, NewServer generates one (2048 bits).
	RSAKey *rsa.PrivateKey
	// Logger receives connection events and the text of internal errors.
	// Default slog.Default().
	Logger *slog.Logger
}

// The defaults of Config.
const (
	DefaultAddr                   = "127.0.0.1:3307"
	DefaultMaxConnections         = 100
	DefaultReadTimeout            = 30 * time.Second
	DefaultWriteTimeout           = 30 * time.Second
	DefaultIdleTimeout            = 8 * time.Hour
	DefaultShutdownGrace          = 10 * time.Second
	DefaultHandshakeTimeout       = 10 * time.Second
	DefaultMaxHandshakesPerSource = 64 // the largest default; see defaultHandshakesPerSource
	DefaultMaxAllowedPacket       = 4 << 20
	DefaultMaxBufferedBytes       = 256 << 20
	maxMaxAllowedPacket           = 64 << 20 // the largest MaxAllowedPacket
	DefaultServerVersion          = "8.0.11-dpproxy"
)

// defaultHandshakesPerSource is the default MaxHandshakesPerSource for
// slots handshake slots: a quarter of them, at least 1, at most
// DefaultMaxHandshakesPerSource.
func defaultHandshakesPerSource(slots int) int {
	return min(DefaultMaxHandshakesPerSource, max(slots/4, 1))
}

// withDefaults returns cfg with zero fields set to their defaults, or an
// error naming the first field with a negative value.
func (cfg Config) withDefaults() (Config, error) {
	for _, n := range []struct {
		name string
		v    int64
	}{
		{"MaxConnections", int64(cfg.MaxConnections)},
		{"ReservedSessions", int64(cfg.ReservedSessions)},
		{"MaxUserConnections", int64(cfg.MaxUserConnections)},
		{"MaxHandshakesPerSource", int64(cfg.MaxHandshakesPerSource)},
		{"MaxAllowedPacket", cfg.MaxAllowedPacket},
		{"MaxBufferedBytes", cfg.MaxBufferedBytes},
	} {
		if n.v < 0 {
			return cfg, fmt.Errorf("wire: %s is %d, want >= 0", n.name, n.v)
		}
	}
	if cfg.MaxAllowedPacket > maxMaxAllowedPacket {
		return cfg, fmt.Errorf("wire: MaxAllowedPacket is %d, want at most %d", cfg.MaxAllowedPacket, maxMaxAllowedPacket)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"ReadTimeout", cfg.ReadTimeout},
		{"WriteTimeout", cfg.WriteTimeout},
		{"IdleTimeout", cfg.IdleTimeout},
		{"ShutdownGrace", cfg.ShutdownGrace},
		{"HandshakeTimeout", cfg.HandshakeTimeout},
	} {
		if d.v < 0 {
			return cfg, fmt.Errorf("wire: %s is %v, want >= 0", d.name, d.v)
		}
	}
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.MaxConnections == 0 {
		cfg.MaxConnections = DefaultMaxConnections
	}
	if cfg.ReservedSessions == 0 {
		cfg.ReservedSessions = cfg.MaxConnections / 10
	}
	if cfg.ReservedSessions >= cfg.MaxConnections {
		return cfg, fmt.Errorf("wire: ReservedSessions is %d, want fewer than MaxConnections (%d)", cfg.ReservedSessions, cfg.MaxConnections)
	}
	if cfg.MaxUserConnections == 0 {
		cfg.MaxUserConnections = max(cfg.MaxConnections/4, 1)
	}
	slots := cfg.MaxConnections - cfg.ReservedSessions
	if cfg.MaxHandshakesPerSource == 0 {
		cfg.MaxHandshakesPerSource = defaultHandshakesPerSource(slots)
	}
	if limit := max(slots-1, 1); cfg.MaxHandshakesPerSource > limit {
		return cfg, fmt.Errorf("wire: MaxHandshakesPerSource is %d, want at most %d (one address may not take all %d handshake slots)", cfg.MaxHandshakesPerSource, limit, slots)
	}
	if cfg.HandshakeTimeout == 0 {
		cfg.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if cfg.MaxAllowedPacket == 0 {
		cfg.MaxAllowedPacket = DefaultMaxAllowedPacket
	}
	if cfg.MaxBufferedBytes == 0 {
		cfg.MaxBufferedBytes = DefaultMaxBufferedBytes
	}
	if cfg.MaxBufferedBytes < 2*cfg.MaxAllowedPacket {
		return cfg, fmt.Errorf("wire: MaxBufferedBytes is %d, want at least 2 × MaxAllowedPacket (%d), so that one user's share leaves room for others", cfg.MaxBufferedBytes, 2*cfg.MaxAllowedPacket)
	}
	if cfg.ReadTimeout == 0 {
		cfg.ReadTimeout = DefaultReadTimeout
	}
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.ShutdownGrace == 0 {
		cfg.ShutdownGrace = DefaultShutdownGrace
	}
	if cfg.ServerVersion == "" {
		cfg.ServerVersion = DefaultServerVersion
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.RequireTLS && cfg.TLS == nil {
		return cfg, fmt.Errorf("wire: RequireTLS needs a TLS configuration")
	}
	switch cfg.HandshakePlugin {
	case "":
		cfg.HandshakePlugin = PluginNativePassword
	case PluginNativePassword, PluginCachingSHA2:
	default:
		return cfg, fmt.Errorf("wire: HandshakePlugin %q, want %s or %s", cfg.HandshakePlugin, PluginNativePassword, PluginCachingSHA2)
	}
	if cfg.RSAKey == nil && cfg.HandshakePlugin == PluginCachingSHA2 {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return cfg, fmt.Errorf("wire: generating the RSA key: %w", err)
		}
		cfg.RSAKey = key
	}
	return cfg, nil
}
