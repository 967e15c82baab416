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
	"testing"
	"time"

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
