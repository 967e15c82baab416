package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// The real-client tests run every client family an analyst might use
// against the demo: each connects, browses the schema, runs a DP aggregate,
// sets @dp_epsilon and gets a refusal for a raw-row query, and the test
// checks what came back, step by step. Clients are the programs and
// libraries .ci/run installs; a missing one fails the test when CI=true and
// skips it otherwise. The scripts are in testdata/clients.

// clientStep is the outcome of one step: ok with a detail, or a MySQL error
// code and message.
type clientStep struct {
	ok     bool
	detail string
	code   int
}

// clientSteps maps step names to outcomes.
type clientSteps map[string]clientStep

// clientEnv is where a client connects.
type clientEnv struct {
	host, port, user, password string
	ca                         string // PEM file of the server certificate; "" for no TLS
	jdbcParams                 string // extra Connector/J URL parameters
	// fresh runs the client against a proxy of its own: its first login is
	// then a caching_sha2_password full authentication, not a fast one
	// from the cache another client of the shared proxy filled.
	fresh bool
}

// onFreshProxy returns env pointing at a demo proxy started for t alone
// when env.fresh is set, else env.
func onFreshProxy(t *testing.T, env clientEnv) clientEnv {
	t.Helper()
	if !env.fresh {
		return env
	}
	p := startProxy(t, "", nil)
	env.host, env.port, _ = net.SplitHostPort(p.addr)
	if env.ca != "" {
		env.ca = filepath.Join(p.dir, "dpproxy-demo-cert.pem")
	}
	return env
}

func (e clientEnv) vars() []string {
	v := []string{"DP_HOST=" + e.host, "DP_PORT=" + e.port, "DP_USER=" + e.user, "DP_PASSWORD=" + e.password, "DP_DB=dpproxy"}
	if e.ca != "" {
		v = append(v, "DP_CA="+e.ca)
	}
	return v
}

// clientsDir is testdata/clients.
func clientsDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.Abs(filepath.Join("..", "..", "testdata", "clients"))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// needClient skips the test, or fails it under CI=true, when ok is false.
func needClient(t *testing.T, ok bool, what string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed; .ci/run installs it", what)
	}
	t.Skipf("%s is not installed", what)
}

func haveProgram(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}

// debianPython is the interpreter of Debian's python3-* packages, which
// .ci/run installs (PyPI is not reachable from CI); a python3 earlier in
// PATH (pyenv, a virtualenv) would not see them.
const debianPython = "/usr/bin/python3"

// havePython reports whether debianPython can import every module.
func havePython(modules ...string) bool {
	return exec.Command(debianPython, "-c", "import "+strings.Join(modules, ", ")).Run() == nil
}

// runProgram runs name with args and env, stdin, within a minute; it returns
// stdout and stderr.
func runProgram(t *testing.T, env []string, stdin, name string, args ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil && ctx.Err() != nil {
		t.Fatalf("%s timed out:\n%s%s", name, stdout.String(), stderr.String())
	}
	return stdout.String(), stderr.String()
}

// parseSteps reads the "<step>\tok\t<detail>" / "<step>\terror\t<code>\t<msg>"
// lines of a client script.
func parseSteps(out string) clientSteps {
	steps := clientSteps{}
	for line := range strings.Lines(out) {
		f := strings.SplitN(strings.TrimRight(line, "\r\n"), "\t", 4)
		switch {
		case len(f) >= 3 && f[1] == "ok":
			steps[f[0]] = clientStep{ok: true, detail: f[2]}
		case len(f) == 4 && f[1] == "error":
			code, _ := strconv.Atoi(f[2])
			steps[f[0]] = clientStep{code: code, detail: f[3]}
		}
	}
	return steps
}

// codeIn finds a MySQL error number in a client's error text: "ERROR 1235
// (42000)" (mariadb), "(1235, '...')" (PyMySQL/mycli), "[1235]" (isql).
var codeIn = regexp.MustCompile(`ERROR (\d{4})|\((\d{4}),|\[(\d{4})\]|\((\d{4})\)`)

func errorCode(text string) int {
	m := codeIn.FindStringSubmatch(text)
	if m == nil {
		return 0
	}
	for _, g := range m[1:] {
		if g != "" {
			n, _ := strconv.Atoi(g)
			return n
		}
	}
	return 0
}

