package wire

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/binary"
	"log/slog"
	"net"
	"sync"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"
)

// The authentication plugins wire speaks.
const (
	PluginNativePassword = gomysql.AUTH_NATIVE_PASSWORD       // "mysql_native_password"
	PluginCachingSHA2    = gomysql.AUTH_CACHING_SHA2_PASSWORD // "caching_sha2_password"
)

// erSecureTransportRequired is MySQL's error 3159, sent to a client that
// tries to log in without TLS when Config.RequireTLS is set.
const erSecureTransportRequired = 3159

// authenticator is the go-mysql AuthenticationProvider of a Server: it checks
// mysql_native_password and caching_sha2_password logins against the hashes
// in Accounts (see auth_sha2.go for the latter).
//
// Unknown users and wrong passwords get the same answer (1045, 28000, "Access
// denied for user ..."), after the same exchange and work: an unknown user
// is asked for a plugin as a real user is (see pluginFor), and its reply is
// checked against a random decoy hash.
type authenticator struct {
	accounts   Accounts
	decoy      []byte
	nameKey    []byte // HMAC key choosing unknown users' plugins (unknownNameKey)
	requireTLS bool
	rsaKey     *rsa.PrivateKey // decrypts caching_sha2 passwords sent without TLS
	rsaPublic  []byte          // its public half as PEM, sent to clients that ask
	log        *slog.Logger

	// fastAuth maps a user to SHA256(SHA256(password)), stored after that
	// user's first successful caching_sha2_password full authentication so
	// that later logins need neither TLS nor RSA (MySQL's "fast auth"). It
	// lives in memory only and holds configured users only.
	fastAuth sync.Map

	// limiter slows guessing: an attempt from a source or for a user with
	// recent failures waits before its reply is checked (see loginLimiter).
	limiter *loginLimiter
}

func newAuthenticator(accounts Accounts, cfg Config) *authenticator {
	decoy := make([]byte, 20)
	_, _ = rand.Read(decoy) // crypto/rand.Read never fails
	return &authenticator{
		accounts:   accounts,
		decoy:      decoy,
		nameKey:    unknownNameKey(accounts.NameSecret()),
		requireTLS: cfg.RequireTLS,
		rsaKey:     cfg.RSAKey,
		rsaPublic:  rsaPublicPEM(cfg.RSAKey),
		log:        cfg.Logger,
		limiter:    newLoginLimiter(),
	}
}

// Validate accepts the two plugins wire checks; go-mysql asks clients that
// start with another plugin to switch to the account's.
func (a *authenticator) Validate(plugin string) bool {
	return plugin == PluginNativePassword || plugin == PluginCachingSHA2
}

// Authenticate checks the client's reply for plugin, which go-mysql has
// already made the account's plugin (see credentialFor). A connection
// without TLS is refused first when TLS is required, before any password
// material is exchanged beyond the first scramble.
func (a *authenticator) Authenticate(c *server.Conn, plugin string, reply []byte) error {
	if a.requireTLS && !isTLS(c) {
		return gomysql.NewError(erSecureTransportRequired,
			"Connections using insecure transport are prohibited: this dpproxy requires TLS (connect with --ssl / sslmode=REQUIRED)")
	}
	source, user := sourceOf(c.RemoteAddr()), c.GetUser()
	if d := a.limiter.delay(source, user); d > 0 {
		time.Sleep(d)
	}
	err := a.check(c, plugin, reply)
	a.limiter.record(source, user, err == nil)
	return err
}

// check checks reply against the user's stored hash.
func (a *authenticator) check(c *server.Conn, plugin string, reply []byte) error {
	account, known := a.accounts.Account(c.GetUser())
	if !known || len(account.NativeHash) != 20 {
		account, known = Account{NativeHash: a.decoy, CachingSHA2: plugin == PluginCachingSHA2}, false
	}
	if account.plugin() != plugin {
		return accessDenied(c, true)
	}
	if isEmptyReply(reply) {
		return accessDenied(c, false)
	}
	salt, ok := handshakeSalt(c)
	if !ok {
		a.log.Error("wire: cannot read the handshake nonce from go-mysql; every login fails")
		return accessDenied(c, true)
	}
	if plugin == PluginCachingSHA2 {
		return a.cachingSHA2(c, account, known, salt, reply)
	}
	if checkNativeScramble(reply, salt, account.NativeHash) && known {
		return nil
	}
	return accessDenied(c, true)
}

