package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// rawCommand sends one command packet on conn.
func rawCommand(t *testing.T, conn *client.Conn, payload ...byte) {
	t.Helper()
	conn.ResetSequence()
	if err := conn.WritePacket(append(make([]byte, 4), payload...)); err != nil {
		t.Fatal(err)
	}
}

// rawRows reads a text or binary resultset's packets up to its final EOF
// and returns the row packets; an error packet fails the test.
func rawRows(t *testing.T, conn *client.Conn) [][]byte {
	t.Helper()
	var rows [][]byte
	eofs := 0
	for eofs < 2 {
		p, err := conn.ReadPacket()
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case p[0] == gomysql.ERR_HEADER:
			t.Fatalf("got error packet %q", p[3:])
		case p[0] == gomysql.EOF_HEADER && len(p) < 9:
			eofs++
		case eofs == 1:
			rows = append(rows, p)
		}
	}
	return rows
}

// TestStatementLifecycle drives COM_STMT_SEND_LONG_DATA, EXECUTE, RESET and
// CLOSE by hand, as C clients use them.
func TestStatementLifecycle(t *testing.T) {
	ts := startServer(t, Config{})
	conn, err := client.Connect(ts.addr(), testUser, testPassword, "")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stmt, err := conn.Prepare("SELECT ?")
	if err != nil {
		t.Fatal(err)
	}
	if stmt.ParamNum() != 1 {
		t.Fatalf("got %d parameters, want 1", stmt.ParamNum())
	}
	id := binary.LittleEndian.AppendUint32(nil, stmt.ID)

	longData := func(data string) {
		rawCommand(t, conn, append(append([]byte{gomysql.COM_STMT_SEND_LONG_DATA}, id...), append([]byte{0, 0}, data...)...)...)
	}
	// Execute with one STRING parameter whose value came as long data: the
	// packet carries its type but no value.
	executeLong := func() [][]byte {
		rawCommand(t, conn, append(append([]byte{gomysql.COM_STMT_EXECUTE}, id...), 0, 1, 0, 0, 0, 0, 1, gomysql.MYSQL_TYPE_STRING, 0)...)
		return rawRows(t, conn)
	}

	longData("long ")
	longData("text")
	rows := executeLong()
	if len(rows) != 1 || !bytes.Contains(rows[0], []byte("SELECT 'long text'")) {
		t.Errorf("got rows %q, want the long data as the argument", rows)
	}

	// Long data is consumed by the execution; a reset also drops it.
	longData("dropped")
	rawCommand(t, conn, append([]byte{gomysql.COM_STMT_RESET}, id...)...)
	if p, err := conn.ReadPacket(); err != nil || p[0] != gomysql.OK_HEADER {
		t.Fatalf("got %q, %v after COM_STMT_RESET, want OK", p, err)
	}
	r, err := stmt.Execute("short")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := r.GetString(0, 0); got != "SELECT 'short'" {
		t.Errorf("got %q after reset, want %q", got, "SELECT 'short'")
	}
	r.Close()

	if err := stmt.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = stmt.Execute("x")
	var me *gomysql.MyError
	if !errors.As(err, &me) || me.Code != gomysql.ER_UNKNOWN_STMT_HANDLER {
		t.Errorf("got %v executing a closed statement, want error %d", err, gomysql.ER_UNKNOWN_STMT_HANDLER)
	}
}
