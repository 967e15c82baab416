package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/dpproxy/dpproxy/internal/wire"
)

// writePEM writes one PEM block to dir/name and returns the path.
func writePEM(t *testing.T, dir, name, blockType string, der []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// tlsDeployment writes a SQLite deployment with users carol
// (mysql_native_password) and dave (caching_sha2_password), a certificate
// and key for 127.0.0.1, and an RSA key for caching_sha2 without TLS. It
// returns the directory, the configuration, the pool trusting the
// certificate and the RSA public key.
func tlsDeployment(t *testing.T, require bool) (string, string, *x509.CertPool, *rsa.PublicKey) {
	t.Helper()
	dir, _ := sqliteDeployment(t, 10)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "dpproxy e2e"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	certPath := writePEM(t, dir, "server.pem", "CERTIFICATE", der)
	keyPath := writePEM(t, dir, "server.key", "PRIVATE KEY", keyDER)
	rsaPath := writePEM(t, dir, "rsa.pem", "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey))
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)

	hash := wire.FormatNativePasswordHash(wire.NativePasswordHash("pw"))
	config := filepath.Join(dir, "dpproxy.yaml")
	yaml := fmt.Sprintf(`
backend: {driver: sqlite, dsn: %q}
ledger: {driver: sqlite, dsn: %q}
tls: {cert: %q, key: %q, require: %t, rsa_key: %q}
users:
  - {name: carol, password_hash: %q, epsilon: 10}
  - {name: dave, password_hash: %q, auth_plugin: caching_sha2_password, epsilon: 10}
tables:
  - name: pums
    columns:
      - {name: age, type: integer, lower: 0, upper: 100}
`, filepath.Join(dir, "data.db"), filepath.Join(dir, "ledger.db"), certPath, keyPath, require, rsaPath, hash, hash)
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, config, pool, &rsaKey.PublicKey
}

// queryAs logs in with cfg and runs a DP aggregate.
func queryAs(cfg *mysql.Config) error {
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return err
	}
	defer db.Close()
	var avg float64
	return db.QueryRow("SELECT AVG(age) FROM pums").Scan(&avg)
}

// sslStatus logs in with cfg and returns what SHOW SESSION STATUS says of
// the connection's TLS: Ssl_version and Ssl_cipher.
func sslStatus(cfg *mysql.Config) (version, cipher string, err error) {
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return "", "", err
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		return "", "", err
	}
	defer conn.Close()
	var name string
	if err := conn.QueryRowContext(context.Background(), "SHOW SESSION STATUS LIKE 'Ssl_version'").Scan(&name, &version); err != nil {
		return "", "", err
	}
	err = conn.QueryRowContext(context.Background(), "SHOW SESSION STATUS LIKE 'Ssl_cipher'").Scan(&name, &cipher)
	return version, cipher, err
}

func clientConfig(addr, user string) *mysql.Config {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName, cfg.Timeout = user, "pw", "tcp", addr, "dpproxy", 10*time.Second
	return cfg
}

