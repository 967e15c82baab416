package wire

import (
	"crypto/rand"
	"log/slog"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"
)

// nativeAuth is the go-mysql AuthenticationProvider of a Server: it checks
// mysql_native_password replies against the hashes in Accounts.
//
// Unknown users and wrong passwords get the same answer (1045, 28000, "Access
// denied for user ..."), after the same work: an unknown user's reply is
// checked against a random decoy hash.
//
// Guessing is slowed by limiter: an attempt from a source or for a user with
// recent failures waits before its reply is checked (see loginLimiter).
type nativeAuth struct {
	accounts Accounts
	decoy    []byte
	log      *slog.Logger
	limiter  *loginLimiter
}

func newNativeAuth(accounts Accounts, log *slog.Logger) *nativeAuth {
	decoy := make([]byte, 20)
	_, _ = rand.Read(decoy) // crypto/rand.Read never fails
	return &nativeAuth{accounts: accounts, decoy: decoy, log: log, limiter: newLoginLimiter()}
}

// Validate accepts mysql_native_password only; go-mysql asks clients that
// start with another plugin to switch to it.
func (a *nativeAuth) Validate(plugin string) bool {
	return plugin == gomysql.AUTH_NATIVE_PASSWORD
}

// Authenticate checks the client's scramble. An empty reply is refused:
// accounts without a password cannot log in.
func (a *nativeAuth) Authenticate(c *server.Conn, plugin string, reply []byte) error {
	if plugin != gomysql.AUTH_NATIVE_PASSWORD {
		return server.ErrAccessDenied
	}
	source, user := sourceOf(c.RemoteAddr()), c.GetUser()
	if d := a.limiter.delay(source, user); d > 0 {
		time.Sleep(d)
	}
	err := a.check(c, reply)
	a.limiter.record(source, user, err == nil)
	return err
}

// check checks reply against the user's stored hash.
func (a *nativeAuth) check(c *server.Conn, reply []byte) error {
	if len(reply) == 0 || (len(reply) == 1 && reply[0] == 0) {
		return server.ErrAccessDeniedNoPassword
	}
	salt, ok := handshakeSalt(c)
	if !ok {
		a.log.Error("wire: cannot read the handshake nonce from go-mysql; every login fails")
		return server.ErrAccessDenied
	}
	stage2, known := a.accounts.NativePasswordHash(c.GetUser())
	if !known || len(stage2) != 20 {
		stage2, known = a.decoy, false
	}
	if checkNativeScramble(reply, salt, stage2) && known {
		return nil
	}
	return server.ErrAccessDenied
}

// nativeCredential is what every connection's GetCredential returns, for
// known and unknown users alike: go-mysql answers an unknown user with a
// different error (1449) than a wrong password, which would let anyone probe
// for user names. Its Passwords entry is a placeholder that go-mysql requires
// to be non-empty; nativeAuth never reads it.
var nativeCredential = server.Credential{
	Passwords:      []string{"(checked by nativeAuth against Accounts)"},
	AuthPluginName: gomysql.AUTH_NATIVE_PASSWORD,
}
