package main

import (
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestCursorFetchConnectorC: MariaDB Connector/C (libmariadb3, the C API
// under the mariadb client, the ODBC driver and most language bindings)
// executes a prepared grouped aggregate with a read-only server-side
// cursor and fetches its rows two at a time (COM_STMT_FETCH), with a text
// query between two fetches; the statement is charged once, at its
// execution. Before, the execution was refused with 1235 "cursors".
// (MySQL Connector/J's useCursorFetch sends the same commands; Debian's
// Connector/J, MariaDB's, never asks for a cursor.)
func TestCursorFetchConnectorC(t *testing.T) {
	needClient(t, havePython("ctypes") && exec.Command(debianPython, "-c", `import ctypes; ctypes.CDLL("libmariadb.so.3")`).Run() == nil,
		"libmariadb.so.3 (MariaDB Connector/C)")
	p := startProxy(t, "", nil)
	host, port, _ := net.SplitHostPort(p.addr)
	env := clientEnv{host: host, port: port, user: "demo", password: "demo"}
	out, errText := runProgram(t, env.vars(), "", debianPython, filepath.Join(clientsDir(t), "connector_c_cursor.py"))
	steps := parseSteps(out)
	for name, want := range map[string]clientStep{
		"connect": {ok: true, detail: "connected"},
		"execute": {ok: true, detail: "columns=2"},
		"first":   {ok: true, detail: "1,2"},
		"rest":    {ok: true, detail: "3,4,5,6"},
		"again":   {ok: true, detail: "rows=6"},
	} {
		if got := steps[name]; got != want {
			t.Errorf("%s: got %+v, want %+v\noutput:\n%s%s", name, got, want, out, errText)
		}
	}
	before, err1 := strconv.ParseFloat(steps["before"].detail, 64)
	between, err2 := strconv.ParseFloat(steps["between"].detail, 64)
	if err1 != nil || err2 != nil || before-between != 0.5 {
		t.Errorf("remaining epsilon %q before the execution and %q between its fetches, want 0.5 less\noutput:\n%s%s",
			steps["before"].detail, steps["between"].detail, out, errText)
	}
}
