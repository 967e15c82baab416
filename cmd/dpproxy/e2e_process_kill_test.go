package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/dpproxy/dpproxy/internal/wire"
)

// TestProcessKillCommand: COM_PROCESS_KILL, which MySQL's deprecated
// mysql_kill() sends, is answered as KILL CONNECTION id: OK for another
// connection of the same user, which closes; 1094 with the same message
// for another user's connection and for an id no connection has; 1317 for
// one's own, whose connection then closes; 1835 for a body shorter than
// an id. Before, every COM_PROCESS_KILL was answered 1047 "Unknown
// command 12".
func TestProcessKillCommand(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data.db")
	if out, err := exec.Command(binary, "load-demo", "--driver", "sqlite", "--dsn", data).CombinedOutput(); err != nil {
		t.Fatalf("load-demo: %v\n%s", err, out)
	}
	hash := wire.FormatNativePasswordHash(wire.NativePasswordHash("pw"))
	config := filepath.Join(dir, "dpproxy.yaml")
	yaml := fmt.Sprintf(`
backend: {driver: sqlite, dsn: %q}
ledger: {driver: sqlite, dsn: %q}
users:
  - {name: carol, password_hash: %q, epsilon: 1}
  - {name: dave, password_hash: %q, epsilon: 1}
tables:
  - name: pums
    columns:
      - {name: age, type: integer, lower: 0, upper: 100}
`, data, filepath.Join(dir, "ledger.db"), hash, hash)
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, dir, nil, "--config", config)
	raw := func(user string) *client.Conn {
		c, err := client.Connect(p.addr, user, "pw", "dpproxy")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// kill sends COM_PROCESS_KILL with body and returns the answer.
	kill := func(c *client.Conn, body []byte) error {
		c.ResetSequence()
		if err := c.WritePacket(append([]byte{0, 0, 0, 0, gomysql.COM_PROCESS_KILL}, body...)); err != nil {
			t.Fatal(err)
		}
		_, err := c.ReadOKPacket()
		return err
	}
	id := func(n uint32) []byte { return []byte{byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24)} }
	wantError := func(what string, err error, code uint16, msg string) {
		t.Helper()
		me, ok := errors.AsType[*gomysql.MyError](err)
		if !ok || me.Code != code || (msg != "" && me.Message != msg) {
			t.Errorf("%s: got %v, want error %d %q", what, err, code, msg)
		}
	}

	victim := p.connect(t, "carol", "pw")
	victimConn, err := victim.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer victimConn.Close()
	var victimID uint32
	if err := victimConn.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&victimID); err != nil {
		t.Fatal(err)
	}
	carol, dave := raw("carol"), raw("dave")
	wantError("COM_PROCESS_KILL by another user", kill(dave, id(victimID)), 1094, fmt.Sprintf("Unknown thread id: %d", victimID))
	wantError("COM_PROCESS_KILL of an unknown id", kill(carol, id(4000000000)), 1094, "Unknown thread id: 4000000000")
	wantError("COM_PROCESS_KILL of 3 bytes", kill(carol, []byte{1, 2, 3}), gomysql.ER_MALFORMED_PACKET, "")
	if err := victimConn.PingContext(context.Background()); err != nil {
		t.Fatalf("the refused kills closed the victim: %v", err)
	}
	if err := kill(carol, id(victimID)); err != nil {
		t.Fatalf("COM_PROCESS_KILL of one's other connection: %v, want OK", err)
	}
	if err := victimConn.PingContext(context.Background()); err == nil {
		t.Errorf("the killed connection still answers")
	}
	wantError("COM_PROCESS_KILL of one's own id", kill(carol, id(carol.GetConnectionID())), 1317, "Query execution was interrupted")
	if _, err := carol.Execute("SELECT 1"); err == nil {
		t.Errorf("after COM_PROCESS_KILL of its own id, the connection still answers")
	}
	if _, err := dave.Execute("SELECT 1"); err != nil {
		t.Errorf("dave's connection after the kills: %v", err)
	}
}
