package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	mrand "math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
)

// oomGuard holds the proxy to GOMEMLIMIT and an address-space limit while
// -oom-hostile connections at a time, from other loopback addresses, abuse
// it: 16 MiB packet headers before login, inside TLS and after login,
// handshakes one byte every 2 s, garbage, and logged-in clients that
// announce a packet of max_allowed_packet and stall. Meanwhile valid
// clients on 127.0.0.1 send statements and log in again every 20. It fails
// if the proxy dies or a valid statement or login fails other than for
// budget.
func oomGuard(o options, dir string) error {
	data := filepath.Join(dir, "oom-data.db")
	if out, err := exec.Command(o.binary, "load-demo", "--driver", "sqlite", "--dsn", data).CombinedOutput(); err != nil {
		return fmt.Errorf("load-demo: %w\n%s", err, out)
	}
	cert, key, err := writeCertificate(dir)
	if err != nil {
		return err
	}
	config := filepath.Join(dir, "oom.yaml")
	yaml := fmt.Sprintf(`backend: {driver: sqlite, dsn: %q}
ledger: {driver: sqlite, dsn: %q}
tls: {cert: %q, key: %q}
privacy: {default_epsilon: 0.1, max_epsilon: 10}
timeouts: {handshake: 5s, statement: 10s}
max_buffered_bytes: %d
users:
  - {name: valid, password_hash: %q, epsilon: 1000000}
  - {name: hostile, password_hash: %q, epsilon: 1}
tables:
  - name: pums
    columns:
      - {name: age, type: integer, lower: 0, upper: 100}
      - {name: sex, type: integer, lower: 0, upper: 1}
      - {name: income, type: real, lower: 0, upper: 500000}
`, data, filepath.Join(dir, "oom-ledger.db"), cert, key, int64(o.oomBufferedMiB)<<20, nativeHash("pw"), nativeHash("pw"))
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		return err
	}
	logFile, err := os.Create(filepath.Join(dir, "proxy-oom.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	p := &proxy{binary: o.binary, dir: dir, addr: freeAddr(), args: []string{"--config", config}, log: logFile,
		env:  []string{fmt.Sprintf("GOMEMLIMIT=%dMiB", o.oomMemMiB)},
		wrap: []string{"prlimit", fmt.Sprintf("--as=%d", int64(o.oomAddressSpaceMiB)<<20), "--"}}
	if err := p.start(); err != nil {
		return err
	}
	if err := p.listening(60 * time.Second); err != nil {
		return err
	}
	pid := p.pid()
	fmt.Printf("== out-of-memory guard: proxy pid %d, GOMEMLIMIT=%dMiB, address space ≤ %d MiB, max_buffered_bytes %d MiB, %d hostile connections at once, %ds\n",
		pid, o.oomMemMiB, o.oomAddressSpaceMiB, o.oomBufferedMiB, o.oomHostile, o.seconds)

	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(o.seconds)*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	var hostile [6]atomic.Int64
	kinds := []string{"16 MiB header before login", "16 MiB header inside TLS", "slow handshake", "garbage",
		"logged in, max_allowed_packet announced and stalled", "idle connection"}
	for i := range o.oomHostile {
		wg.Add(1)
		go func() {
			defer wg.Done()
			kind := i % len(kinds)
			src := &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i%8))}
			for ctx.Err() == nil {
				if hostileOnce(ctx, p.addr, src, kind) {
					hostile[kind].Add(1)
				}
			}
		}()
	}
	var mu sync.Mutex
	valid := map[string]int{}
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				db := openClient(p.addr, "valid")
				for n := 0; n < 20 && ctx.Err() == nil; n++ {
					outcome := query(ctx, db, statements[(i+n)%len(statements)])
					if ctx.Err() != nil && outcome != "answer" {
						break
					}
					mu.Lock()
					valid[outcome]++
					mu.Unlock()
				}
				db.Close()
			}
		}()
	}
	var peakRSS, maxRSS, maxThreads int64
	ticker := time.NewTicker(500 * time.Millisecond)
	defer ticker.Stop()
	died := false