// TestConfiguredTLS serves the configured certificate: with tls.require a
// plaintext login gets 3159 and verified TLS logins work for both plugins,
// whose sessions show the TLS version and cipher in Ssl_version and
// Ssl_cipher as MySQL names them; without it, caching_sha2_password works
// without TLS with the configured RSA key, which the client knows in
// advance (so it does not fetch one), and Ssl_version and Ssl_cipher are
// empty.
func TestConfiguredTLS(t *testing.T) {
	dir, config, pool, pub := tlsDeployment(t, true)
	p := startProxy(t, dir, nil, "--config", config)
	if err := mysql.RegisterTLSConfig("e2e-configured", &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	defer mysql.DeregisterTLSConfig("e2e-configured")

	if err := queryAs(clientConfig(p.addr, "carol")); mysqlCode(err) != 3159 {
		t.Errorf("plaintext login with tls.require: got %v, want error 3159", err)
	}
	for _, user := range []string{"carol", "dave"} {
		cfg := clientConfig(p.addr, user)
		cfg.TLSConfig = "e2e-configured"
		cfg.AllowNativePasswords = user == "carol"
		if err := queryAs(cfg); err != nil {
			t.Errorf("%s over verified TLS: %v", user, err)
		}
	}
	if err := mysql.RegisterTLSConfig("e2e-configured-1.2", &tls.Config{RootCAs: pool, ServerName: "127.0.0.1",
		MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}}); err != nil {
		t.Fatal(err)
	}
	defer mysql.DeregisterTLSConfig("e2e-configured-1.2")
	tls13 := map[string]bool{"TLS_AES_128_GCM_SHA256": true, "TLS_AES_256_GCM_SHA384": true, "TLS_CHACHA20_POLY1305_SHA256": true}
	for _, c := range []struct {
		tlsConfig, version string
		cipher             func(string) bool
	}{
		{"e2e-configured", "TLSv1.3", func(c string) bool { return tls13[c] }},
		{"e2e-configured-1.2", "TLSv1.2", func(c string) bool { return c == "ECDHE-ECDSA-AES256-GCM-SHA384" }},
	} {
		cfg := clientConfig(p.addr, "carol")
		cfg.TLSConfig = c.tlsConfig
		version, cipher, err := sslStatus(cfg)
		if err != nil || version != c.version || !c.cipher(cipher) {
			t.Errorf("%s: Ssl_version %q, Ssl_cipher %q, %v; want %s and its cipher", c.tlsConfig, version, cipher, err, c.version)
		}
	}

	dir, config, _, pub = tlsDeployment(t, false)
	p = startProxy(t, dir, nil, "--config", config)
	mysql.RegisterServerPubKey("e2e-configured", pub)
	defer mysql.DeregisterServerPubKey("e2e-configured")
	cfg := clientConfig(p.addr, "dave")
	cfg.AllowNativePasswords = false
	cfg.ServerPubKey = "e2e-configured"
	if err := queryAs(cfg); err != nil {
		t.Errorf("dave without TLS, encrypting with the configured RSA key: %v", err)
	}
	if version, cipher, err := sslStatus(cfg); err != nil || version != "" || cipher != "" {
		t.Errorf("without TLS: Ssl_version %q, Ssl_cipher %q, %v; want both empty", version, cipher, err)
	}
}

// TestMetricsTokenOverTLS configures metrics.tls and a metrics.token read
// from the environment: /metrics is served over HTTPS with the proxy's
// certificate and answers only the bearer of the token; /healthz stays
// open; plain HTTP gets no metrics.
func TestMetricsTokenOverTLS(t *testing.T) {
	dir, config, pool, _ := tlsDeployment(t, false)
	raw, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	raw = append(raw, "metrics: {token: \"${DPPROXY_E2E_METRICS_TOKEN}\", tls: true}\n"...)
	if err := os.WriteFile(config, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	const token = "e2e-metrics-token-0123456789"
	p := startProxy(t, dir, []string{"DPPROXY_E2E_METRICS_TOKEN=" + token}, "--config", config)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}}}
	get := func(url, authorization string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if authorization != "" {
			req.Header.Set("Authorization", authorization)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	base := "https://" + p.metricsAddr
	if code, body := get(base+"/metrics", ""); code != http.StatusUnauthorized {
		t.Errorf("/metrics without a token: %d %q, want 401", code, body)
	}
	if code, _ := get(base+"/metrics", "Bearer wrong-token-0123456789"); code != http.StatusUnauthorized {
		t.Errorf("/metrics with another token: %d, want 401", code)
	}
	if code, body := get(base+"/metrics", "Bearer "+token); code != http.StatusOK || !strings.Contains(body, "dpproxy_connections ") {
		t.Errorf("/metrics with the token: %d %q", code, body)
	}
	if code, body := get(base+"/healthz", ""); code != http.StatusOK || strings.TrimSpace(body) != "ok" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	if code, body := get("http://"+p.metricsAddr+"/metrics", "Bearer "+token); code == http.StatusOK || strings.Contains(body, "dpproxy_") {
		t.Errorf("plain HTTP: %d %q, want no metrics", code, body)
	}
}
