package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// TestResetConnection: COM_RESET_CONNECTION is answered OK; it resets the
// session (Session.Reset, no new login) and closes the connection's
// prepared statements, giving back the room their texts and long data
// took; the connection goes on with the same session.
func TestResetConnection(t *testing.T) {
	ts := startServer(t, Config{MaxAllowedPacket: 4 << 20})
	conn, err := client.Connect(ts.addr(), testUser, testPassword, "")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	// Fill most of the connection's room: 10 MiB of long data and 14
	// statements of 1 MiB of text (the caps are 16 MiB each).
	withLongData, err := conn.Prepare("SELECT ?")
	if err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte{'a'}, 1<<20)
	longData := func(st *client.Stmt, mib int) {
		for range mib {
			rawCommand(t, conn, append(binary.LittleEndian.AppendUint32([]byte{gomysql.COM_STMT_SEND_LONG_DATA}, st.ID), append([]byte{0, 0}, chunk...)...)...)
		}
	}
	longData(withLongData, 10)
	text := "SELECT 1 /*" + string(bytes.Repeat([]byte{'x'}, 1<<20-len("SELECT 1 /**/"))) + "*/"
	prepareTexts := func(n int) {
		for i := range n {
			if _, err := conn.Prepare(text); err != nil {
				t.Fatalf("statement %d of %d: %v", i+1, n, err)
			}
		}
	}
	prepareTexts(14)

	rawCommand(t, conn, gomysql.COM_RESET_CONNECTION)
	if p, err := conn.ReadPacket(); err != nil || p[0] != gomysql.OK_HEADER {
		t.Fatalf("got %q, %v after COM_RESET_CONNECTION, want OK", p, err)
	}
	s := ts.engine.session(t, 0)
	s.mu.Lock()
	resets := s.resets
	s.mu.Unlock()
	if resets != 1 || ts.engine.sessionCount() != 1 {
		t.Errorf("got %d resets of %d sessions, want 1 reset of the one session", resets, ts.engine.sessionCount())
	}

	_, err = withLongData.Execute("x")
	if me, ok := errors.AsType[*gomysql.MyError](err); !ok || me.Code != gomysql.ER_UNKNOWN_STMT_HANDLER {
		t.Errorf("executing a statement prepared before the reset: got %v, want error %d", err, gomysql.ER_UNKNOWN_STMT_HANDLER)
	}
	// The room is back: 15 MiB of text and 16 MiB of long data fit.
	prepareTexts(15)
	again, err := conn.Prepare("SELECT ?")
	if err != nil {
		t.Fatal(err)
	}
	if again.ID <= withLongData.ID {
		t.Errorf("statement id %d after the reset, want more than %d (ids are not reused)", again.ID, withLongData.ID)
	}
	longData(again, 16)
	rawCommand(t, conn, binary.LittleEndian.AppendUint32([]byte{gomysql.COM_STMT_RESET}, again.ID)...)
	if p, err := conn.ReadPacket(); err != nil || p[0] != gomysql.OK_HEADER {
		t.Fatalf("got %q, %v after COM_STMT_RESET, want OK", p, err)
	}
	if _, err := conn.Execute(qOK); err != nil {
		t.Errorf("a statement after the reset: %v", err)
	}
}

// TestChangeUserRefused: COM_CHANGE_USER is refused with 1235, saying so,
// and the connection stays open as the user who logged in.
func TestChangeUserRefused(t *testing.T) {
	ts := startServer(t, Config{})
	conn, err := client.Connect(ts.addr(), testUser, testPassword, "")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// User, a zero-length auth response, database: enough for a server
	// that would switch.
	rawCommand(t, conn, append(append([]byte{gomysql.COM_CHANGE_USER}, testOtherUser...), 0, 0, 0)...)
	p, err := conn.ReadPacket()
	if err != nil {
		t.Fatal(err)
	}
	err = conn.HandleErrorPacket(p)
	if me, ok := errors.AsType[*gomysql.MyError](err); !ok || me.Code != gomysql.ER_NOT_SUPPORTED_YET || !bytes.Contains([]byte(me.Message), []byte("COM_CHANGE_USER")) {
		t.Fatalf("got %q, want error 1235 naming COM_CHANGE_USER", p)
	}
	if err := conn.Ping(); err != nil {
		t.Fatalf("the connection after COM_CHANGE_USER: %v", err)
	}
	if ts.engine.sessionCount() != 1 || ts.engine.session(t, 0).user != testUser {
		t.Errorf("COM_CHANGE_USER opened a session or changed its user")
	}
}