sample:
	for {
		select {
		case <-ctx.Done():
			break sample
		case <-ticker.C:
			if !p.alive() {
				died = true
				break sample
			}
			rss, peak, threads := rssKiB(pid)
			maxRSS, peakRSS, maxThreads = max(maxRSS, rss), max(peakRSS, peak), max(maxThreads, threads)
		}
	}
	cancel()
	wg.Wait()
	alive := p.alive()
	if alive {
		probe := openClient(p.addr, "valid")
		if outcome := query(context.Background(), probe, statements[0]); outcome != "answer" {
			alive = false
			fmt.Println("the proxy is running but did not answer afterwards:", outcome)
		}
		probe.Close()
		_, peakRSS, _ = rssKiB(pid)
	}
	p.signal(15)

	fmt.Println("hostile connections completed:")
	for k, name := range kinds {
		fmt.Printf("  %-52s %d\n", name, hostile[k].Load())
	}
	fmt.Println("valid clients' statements:")
	keys := make([]string, 0, len(valid))
	for k := range valid {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	failed := 0
	for _, k := range keys {
		fmt.Printf("  %-12s %d\n", k, valid[k])
		if k != "answer" && k != "error 1226" {
			failed += valid[k]
		}
	}
	fmt.Printf("proxy resident memory: max sampled %d MiB, peak (VmHWM) %d MiB; threads at most %d\n", maxRSS>>10, peakRSS>>10, maxThreads)
	log, _ := os.ReadFile(logFile.Name())
	switch {
	case died || !alive:
		return fmt.Errorf("FAILED: the proxy died or stopped answering under hostile connections; log tail:\n%s", tail(string(log), 20))
	case failed > 0:
		return fmt.Errorf("FAILED: %d valid statements or logins failed", failed)
	case valid["answer"] == 0:
		return errors.New("FAILED: no valid statement was answered")
	}
	fmt.Println("PASS")
	return nil
}

func tail(s string, lines int) string {
	parts := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(parts[max(0, len(parts)-lines):], "\n")
}

// hostileOnce makes one hostile connection of the given kind from src and
// reports whether it ran to its end (the proxy closed it or it timed out).
func hostileOnce(ctx context.Context, addr string, src *net.TCPAddr, kind int) bool {
	d := net.Dialer{LocalAddr: src, Timeout: 2 * time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		time.Sleep(100 * time.Millisecond)
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(15 * time.Second))
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	greeting, err := readPacket(c)
	if err != nil || len(greeting) == 0 || greeting[0] == 0xff {
		time.Sleep(100 * time.Millisecond) // refused (1040): try again
		return false
	}
	switch kind {
	case 0:
		_, _ = c.Write([]byte{0xff, 0xff, 0xff, 1})
	case 1:
		if _, err := c.Write(sslRequest()); err != nil {
			return false
		}
		tc := tls.Client(c, &tls.Config{InsecureSkipVerify: true})
		if err := tc.Handshake(); err != nil {
			return false
		}
		_, _ = tc.Write([]byte{0xff, 0xff, 0xff, 2})
		_, _ = io.Copy(io.Discard, tc)
		return true
	case 2:
		for _, b := range []byte{0x55, 0, 0, 1, 0x85, 0xa6} {
			if _, err := c.Write([]byte{b}); err != nil {
				return true
			}
			select {
			case <-ctx.Done():
				return false
			case <-time.After(2 * time.Second):
			}
		}
	case 3:
		junk := make([]byte, 64+mrand.IntN(4096))
		_, _ = rand.Read(junk)
		_, _ = c.Write(junk)
	case 4:
		c.Close()
		mc, err := client.ConnectWithDialer(ctx, "tcp", addr, "hostile", "pw", "", d.DialContext)
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			return false
		}
		defer mc.Close()
		raw := mc.Conn.Conn
		_ = raw.SetDeadline(time.Now().Add(15 * time.Second))
		// max_allowed_packet − 1 (4 MiB) announced, a few bytes sent, then silence.
		_, _ = raw.Write([]byte{0xff, 0xff, 0x3f, 0, 3, 'S', 'E', 'L'})
		_, _ = io.Copy(io.Discard, raw)
		return true
	case 5:
		// Say nothing until the handshake deadline.
	}
	_, _ = io.Copy(io.Discard, c)
	return true
}

func readPacket(c net.Conn) ([]byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(c, h[:]); err != nil {
		return nil, err
	}
	p := make([]byte, int(h[0])|int(h[1])<<8|int(h[2])<<16)
	_, err := io.ReadFull(c, p)
	return p, err
}

// sslRequest is a client's SSLRequest packet (sequence 1).
func sslRequest() []byte {
	caps := uint32(0x200 | 0x8000 | 0x80000 | 0x800) // PROTOCOL_41, SECURE_CONNECTION, PLUGIN_AUTH, SSL
	payload := []byte{byte(caps), byte(caps >> 8), byte(caps >> 16), byte(caps >> 24), 0, 0, 0, 1, 45}
	payload = append(payload, make([]byte, 23)...)
	return append([]byte{byte(len(payload)), 0, 0, 1}, payload...)
}

// writeCertificate writes a self-signed certificate and key for 127.0.0.1.
func writeCertificate(dir string) (certPath, keyPath string, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "dpproxy soak"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", "", err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", "", err
	}
	certPath, keyPath = filepath.Join(dir, "soak-cert.pem"), filepath.Join(dir, "soak-key.pem")
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return "", "", err
	}
	return certPath, keyPath, os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600)
}
