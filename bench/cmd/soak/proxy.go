package main

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// proxy is the dpproxy process under test; restart runs a new one on the
// same address and files.
type proxy struct {
	binary, dir, addr string
	args              []string
	env               []string
	wrap              []string // a command that runs dpproxy (prlimit …), or nil
	log               *os.File

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

func (p *proxy) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	argv := append(append(append([]string{}, p.wrap...), p.binary), p.args...)
	argv = append(argv, "--listen", p.addr, "--metrics-listen", "off", "--log-level", "warn")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = p.dir
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	p.cmd, p.done = cmd, done
	return nil
}

// alive reports whether the current process is running.
func (p *proxy) alive() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// pid of the current process.
func (p *proxy) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd.Process.Pid
}

// listening waits until the proxy accepts connections, restarting it when
// it exits (it does when the backend is down at start).
func (p *proxy) listening(within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", p.addr, time.Second); err == nil {
			c.Close()
			return nil
		}
		if !p.alive() {
			time.Sleep(300 * time.Millisecond)
			if err := p.start(); err != nil {
				return err
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("dpproxy did not listen on %s within %v", p.addr, within)
}

// signal sends sig and waits for the process to exit.
func (p *proxy) signal(sig syscall.Signal) {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// nativeHash is a users[].password_hash: "*" and SHA1(SHA1(password)) in hex.
func nativeHash(password string) string {
	a := sha1.Sum([]byte(password))
	b := sha1.Sum(a[:])
	return "*" + strings.ToUpper(hex.EncodeToString(b[:]))
}

// freeAddr is a free loopback address.
func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// rssKiB is a process's resident and peak resident memory, and its number
// of threads, from /proc.
func rssKiB(pid int) (rss, peak, threads int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		var v int64
		if _, err := fmt.Sscanf(line, "VmRSS: %d kB", &v); err == nil {
			rss = v
		}
		if _, err := fmt.Sscanf(line, "VmHWM: %d kB", &v); err == nil {
			peak = v
		}
		if _, err := fmt.Sscanf(line, "Threads: %d", &v); err == nil {
			threads = v
		}
	}
	return rss, peak, threads
}
