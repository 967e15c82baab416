package wire

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// mariadbPath finds the mariadb CLI. Without it the test is skipped, or
// fails when CI=true, where it must be installed.
func mariadbPath(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("mariadb")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mariadb client not found (%v); CI must install mariadb-client", err)
		}
		t.Skipf("mariadb client not found (%v); install mariadb-client to run this test", err)
	}
	return path
}

// runMariadb runs the mariadb CLI against ts with extra arguments and stdin,
// and returns its stdout, stderr and error.
func runMariadb(t *testing.T, ts *testServer, password, stdin string, args ...string) (string, string, error) {
	t.Helper()
	host, port, err := net.SplitHostPort(ts.addr())
	if err != nil {
		t.Fatal(err)
	}
	base := []string{"--no-defaults", "-h" + host, "-P" + port, "-u" + testUser, "-p" + password, "--ssl=0"}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, mariadbPath(t), append(base, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	return stdout.String(), stderr.String(), err
}

func TestMariadbCLI(t *testing.T) {
	mariadbPath(t)
	ts := startServer(t, Config{})
	for _, tc := range []struct {
		name       string
		password   string
		args       []string
		wantOut    string
		wantErrOut string
	}{
		{
			name:     "batch",
			password: testPassword,
			args:     []string{"-e", qRows},
			wantOut: "COUNT(*)\tavg_salary\tname\tblob\tbig\n" +
				"NULL\t1.5\tx'y\t\\0\x01\t9223372036854775808\n" +
				"-7\tNULL\tNULL\tNULL\t1\n" +
				"42\t-0.25\tünï\t\tNULL\n",
		},
		{
			name:     "table",
			password: testPassword,
			args:     []string{"--table", "-e", "SELECT COUNT(*) FROM pums"},
			wantOut: "+---------------------------+\n" +
				"| query                     |\n" +
				"+---------------------------+\n" +
				"| SELECT COUNT(*) FROM pums |\n" +
				"+---------------------------+\n",
		},
		{
			// The client starts with another plugin; go-mysql asks it to
			// switch to mysql_native_password with a fresh nonce.
			name:     "auth switch",
			password: testPassword,
			args:     []string{"--default-auth=client_ed25519", "-e", "switched"},
			wantOut:  "query\nswitched\n",
		},
		{
			name:       "coded error",
			password:   testPassword,
			args:       []string{"-e", qCoded},
			wantErrOut: "ERROR 1226 (42000) at line 1: " + codedErr.msg + "\n",
		},
		{
			name:       "internal error",
			password:   testPassword,
			args:       []string{"-e", qPlain},
			wantErrOut: "ERROR 1105 (HY000) at line 1: internal error (ref ",
		},
		{
			name:       "wrong password",
			password:   "wrong",
			args:       []string{"-e", qRows},
			wantErrOut: "ERROR 1045 (28000): Access denied for user 'analyst'@'127.0.0.1",
		},
		{
			name:     "warnings",
			password: testPassword,
			args:     []string{"-vvv", "-e", qWarn},
			wantOut:  "1 row in set, 2 warnings",
		},
		{
			name:     "status",
			password: testPassword,
			args:     []string{"-e", "status"},
			wantOut:  "Threads: 1  Questions: ",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, err := runMariadb(t, ts, tc.password, "", tc.args...)
			t.Logf("stdout:\n%s\nstderr:\n%s", out, errOut)
			if tc.wantErrOut == "" && err != nil {
				t.Fatalf("got %v, want success", err)
			}
			if tc.wantErrOut != "" && err == nil {
				t.Fatalf("got success, want an error")
			}
			if !strings.Contains(out, tc.wantOut) {
				t.Errorf("got stdout %q, want it to contain %q", out, tc.wantOut)
			}
			if !strings.Contains(errOut, tc.wantErrOut) {
				t.Errorf("got stderr %q, want it to contain %q", errOut, tc.wantErrOut)
			}
		})
	}
}

// TestMariadbInteractive runs the CLI on a terminal (through script(1)), as
// an analyst would: at start it asks "select @@version_comment limit 1",
// which the session answers, and wire must pass through untouched.
func TestMariadbInteractive(t *testing.T) {
	mariadb := mariadbPath(t)
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skipf("script(1) not found (%v); it provides the terminal", err)
	}
	ts := startServer(t, Config{})
	host, port, _ := net.SplitHostPort(ts.addr())
	cli := strings.Join([]string{mariadb, "--no-defaults", "-h" + host, "-P" + port, "-u" + testUser, "'-p" + testPassword + "'", "--ssl=0"}, " ")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, script, "-qec", cli, "/dev/null")
	cmd.Stdin = strings.NewReader(qRows + ";\nquit\n")
	out, err := cmd.CombinedOutput()
	t.Logf("terminal:\n%s", out)
	if err != nil {
		t.Fatalf("got %v, want a clean exit", err)
	}
	s := ts.engine.session(t, 0)
	s.mu.Lock()
	queries := append([]string(nil), s.queries...)
	s.mu.Unlock()
	if len(queries) == 0 || queries[0] != qVersionComment {
		t.Errorf("got queries %q, want %q first", queries, qVersionComment)
	}
	if !strings.Contains(string(out), "dpproxy (fake)") {
		t.Errorf("got terminal output without the version comment %q", "dpproxy (fake)")
	}
}
