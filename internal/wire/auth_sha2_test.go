package wire

import (
	"crypto/sha256"
	"crypto/tls"
	"database/sql"
	"fmt"
	"testing"

	gosqldriver "github.com/go-sql-driver/mysql"
)

// sha2Client returns a go-sql-driver DSN for ts that refuses
// mysql_native_password, as MySQL 8 clients configured for
// caching_sha2_password only do; tlsName is a registered TLS config or "".
func sha2Client(ts *testServer, user, password, tlsName string) string {
	cfg, _ := gosqldriver.ParseDSN(ts.dsn(user, password, ""))
	cfg.AllowNativePasswords = false
	cfg.TLSConfig = tlsName
	return cfg.FormatDSN()
}

// login opens dsn and runs one statement; it returns the login's error.
func login(t *testing.T, dsn string) error {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxIdleConns(0) // every Ping logs in anew
	var got string
	return db.QueryRow("select 1").Scan(&got)
}

// TestCachingSHA2 logs in with caching_sha2_password: full authentication
// over TLS and with the RSA key exchange without it, then fast
// authentication from the cache; wrong passwords and unknown users get
// MySQL's 1045 on every path.
func TestCachingSHA2(t *testing.T) {
	serverTLS, pool := selfSignedTLS(t)
	ts := startServer(t, Config{TLS: serverTLS, HandshakePlugin: PluginCachingSHA2})
	if err := gosqldriver.RegisterTLSConfig("sha2test", &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	defer gosqldriver.DeregisterTLSConfig("sha2test")

	// Unknown names are asked for either plugin, as users are (see
	// pluginFor): mallory gets caching_sha2_password, trudy the native one.
	mallory, trudy := unknownUser(ts, PluginCachingSHA2), unknownUser(ts, PluginNativePassword)
	for _, tc := range []struct {
		name, user, password, tls string
		wantErr                   string // "" for success
	}{
		{name: "full auth over TLS", user: testSHA2User, password: testPassword, tls: "sha2test"},
		{name: "wrong password over TLS", user: testSHA2User, password: "nope", tls: "sha2test",
			wantErr: "Error 1045 (28000): Access denied for user 'analyst8'@'127.0.0.1' (using password: YES)"},
		{name: "unknown user over TLS", user: mallory, password: testPassword, tls: "sha2test",
			wantErr: "Error 1045 (28000): Access denied for user '" + mallory + "'@'127.0.0.1' (using password: YES)"},
		{name: "wrong password with RSA", user: testSHA2User, password: "nope",
			wantErr: "Error 1045 (28000): Access denied for user 'analyst8'@'127.0.0.1' (using password: YES)"},
		{name: "unknown user with RSA", user: mallory, password: testPassword,
			wantErr: "Error 1045 (28000): Access denied for user '" + mallory + "'@'127.0.0.1' (using password: YES)"},
		{name: "native account refuses a client without native passwords", user: testUser, password: testPassword,
			wantErr: "this user requires mysql native password authentication"},
		{name: "so does an unknown name drawn native", user: trudy, password: testPassword,
			wantErr: "this user requires mysql native password authentication"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := login(t, sha2Client(ts, tc.user, tc.password, tc.tls))
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("got %v, want a login", err)
			case tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr):
				t.Fatalf("got %v, want %q", err, tc.wantErr)
			}
		})
	}

	// A native account still logs in with a default client, which switches
	// from the announced caching_sha2_password.
	if err := login(t, ts.dsn(testUser, testPassword, "")); err != nil {
		t.Fatalf("native account, default client: %v", err)
	}

	// Without TLS: the client asks for the RSA key and sends the encrypted
	// password. Start from an empty cache so this is a full authentication.
	ts.Server.auth.fastAuth.Clear()
	if err := login(t, sha2Client(ts, testSHA2User, testPassword, "")); err != nil {
		t.Fatalf("full auth with RSA: %v", err)
	}
	// That login filled the cache; with the RSA key gone a full
	// authentication without TLS can no longer succeed, so this login
	// succeeding proves the fast path.
	ts.Server.auth.rsaKey = nil
	if err := login(t, sha2Client(ts, testSHA2User, testPassword, "")); err != nil {
		t.Fatalf("fast auth: %v", err)
	}
	if err := login(t, sha2Client(ts, testSHA2User, "nope", "")); err == nil {
		t.Fatalf("fast auth with a wrong password: got a login")
	}
}

// TestRequireTLS refuses a login without TLS with MySQL's 3159 and accepts
// it over TLS.
func TestRequireTLS(t *testing.T) {
	serverTLS, pool := selfSignedTLS(t)
	ts := startServer(t, Config{TLS: serverTLS, RequireTLS: true})
	if err := gosqldriver.RegisterTLSConfig("requiretest", &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	defer gosqldriver.DeregisterTLSConfig("requiretest")

	me := mysqlError(t, login(t, ts.dsn(testUser, testPassword, "")))
	if me.Number != erSecureTransportRequired {
		t.Errorf("plaintext login: got %d %q, want %d", me.Number, me.Message, erSecureTransportRequired)
	}
	cfg, _ := gosqldriver.ParseDSN(ts.dsn(testUser, testPassword, ""))
	cfg.TLSConfig = "requiretest"
	if err := login(t, cfg.FormatDSN()); err != nil {
		t.Errorf("TLS login: got %v, want success", err)
	}
	if _, err := NewServer(Config{RequireTLS: true}, testAccounts, newFakeEngine()); err == nil {
		t.Errorf("RequireTLS without TLS: got no error from NewServer")
	}
}

// TestCheckSHA2Scramble checks the fast-auth verifier against the client's
// formula XOR(SHA256(pw), SHA256(SHA256(SHA256(pw)) || nonce)), computed
// here step by step.
func TestCheckSHA2Scramble(t *testing.T) {
	pw, nonce := []byte("s3cret pass"), []byte("01234567890123456789")
	stage1 := sha256.Sum256(pw)
	stage2 := sha256.Sum256(stage1[:])
	mask := sha256.Sum256(append(append([]byte{}, stage2[:]...), nonce...))
	reply := make([]byte, 32)
	for i := range reply {
		reply[i] = stage1[i] ^ mask[i]
	}
	if !checkSHA2Scramble(reply, nonce, stage2[:]) {
		t.Errorf("the right scramble was refused")
	}
	reply[0] ^= 1
	if checkSHA2Scramble(reply, nonce, stage2[:]) {
		t.Errorf("a wrong scramble was accepted")
	}
	if checkSHA2Scramble(reply[:20], nonce, stage2[:]) {
		t.Errorf("a short scramble was accepted")
	}
}

// unknownUser returns a name that is no user and that ts asks for plugin.
func unknownUser(ts *testServer, plugin string) string {
	for i := 0; ; i++ {
		if name := fmt.Sprintf("mallory%d", i); ts.auth.pluginFor(name, ts.cfg.HandshakePlugin) == plugin {
			return name
		}
	}
}