// checkSteps asserts the common steps, each as a subtest so that the report
// shows which step of which client fails, then the extra ones.
func checkSteps(t *testing.T, steps clientSteps, raw string, extra ...string) {
	t.Helper()
	t.Logf("client output:\n%s", raw)
	okStep := func(t *testing.T, name string) (clientStep, bool) {
		s, found := steps[name]
		if !found {
			t.Errorf("no %s step in the output", name)
			return s, false
		}
		if !s.ok {
			t.Errorf("%s: error %d: %s", name, s.code, s.detail)
			return s, false
		}
		return s, true
	}
	t.Run("connect", func(t *testing.T) { okStep(t, "connect") })
	t.Run("browse", func(t *testing.T) {
		if s, ok := okStep(t, "browse"); ok && !(strings.Contains(s.detail, "pums") && strings.Contains(s.detail, "age") && strings.Contains(s.detail, "income")) {
			t.Errorf("browse: got %q, want table pums with its columns age … income", s.detail)
		}
	})
	t.Run("aggregate", func(t *testing.T) {
		if s, ok := okStep(t, "aggregate"); ok {
			if v, err := strconv.ParseFloat(strings.TrimSpace(s.detail), 64); err != nil || math.IsNaN(v) || v < -100 || v > 200 {
				t.Errorf("aggregate: got %q, want a noisy mean age", s.detail)
			}
		}
	})
	t.Run("set", func(t *testing.T) { okStep(t, "set") })
	t.Run("refused", func(t *testing.T) {
		s, found := steps["refused"]
		if !found || s.ok || s.code != 1235 {
			t.Errorf("refused: got %+v, want error 1235", s)
		}
	})
	for _, name := range extra {
		t.Run(name, func(t *testing.T) { okStep(t, name) })
	}
}

// The statements of every client.
const (
	clientBrowseTables  = "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()"
	clientBrowseColumns = "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_NAME = 'pums' ORDER BY ORDINAL_POSITION"
	clientAggregate     = "SELECT AVG(age) FROM pums"
	clientSet           = "SET @dp_epsilon = 0.5"
	clientRefused       = "SELECT * FROM pums"
)

// cliSteps runs the steps with a command-line client: run executes one
// statement and returns its output (rows, one per line) or an error text.
func cliSteps(run func(sql string) (string, string, bool)) (clientSteps, string) {
	steps := clientSteps{}
	var raw strings.Builder
	do := func(name, sql string, detail func(string) string) {
		out, errText, ok := run(sql)
		fmt.Fprintf(&raw, "%s: %s %s\n", name, out, errText)
		if ok {
			steps[name] = clientStep{ok: true, detail: detail(out)}
		} else {
			steps[name] = clientStep{code: errorCode(errText + out), detail: strings.TrimSpace(errText + out)}
		}
	}
	firstLine := func(s string) string { l, _, _ := strings.Cut(strings.TrimSpace(s), "\n"); return l }
	joined := func(s string) string { return strings.Join(strings.Fields(s), ",") }
	do("connect", "SELECT 1", firstLine)
	do("browse", clientBrowseTables+"; "+clientBrowseColumns, joined)
	do("aggregate", clientAggregate, firstLine)
	do("set", clientSet, firstLine)
	do("refused", clientRefused, firstLine)
	return steps, raw.String()
}

