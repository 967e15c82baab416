package main

import (
	"errors"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// TestResetConnection: COM_RESET_CONNECTION, sent as a pool sends it when
// a connection is returned, resets the session and keeps the login:
// settings, user variables, system variables and prepared statements (SQL
// and protocol) are gone; the connection id, the user and the database
// stay, and so does the budget: what was spent stays spent, later
// statements are charged to the same account, and the repeat-answer
// cache, kept per analyst, still answers a repeated statement at no cost.
func TestResetConnection(t *testing.T) {
	dir, config := sqliteDeployment(t, 1)
	withRepeatWindow(t, config)
	p := startProxy(t, dir, nil, "--config", config)
	conn, err := client.Connect(p.addr, "carol", "carol-pw", "dpproxy")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	value := func(sql string) string {
		t.Helper()
		r, err := conn.Execute(sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		defer r.Close()
		var values []string
		for i := range r.ColumnNumber() {
			v, err := r.GetString(0, i)
			if err != nil {
				t.Fatal(err)
			}
			if r.Values[0][i].Value() == nil {
				v = "NULL"
			}
			values = append(values, v)
		}
		return strings.Join(values, " ")
	}
	const aggregate = "SELECT COUNT(*) FROM pums WHERE age > 30"

	value("SET @dp_epsilon = 0.5, @u = 'x', sql_select_limit = 1, time_zone = '+01:00'")
	value("PREPARE p FROM 'SELECT 1'")
	stmt, err := conn.Prepare("SELECT ?")
	if err != nil {
		t.Fatal(err)
	}
	answer := value(aggregate)
	login := value("SELECT CONNECTION_ID(), USER(), DATABASE()")
	if got := value("SELECT dp_remaining_epsilon()"); got != "0.5" {
		t.Fatalf("remaining epsilon before the reset: %s, want 0.5", got)
	}

	conn.ResetSequence()
	if err := conn.WritePacket([]byte{0, 0, 0, 0, gomysql.COM_RESET_CONNECTION}); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ReadOKPacket(); err != nil {
		t.Fatalf("COM_RESET_CONNECTION: %v", err)
	}

	for _, c := range []struct{ sql, want string }{
		{"SELECT @dp_epsilon, @dp_mechanism", "0.1 auto"},
		{"SELECT @u, @@sql_select_limit, @@time_zone", "NULL 18446744073709551615 SYSTEM"},
		{"SELECT CONNECTION_ID(), USER(), DATABASE()", login},
		{"SELECT dp_remaining_epsilon()", "0.5"}, // spent stays spent
	} {
		if got := value(c.sql); got != c.want {
			t.Errorf("after the reset, %s: %s, want %s", c.sql, got, c.want)
		}
	}
	if _, err := conn.Execute("EXECUTE p"); err == nil {
		t.Errorf("EXECUTE of a statement PREPAREd before the reset succeeded")
	}
	_, err = stmt.Execute(1)
	if me, ok := errors.AsType[*gomysql.MyError](err); !ok || me.Code != gomysql.ER_UNKNOWN_STMT_HANDLER {
		t.Errorf("executing a protocol statement prepared before the reset: got %v, want error %d", err, gomysql.ER_UNKNOWN_STMT_HANDLER)
	}

	// The same statement at the same ε is a repeat, answered alike for
	// free; another is charged to carol's account.
	value("SET @dp_epsilon = 0.5")
	if again := value(aggregate); again != answer {
		t.Errorf("the repeated statement after the reset answered %s, before %s", again, answer)
	}
	value("SET @dp_epsilon = NULL")
	value("SELECT AVG(age) FROM pums")
	if got := value("SELECT dp_remaining_epsilon()"); got != fmt.Sprint(0.5-0.1) {
		t.Errorf("remaining epsilon after a repeat and a new statement at 0.1: %s, want 0.4", got)
	}
}

// TestResetConnectionConnectorC: MariaDB Connector/C's
// mysql_reset_connection (what its pools and the ODBC driver call) resets
// the session on the same connection, and its mysql_change_user is
// refused with 1235, the connection staying open as the user who logged
// in. The library is libmariadb3, which .ci/run's mariadb-client depends
// on; the script reaches it with Python's ctypes.
func TestResetConnectionConnectorC(t *testing.T) {
	needClient(t, havePython("ctypes") && exec.Command(debianPython, "-c", `import ctypes; ctypes.CDLL("libmariadb.so.3")`).Run() == nil,
		"libmariadb.so.3 (MariaDB Connector/C)")
	p := startProxy(t, "", nil)
	host, port, _ := net.SplitHostPort(p.addr)
	env := clientEnv{host: host, port: port, user: "demo", password: "demo"}
	out, errText := runProgram(t, env.vars(), "", debianPython, filepath.Join(clientsDir(t), "connector_c_reset.py"))
	steps := parseSteps(out)
	id, _, _ := strings.Cut(strings.TrimPrefix(steps["before"].detail, "['"), "'")
	for name, want := range map[string]clientStep{
		"connect":     {ok: true, detail: "connected"},
		"before":      {ok: true, detail: fmt.Sprintf("['%s', 'demo@%%', 'dpproxy', '0.5', 'x', '1']", id)},
		"reset":       {ok: true, detail: "done"},
		"after":       {ok: true, detail: fmt.Sprintf("['%s', 'demo@%%', 'dpproxy', '0.1', None, '18446744073709551615'] prepared gone", id)},
		"change_user": {code: 1235},
		"still_open":  {ok: true, detail: "['demo@%']"},
	} {
		got := steps[name]
		if name == "change_user" {
			got.detail = ""
		}
		if got != want {
			t.Errorf("%s: got %+v, want %+v\noutput:\n%s%s", name, got, want, out, errText)
		}
	}
}