// credentialFor is what GetCredential returns for user: go-mysql switches
// a client that started with another plugin to this one. Known and unknown
// users alike are "found": go-mysql answers an unknown user with a
// different error (1449) than a wrong password, which would let anyone probe
// for user names. The plugin is pluginFor's. The Passwords entry is a
// placeholder that go-mysql requires to be non-empty; authenticator never
// reads it.
func (a *authenticator) credentialFor(user, handshakePlugin string) server.Credential {
	return server.Credential{
		Passwords:      []string{"(checked by authenticator against Accounts)"},
		AuthPluginName: a.pluginFor(user, handshakePlugin),
	}
}

// unknownNameLabel separates unknownNameKey's use of the accounts' secret
// from any other.
const unknownNameLabel = "dpproxy wire: plugin of unknown user names, v1"

// unknownNameKey is the HMAC key pluginFor draws unknown names' plugins
// with: HMAC-SHA-256 of secret (Accounts.NameSecret) under
// unknownNameLabel, so every proxy serving the same accounts has the same
// key and no one without the secret can compute it; 32 random bytes if
// secret is empty.
func unknownNameKey(secret []byte) []byte {
	if len(secret) == 0 {
		key := make([]byte, 32)
		_, _ = rand.Read(key)
		return key
	}
	mac := hmac.New(sha256.New, []byte(unknownNameLabel))
	mac.Write(secret)
	return mac.Sum(nil)
}

// pluginFor is the plugin user is asked to log in with: the account's, or
// for an unknown name one drawn by an HMAC of the name under nameKey,
// caching_sha2_password with the share of users that have it (the
// announced plugin if there are no users). MySQL asks an unknown user for
// the announced plugin, so where users' plugins differ an auth switch, or
// its absence, would show which names exist; drawn this way, a name asked
// to switch is as likely unknown as a user of the other plugin, and the
// same name gets the same answer on every attempt, from every proxy
// serving the same accounts, across restarts (nameKey derives from the
// accounts' secret).
func (a *authenticator) pluginFor(user, handshakePlugin string) string {
	if account, ok := a.accounts.Account(user); ok {
		return account.plugin()
	}
	native, sha2 := a.accounts.Plugins()
	if native+sha2 <= 0 {
		return handshakePlugin
	}
	mac := hmac.New(sha256.New, a.nameKey)
	mac.Write([]byte(user))
	if binary.BigEndian.Uint64(mac.Sum(nil))%uint64(native+sha2) < uint64(sha2) {
		return PluginCachingSHA2
	}
	return PluginNativePassword
}

// accessDenied is MySQL's 1045 for c's user and host. go-mysql's own message
// names the client's port as well ('u'@'127.0.0.1:53412'); MySQL's does not.
func accessDenied(c *server.Conn, usingPassword bool) error {
	host := c.RemoteAddr().String()
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	using := gomysql.MySQLErrName[gomysql.ER_YES]
	if !usingPassword {
		using = gomysql.MySQLErrName[gomysql.ER_NO]
	}
	return gomysql.NewDefaultError(gomysql.ER_ACCESS_DENIED_ERROR, c.GetUser(), host, using)
}

// isTLS reports whether c was upgraded to TLS (by its packet guard, which
// is the connection under go-mysql's packet reader).
func isTLS(c *server.Conn) bool {
	g, ok := c.Conn.Conn.(*packetGuard)
	return ok && g.tls != nil
}

// isEmptyReply reports whether a client sent no password: an empty reply, or
// a single NUL as libmysqlclient sends. Accounts without a password do not
// exist, so such logins are refused.
func isEmptyReply(reply []byte) bool {
	return len(reply) == 0 || (len(reply) == 1 && reply[0] == 0)
}