// TestRealClients runs every client family against the demo, the families
// in parallel (mycli alone takes ~2 s per statement).
func TestRealClients(t *testing.T) {
	p := startProxy(t, "", nil)
	host, port, _ := net.SplitHostPort(p.addr)
	ca := filepath.Join(p.dir, "dpproxy-demo-cert.pem")
	native := clientEnv{host: host, port: port, user: "demo", password: "demo"}
	sha2 := clientEnv{host: host, port: port, user: "demo_sha2", password: "demo"}
	sha2RSA := sha2
	sha2RSA.fresh = true
	withCA := func(e clientEnv) clientEnv { e.ca = ca; return e }
	withJDBC := func(e clientEnv, params string) clientEnv { e.jdbcParams = params; return e }
	dir := clientsDir(t)

	t.Run("mariadb", func(t *testing.T) {
		t.Parallel()
		needClient(t, haveProgram("mariadb"), "the mariadb client")
		for _, v := range []struct {
			name string
			env  clientEnv
			tls  []string
		}{
			{"plain", native, []string{"--ssl=0"}},
			{"ssl", native, []string{"--ssl"}},
			{"ssl-verify-server-cert", native, []string{"--ssl-ca=" + ca, "--ssl-verify-server-cert"}},
			{"caching_sha2-rsa", sha2RSA, []string{"--ssl=0"}},
			{"caching_sha2-tls", sha2, []string{"--ssl-ca=" + ca, "--ssl-verify-server-cert"}},
		} {
			t.Run(v.name, func(t *testing.T) {
				env := onFreshProxy(t, v.env)
				args := append([]string{"-h" + env.host, "-P" + env.port, "-u" + env.user, "-p" + env.password, "-N", "-B"}, v.tls...)
				run := func(sql string) (string, string, bool) {
					out, errText := runProgram(t, nil, "", "mariadb", append(args, "dpproxy", "-e", sql)...)
					return out, errText, errText == ""
				}
				steps, raw := cliSteps(run)
				extra := []string{}
				if v.tls[0] != "--ssl=0" {
					out, errText := runProgram(t, nil, "", "mariadb", append(args, "-e", "status")...)
					// The client's cipher is the one the server's
					// Ssl_cipher names, in OpenSSL's naming as MySQL's.
					status, _ := runProgram(t, nil, "", "mariadb", append(args, "-e", "SHOW SESSION STATUS LIKE 'Ssl_cipher'")...)
					serverCipher := strings.TrimSpace(strings.TrimPrefix(status, "Ssl_cipher"))
					if m := regexp.MustCompile(`Cipher in use is (\S+)`).FindStringSubmatch(out); m != nil && m[1] == serverCipher {
						steps["tls"] = clientStep{ok: true, detail: m[1]}
					} else {
						steps["tls"] = clientStep{detail: fmt.Sprintf("%s%s; server's Ssl_cipher %q", out, errText, serverCipher)}
					}
					extra = append(extra, "tls")
				}
				checkSteps(t, steps, raw, extra...)
			})
		}
	})

	t.Run("go-sql-driver", func(t *testing.T) {
		t.Parallel()
		pem, err := os.ReadFile(ca)
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		if err := mysql.RegisterTLSConfig("dpproxy-demo", &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}); err != nil {
			t.Fatal(err)
		}
		defer mysql.DeregisterTLSConfig("dpproxy-demo")
		for _, v := range []struct {
			name      string
			env       clientEnv
			tlsConfig string
		}{
			{"plain", native, ""},
			{"tls", native, "dpproxy-demo"},
			{"caching_sha2-rsa", sha2RSA, ""},
			{"caching_sha2-tls", sha2, "dpproxy-demo"},
		} {
			t.Run(v.name, func(t *testing.T) {
				env := onFreshProxy(t, v.env)
				cfg := mysql.NewConfig()
				cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = env.user, env.password, "tcp", net.JoinHostPort(env.host, env.port), "dpproxy"
				cfg.TLSConfig = v.tlsConfig
				cfg.AllowNativePasswords = v.env.user == "demo" // demo_sha2's client insists on caching_sha2_password
				cfg.Timeout = 10 * time.Second
				steps := goSQLDriverSteps(t, cfg.FormatDSN())
				checkSteps(t, steps, fmt.Sprint(steps), "prepared")
			})
		}
	})

	// python runs a script whose steps are checkSteps' and steps.
	python := func(script string, steps []string, modules ...string) func(t *testing.T, env clientEnv) {
		return func(t *testing.T, env clientEnv) {
			needClient(t, havePython(modules...), debianPython+" with "+strings.Join(modules, ", "))
			out, errText := runProgram(t, env.vars(), "", debianPython, filepath.Join(dir, script))
			extra := append([]string{}, steps...)
			if env.ca != "" && strings.Contains(out, "tls\t") {
				extra = append(extra, "tls")
			}
			checkSteps(t, parseSteps(out), out+errText, extra...)
		}
	}
	for _, c := range []struct {
		name string
		run  func(t *testing.T, env clientEnv)
		envs map[string]clientEnv
	}{
		{"pymysql", python("pymysql_client.py", nil, "pymysql"),
			map[string]clientEnv{"plain": native, "tls": withCA(native), "caching_sha2-rsa": sha2RSA, "caching_sha2-tls": withCA(sha2)}},
		{"sqlalchemy", python("sqlalchemy_client.py", nil, "sqlalchemy", "pandas", "pymysql"),
			map[string]clientEnv{"plain": native}},
		{"pyodbc", python("pyodbc_client.py", []string{"typeinfo"}, "pyodbc"),
			map[string]clientEnv{"plain": native, "tls": withCA(native)}},
		{"mysql2", nodeClient(dir), map[string]clientEnv{"plain": native, "tls": withCA(native), "caching_sha2-tls": withCA(sha2)}},
		{"connector-j", connectorJ(dir, t.TempDir()), map[string]clientEnv{
			"default-url": native, "useSsl": withCA(native),
			// Without the SET sql_mode = concat(...) it sends by default.
			"jdbcCompliantTruncation=false": withJDBC(native, "jdbcCompliantTruncation=false"),
			"caching_sha2-useSsl":           withJDBC(withCA(sha2), "jdbcCompliantTruncation=false"),
			// Server-side prepared statements (the default prepares only
			// for getMetaData()).
			"useServerPrepStmts": withJDBC(native, "useServerPrepStmts=true"),
		}},
		{"isql", isqlClient, map[string]clientEnv{"plain": native}},
		{"mycli", mycliClient, map[string]clientEnv{"tls": withCA(native)}}, // ~2 s per statement: TLS only
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for name, env := range c.envs {
				t.Run(name, func(t *testing.T) { c.run(t, onFreshProxy(t, env)) })
			}
		})
	}
}

