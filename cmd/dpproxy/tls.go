package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"os"
	"time"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

// serverTLS returns the TLS configuration of the configured certificate and
// key, or nil when none is configured.
func serverTLS(c catalog.TLS) (*tls.Config, error) {
	if c.Cert == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(c.Cert, c.Key)
	if err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// demoTLS generates the demo's self-signed certificate (ECDSA P-256, valid
// for 127.0.0.1, ::1 and localhost for 30 days) and writes it to certPath,
// so that clients can verify the server with it as their CA
// (mariadb --ssl-ca=certPath --ssl-verify-server-cert). The private key
// stays in memory.
func demoTLS(certPath string) (*tls.Config, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "dpproxy demo (self-signed)"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(30 * 24 * time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:              []string{"localhost"},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:                  true, // its own CA, so clients can pass it as --ssl-ca
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return nil, fmt.Errorf("demo certificate: %w", err)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
		MinVersion:   tls.VersionTLS12,
	}, nil
}

// rsaKey reads the PEM RSA private key (PKCS #1 or PKCS #8) at path; nil
// for an empty path.
func rsaKey(path string) (*rsa.PrivateKey, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tls.rsa_key: %w", err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("tls.rsa_key: no PEM block")
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("tls.rsa_key: %w", err)
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("tls.rsa_key: a %T, want an RSA key", k)
	}
	return rk, nil
}

// transportSecurity is the TLS configuration and RSA key of the server: the
// configured ones, or for the demo a certificate generated now (logged with
// its path, for clients to verify it).
func transportSecurity(cfg *catalog.Config, isDemo bool, demoCertPath string, log *slog.Logger) (*tls.Config, *rsa.PrivateKey, error) {
	key, err := rsaKey(cfg.TLS.RSAKey)
	if err != nil {
		return nil, nil, err
	}
	if isDemo {
		tc, err := demoTLS(demoCertPath)
		if err != nil {
			return nil, nil, err
		}
		log.Warn("demo: TLS uses a self-signed certificate generated at start", "cert", demoCertPath)
		return tc, key, nil
	}
	tc, err := serverTLS(cfg.TLS)
	if err != nil {
		return nil, nil, err
	}
	if tc == nil {
		log.Warn("TLS is not configured (tls.cert, tls.key): passwords' scrambles and results travel in clear")
	}
	return tc, key, nil
}
