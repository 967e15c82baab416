package wire

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"math/big"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	gosqldriver "github.com/go-sql-driver/mysql"
)

// selfSignedTLS returns a server TLS config with a fresh certificate for
// 127.0.0.1, and the pool that trusts it.
func selfSignedTLS(t *testing.T) (*tls.Config, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "dpproxy test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}, pool
}

// TestTLS logs in over TLS with a verifying client: the password check works
// on the upgraded connection too.
func TestTLS(t *testing.T) {
	serverTLS, pool := selfSignedTLS(t)
	ts := startServer(t, Config{TLS: serverTLS})
	if err := gosqldriver.RegisterTLSConfig("wiretest", &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	defer gosqldriver.DeregisterTLSConfig("wiretest")
	cfg, err := gosqldriver.ParseDSN(ts.dsn(testUser, testPassword, ""))
	if err != nil {
		t.Fatal(err)
	}
	cfg.TLSConfig = "wiretest"
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var got string
	if err := db.QueryRow("over tls").Scan(&got); err != nil {
		t.Fatalf("got %v, want a query over TLS", err)
	}
	if got != "over tls" {
		t.Errorf("got %q, want %q", got, "over tls")
	}
}

// TestTLSTransport: the session of a TLS connection is opened with the
// protocol version and cipher suite named as MySQL's Ssl_version and
// Ssl_cipher name them; that of a plaintext connection with neither; each
// with the client's address.
func TestTLSTransport(t *testing.T) {
	serverTLS, pool := selfSignedTLS(t)
	serverTLS.MinVersion = tls.VersionTLS12
	ts := startServer(t, Config{TLS: serverTLS})
	tls13 := map[string]bool{"TLS_AES_128_GCM_SHA256": true, "TLS_AES_256_GCM_SHA384": true, "TLS_CHACHA20_POLY1305_SHA256": true}
	for i, c := range []struct {
		name    string
		client  *tls.Config // nil: plaintext
		version string
		cipher  func(string) bool
	}{
		{"TLS 1.3", &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}, "TLSv1.3", func(c string) bool { return tls13[c] }},
		{"TLS 1.2", &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MaxVersion: tls.VersionTLS12,
			CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}}, "TLSv1.2",
			func(c string) bool { return c == "ECDHE-ECDSA-AES256-GCM-SHA384" }},
		{"plaintext", nil, "", func(c string) bool { return c == "" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, err := client.Connect(ts.addr(), testUser, testPassword, "", func(conn *client.Conn) error {
				if c.client != nil {
					conn.SetTLSConfig(c.client)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			conn.Close()
			got := ts.engine.session(t, i).transport
			if got.TLSVersion != c.version || !c.cipher(got.TLSCipher) {
				t.Errorf("got %+v, want version %q", got, c.version)
			}
			if !strings.HasPrefix(got.Address, "127.0.0.1:") {
				t.Errorf("client address %q, want 127.0.0.1:port", got.Address)
			}
		})
	}
}

// TestOpenSSLCipherNames: every cipher suite Go implements has its
// OpenSSL name, and the names are those openssl itself gives (checked
// when the openssl program is installed).
func TestOpenSSLCipherNames(t *testing.T) {
	for _, s := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		if opensslCipherNames[s.ID] == "" {
			t.Errorf("%s has no OpenSSL name", s.Name)
		}
	}
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl is not installed")
	}
	// Lines "IANA name - OpenSSL name ...".
	out, err := exec.Command("openssl", "ciphers", "-stdname", "ALL:COMPLEMENTOFALL:@SECLEVEL=0").Output()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) < 3 || f[1] != "-" {
			continue
		}
		for id, name := range opensslCipherNames {
			if tls.CipherSuiteName(id) == f[0] {
				checked++
				if name != f[2] {
					t.Errorf("%s: named %s, openssl names it %s", f[0], name, f[2])
				}
			}
		}
	}
	if checked < 10 {
		t.Errorf("openssl listed only %d of Go's suites:\n%s", checked, out)
	}
}