// goSQLDriverSteps runs the steps with go-sql-driver; the aggregate with an
// argument goes through a server-side prepared statement.
func goSQLDriverSteps(t *testing.T, dsn string) clientSteps {
	steps := clientSteps{}
	record := func(name string, detail string, err error) {
		if err != nil {
			steps[name] = clientStep{code: int(mysqlCode(err)), detail: err.Error()}
			return
		}
		steps[name] = clientStep{ok: true, detail: detail}
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(t.Context())
	record("connect", "", err)
	if err != nil {
		return steps
	}
	defer conn.Close()
	var names []string
	err = func() error {
		for _, q := range []string{clientBrowseTables, clientBrowseColumns} {
			rows, err := conn.QueryContext(t.Context(), q)
			if err != nil {
				return err
			}
			for rows.Next() {
				var s string
				if err := rows.Scan(&s); err != nil {
					rows.Close()
					return err
				}
				names = append(names, s)
			}
			rows.Close()
		}
		return nil
	}()
	record("browse", strings.Join(names, ","), err)
	var avg sql.NullFloat64
	err = conn.QueryRowContext(t.Context(), clientAggregate).Scan(&avg)
	record("aggregate", strconv.FormatFloat(avg.Float64, 'g', -1, 64), err)
	err = conn.QueryRowContext(t.Context(), "SELECT AVG(age) FROM pums WHERE sex = ?", 1).Scan(&avg)
	record("prepared", strconv.FormatFloat(avg.Float64, 'g', -1, 64), err)
	_, err = conn.ExecContext(t.Context(), clientSet)
	record("set", "", err)
	rows, err := conn.QueryContext(t.Context(), clientRefused)
	if err == nil {
		rows.Close()
	}
	record("refused", "", err)
	return steps
}

// nodeClient runs testdata/clients/node/client.js (mysql2; .ci/run runs npm ci).
func nodeClient(dir string) func(t *testing.T, env clientEnv) {
	return func(t *testing.T, env clientEnv) {
		_, err := os.Stat(filepath.Join(dir, "node", "node_modules", "mysql2"))
		needClient(t, haveProgram("node") && err == nil, "node with mysql2 (npm ci in testdata/clients/node)")
		out, errText := runProgram(t, env.vars(), "", "node", filepath.Join(dir, "node", "client.js"))
		steps := parseSteps(out)
		checkSteps(t, steps, out+errText, "execute", "catalog")
		if s := steps["catalog"]; s.ok && !(strings.Contains(s.detail, "pums") && strings.Contains(s.detail, "db=dpproxy") &&
			strings.Contains(s.detail, "union=a,b") && strings.Contains(s.detail, "prepared=dpproxy")) {
			t.Errorf("catalog: got %q, want SHOW TABLES with pums, DATABASE() dpproxy twice and the union a,b", s.detail)
		}
	}
}

// connectorJAR is Debian's libmariadb-java.
const connectorJAR = "/usr/share/java/mariadb-java-client.jar"

// connectorJ compiles testdata/clients/ClientSteps.java into classes once
// and runs it with the default URL, or with useSsl=true verifying the demo
// certificate, plus env's extra parameters.
func connectorJ(dir, classes string) func(t *testing.T, env clientEnv) {
	compiled := false
	return func(t *testing.T, env clientEnv) {
		_, err := os.Stat(connectorJAR)
		needClient(t, haveProgram("javac") && haveProgram("java") && err == nil, "a JDK and libmariadb-java")
		if !compiled {
			if out, errText := runProgram(t, nil, "", "javac", "-cp", connectorJAR, "-d", classes, filepath.Join(dir, "ClientSteps.java")); errText != "" {
				t.Fatalf("javac: %s%s", out, errText)
			}
			compiled = true
		}
		var params []string
		if env.ca != "" {
			params = append(params, "useSsl=true", "serverSslCert="+env.ca)
		}
		if env.jdbcParams != "" {
			params = append(params, env.jdbcParams)
		}
		url := fmt.Sprintf("jdbc:mariadb://%s:%s/dpproxy", env.host, env.port)
		if len(params) > 0 {
			url += "?" + strings.Join(params, "&")
		}
		out, errText := runProgram(t, nil, "", "java", "-cp", classes+string(os.PathListSeparator)+connectorJAR, "ClientSteps", url, env.user, env.password)
		steps := parseSteps(out)
		checkSteps(t, steps, out+errText, "metadata", "probe")
		// COM_STMT_PREPARE announces the grouped aggregate's columns, and
		// those of a zero-row probe whatever its marker holds, which
		// getMetaData() reads before executing (and ClientSteps checks
		// against the result set's; the probe's were none).
		const wantMetadata = "3:race BIGINT,n BIGINT,AVG(income) DOUBLE"
		if s := steps["metadata"]; s.ok && s.detail != wantMetadata {
			t.Errorf("metadata: got %q, want %q", s.detail, wantMetadata)
		}
		const wantProbe = "6:age BIGINT,sex BIGINT,educ BIGINT,race BIGINT,income DOUBLE,married BIGINT"
		if s := steps["probe"]; s.ok && s.detail != wantProbe {
			t.Errorf("probe: got %q, want %q", s.detail, wantProbe)
		}
	}
}

// isqlClient runs unixODBC's isql with MariaDB Connector/ODBC, one
// statement per run (-b batch mode, -v for the native error code).
func isqlClient(t *testing.T, env clientEnv) {
	needClient(t, haveProgram("isql") && odbcDriverInstalled(), "unixODBC isql with odbc-mariadb")
	conn := fmt.Sprintf("DRIVER={MariaDB Unicode};SERVER=%s;PORT=%s;UID=%s;PWD=%s;DATABASE=dpproxy", env.host, env.port, env.user, env.password)
	run := func(sql string) (string, string, bool) {
		out, errText := runProgram(t, nil, strings.ReplaceAll(sql, "; ", "\n")+"\n", "isql", "-k", conn, "-b", "-v", "-d\t")
		failed := strings.Contains(out, "[ISQL]ERROR") || strings.Contains(errText, "ERROR")
		return out, errText, !failed
	}
	steps, raw := cliSteps(run)
	// isql prints the SQLSTATE and message but not the native error number:
	// 1235 is the error with SQLSTATE 42000 (37000 in ODBC 2 terms) whose
	// message dpproxy starts with "not supported".
	if s := steps["refused"]; !s.ok && notSupported.MatchString(s.detail) {
		s.code = 1235
		steps["refused"] = s
	}
	checkSteps(t, steps, raw)
}

var notSupported = regexp.MustCompile(`\[(37000|42000)\]\[[^]]*\]\[[^]]*\]not supported:`)

func odbcDriverInstalled() bool {
	b, err := os.ReadFile("/etc/odbcinst.ini")
	return err == nil && bytes.Contains(b, []byte("[MariaDB Unicode]"))
}

// mycliClient runs mycli non-interactively (-e, CSV output), with a fresh
// HOME so that no user configuration applies.
func mycliClient(t *testing.T, env clientEnv) {
	needClient(t, haveProgram("mycli"), "mycli")
	home := t.TempDir()
	args := []string{"-h", env.host, "-P", env.port, "-u", env.user, "-p", env.password, "-D", "dpproxy", "--csv"}
	if env.ca != "" {
		args = append(args, "--ssl-ca", env.ca, "--ssl-verify-server-cert")
	}
	run := func(sql string) (string, string, bool) {
		out, errText := runProgram(t, []string{"HOME=" + home}, "", "mycli", append(args, "-e", sql)...)
		ok := errText == "" && errorCode(out) == 0
		if ok { // CSV: a header line, then the rows
			_, out, _ = strings.Cut(strings.ReplaceAll(out, `"`, ""), "\n")
		}
		return out, errText, ok
	}
	steps, raw := cliSteps(run)
	checkSteps(t, steps, raw)
}
