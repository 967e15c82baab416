package main

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	_ "github.com/go-sql-driver/mysql"
	_ "github.com/lib/pq"
)

// database is a private database server the soak starts, crashes and
// restarts; it never touches the machine's shared servers.
type database interface {
	name() string
	driver() string // the dpproxy backend driver
	dsn() string    // of the soak database
	start() error   // start (again) and wait until it answers
	crash() error   // stop at once, as a crash would
	close()         // stop for good
}

// waitSQL waits until a query on dsn succeeds.
func waitSQL(driver, dsn string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		db, err := sql.Open(driver, dsn)
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			err = db.PingContext(ctx)
			cancel()
			db.Close()
			if err == nil {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer within %v: %w", driver, within, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %v: %w\n%s", name, args, err, out)
	}
	return nil
}

// postgres is a private cluster: initdb into dir, pg_ctl on port. As root
// the commands run as the postgres user, since initdb refuses root.
type postgres struct {
	bin, dir string
	port     int
}

func newPostgres(bin, dir string, port int) (*postgres, error) {
	p := &postgres{bin: bin, dir: dir, port: port}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if os.Geteuid() == 0 {
		if err := run("chown", "-R", "postgres:postgres", dir); err != nil {
			return nil, err
		}
	}
	if err := p.pg("initdb", "-D", filepath.Join(dir, "data"), "-U", "postgres", "-A", "trust", "--no-sync"); err != nil {
		return nil, err
	}
	if err := p.start(); err != nil {
		return nil, err
	}
	admin, err := sql.Open("postgres", fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port))
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	if _, err := admin.Exec("CREATE DATABASE soak"); err != nil {
		return nil, err
	}
	return p, nil
}

// pg runs one of the PostgreSQL programs, as postgres when we are root.
func (p *postgres) pg(program string, args ...string) error {
	path := filepath.Join(p.bin, program)
	if os.Geteuid() == 0 {
		return run("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	}
	return run(path, args...)
}

func (p *postgres) name() string   { return "postgres" }
func (p *postgres) driver() string { return "postgres" }
func (p *postgres) dsn() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/soak?sslmode=disable&connect_timeout=2", p.port)
}

func (p *postgres) start() error {
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200", p.port, p.dir)
	if err := p.pg("pg_ctl", "-D", filepath.Join(p.dir, "data"), "-o", opts, "-l", filepath.Join(p.dir, "log"), "-w", "-t", "60", "start"); err != nil {
		return err
	}
	return waitSQL("postgres", fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", p.port), 60*time.Second)
}

// crash is pg_ctl's immediate mode: every server process quits without a
// checkpoint, and the next start recovers from the WAL.
func (p *postgres) crash() error {
	return p.pg("pg_ctl", "-D", filepath.Join(p.dir, "data"), "-m", "immediate", "-w", "stop")
}

func (p *postgres) close() { _ = p.crash() }

// mariadb is a private server: mariadb-install-db into dir, mariadbd on
// port with its own socket, crashed with SIGKILL.
type mariadb struct {
	dir  string
	port int
	cmd  *exec.Cmd
	done chan struct{}
}

func newMariaDB(dir string, port int) (*mariadb, error) {
	m := &mariadb{dir: dir, port: port}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	args := []string{"--no-defaults", "--datadir=" + filepath.Join(dir, "data"), "--auth-root-authentication-method=normal", "--skip-test-db"}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	if err := run("mariadb-install-db", args...); err != nil {
		return nil, err
	}
	if err := m.start(); err != nil {
		return nil, err
	}
	admin, err := sql.Open("mysql", fmt.Sprintf("root@tcp(127.0.0.1:%d)/", port))
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	if _, err := admin.Exec("CREATE DATABASE soak"); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *mariadb) name() string   { return "mariadb" }
func (m *mariadb) driver() string { return "mysql" }
func (m *mariadb) dsn() string {
	return fmt.Sprintf("root@tcp(127.0.0.1:%d)/soak?timeout=2s", m.port)
}

func (m *mariadb) start() error {
	args := []string{"--no-defaults", "--datadir=" + filepath.Join(m.dir, "data"), "--port=" + strconv.Itoa(m.port),
		"--socket=" + filepath.Join(m.dir, "mysqld.sock"), "--bind-address=127.0.0.1", "--skip-grant-tables",
		"--pid-file=" + filepath.Join(m.dir, "mysqld.pid"), "--log-error=" + filepath.Join(m.dir, "error.log"),
		"--innodb-flush-log-at-trx-commit=0", "--innodb-buffer-pool-size=32M", "--max-connections=200"}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	m.cmd = exec.Command("mariadbd", args...)
	if err := m.cmd.Start(); err != nil {
		return err
	}
	m.done = make(chan struct{})
	go func(c *exec.Cmd, done chan struct{}) { _ = c.Wait(); close(done) }(m.cmd, m.done)
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", m.port), time.Second)
		if err == nil {
			c.Close()
			return waitSQL("mysql", fmt.Sprintf("root@tcp(127.0.0.1:%d)/", m.port), 30*time.Second)
		}
		select {
		case <-m.done:
			log, _ := os.ReadFile(filepath.Join(m.dir, "error.log"))
			return fmt.Errorf("mariadbd exited at start:\n%s", log)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("mariadbd did not listen on %d", m.port)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (m *mariadb) crash() error {
	if m.cmd == nil {
		return nil
	}
	_ = m.cmd.Process.Kill()
	<-m.done
	m.cmd = nil
	return nil
}

func (m *mariadb) close() { _ = m.crash() }
