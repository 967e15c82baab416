package wire

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// cursorAnswer is what a COM_STMT_EXECUTE or COM_STMT_FETCH sent back.
type cursorAnswer struct {
	columns int      // column definitions (execute)
	rows    [][]byte // row packets
	status  uint16   // of the final EOF packet
	ok      bool     // an OK packet
	err     uint16   // an error packet's code
	msg     string   // and message
}

// readCursorAnswer reads the answer to an execute (columns true) or a
// fetch: an OK or error packet, or packets up to the final EOF. An execute
// that opens a cursor ends at the EOF after the column definitions.
func readCursorAnswer(t *testing.T, conn *client.Conn, columns bool) cursorAnswer {
	t.Helper()
	var a cursorAnswer
	p, err := conn.ReadPacket()
	if err != nil {
		t.Fatal(err)
	}
	switch p[0] {
	case gomysql.OK_HEADER:
		if columns {
			return cursorAnswer{ok: true}
		}
	case gomysql.ERR_HEADER:
		return cursorAnswer{err: binary.LittleEndian.Uint16(p[1:3]), msg: string(p[9:])}
	}
	if columns {
		n, _, _ := gomysql.LengthEncodedInt(p)
		for range n + 1 { // the definitions and their EOF
			if p, err = conn.ReadPacket(); err != nil {
				t.Fatal(err)
			}
		}
		a.columns = int(n)
		if a.status = binary.LittleEndian.Uint16(p[3:5]); a.status&gomysql.SERVER_STATUS_CURSOR_EXISTS != 0 {
			return a
		}
		if p, err = conn.ReadPacket(); err != nil {
			t.Fatal(err)
		}
	}
	for p[0] != gomysql.EOF_HEADER || len(p) >= 9 {
		a.rows = append(a.rows, p)
		if p, err = conn.ReadPacket(); err != nil {
			t.Fatal(err)
		}
	}
	a.status = binary.LittleEndian.Uint16(p[3:5])
	return a
}

// TestReadOnlyCursor: COM_STMT_EXECUTE with CURSOR_TYPE_READ_ONLY runs the
// statement once and answers with its column definitions and an EOF with
// SERVER_STATUS_CURSOR_EXISTS; COM_STMT_FETCH then sends the rows, in the
// binary format of an execution without a cursor, as many as asked, with
// SERVER_STATUS_LAST_ROW_SEND once a fetch finds them run out, as MariaDB
// 10.11 answers. The cursor is gone after that, after COM_STMT_RESET, COM_STMT_CLOSE and
// another execution: a fetch then gets 1421 (1243 for a closed statement).
// A statement without a result set answers OK. Before, the cursor flag was
// refused with 1235.
func TestReadOnlyCursor(t *testing.T) {
	ts := startServer(t, Config{})
	conn, err := client.Connect(ts.addr(), testUser, testPassword, "")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	prepare := func(query string) []byte {
		st, err := conn.Prepare(query)
		if err != nil {
			t.Fatal(err)
		}
		return binary.LittleEndian.AppendUint32(nil, st.ID)
	}
	execute := func(id []byte, flags byte) cursorAnswer {
		rawCommand(t, conn, append(append([]byte{gomysql.COM_STMT_EXECUTE}, id...), flags, 1, 0, 0, 0)...)
		return readCursorAnswer(t, conn, true)
	}
	fetch := func(id []byte, n uint32) cursorAnswer {
		rawCommand(t, conn, binary.LittleEndian.AppendUint32(append([]byte{gomysql.COM_STMT_FETCH}, id...), n)...)
		return readCursorAnswer(t, conn, false)
	}
	const (
		open = serverStatus | gomysql.SERVER_STATUS_CURSOR_EXISTS
		last = serverStatus | gomysql.SERVER_STATUS_LAST_ROW_SEND
	)
	check := func(what string, got, want cursorAnswer) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: got %+v, want %+v", what, got, want)
		}
	}
	noCursor := func(id []byte) cursorAnswer {
		s := binary.LittleEndian.Uint32(id)
		return cursorAnswer{err: gomysql.ER_STMT_HAS_NO_OPEN_CURSOR, msg: fmt.Sprintf("The statement (%d) has no open cursor", s)}
	}

	rows := prepare(qRows)
	plain := execute(rows, 0)
	if len(plain.rows) != 3 {
		t.Fatalf("execution without a cursor: got %d rows, want 3", len(plain.rows))
	}
	session := ts.engine.session(t, 0)
	ran := func() int {
		session.mu.Lock()
		defer session.mu.Unlock()
		return len(session.queries)
	}
	queries := ran()
	check("execute with a cursor", execute(rows, gomysql.CURSOR_TYPE_READ_ONLY), cursorAnswer{columns: 5, status: open})
	check("fetch 2", fetch(rows, 2), cursorAnswer{rows: plain.rows[:2], status: open})
	check("fetch 2 more", fetch(rows, 2), cursorAnswer{rows: plain.rows[2:], status: last})
	check("fetch past the end", fetch(rows, 1), noCursor(rows))
	if got := ran(); got != queries+1 {
		t.Errorf("the session ran %d statements for one execution and its fetches, want 1", got-queries)
	}

	check("execute again", execute(rows, gomysql.CURSOR_TYPE_READ_ONLY), cursorAnswer{columns: 5, status: open})
	check("fetch 0", fetch(rows, 0), cursorAnswer{status: open})
	check("fetch 3, all that is left", fetch(rows, 3), cursorAnswer{rows: plain.rows, status: open})
	check("fetch after the last row", fetch(rows, 3), cursorAnswer{status: last})

	execute(rows, gomysql.CURSOR_TYPE_READ_ONLY)
	fetch(rows, 1)
	check("re-execute", execute(rows, gomysql.CURSOR_TYPE_READ_ONLY), cursorAnswer{columns: 5, status: open})
	check("fetch after re-execute", fetch(rows, 10), cursorAnswer{rows: plain.rows, status: last})

	execute(rows, gomysql.CURSOR_TYPE_READ_ONLY)
	rawCommand(t, conn, append([]byte{gomysql.COM_STMT_RESET}, rows...)...)
	if _, err := conn.ReadOKPacket(); err != nil {
		t.Fatal(err)
	}
	check("fetch after reset", fetch(rows, 1), noCursor(rows))
	execute(rows, 0)
	check("fetch after an execution without a cursor", fetch(rows, 1), noCursor(rows))

	empty := prepare(qEmpty)
	check("execute an empty result", execute(empty, gomysql.CURSOR_TYPE_READ_ONLY), cursorAnswer{columns: 2, status: open})
	check("fetch an empty result", fetch(empty, 5), cursorAnswer{status: last})

	ok := prepare(qOK)
	check("execute a statement without a result set", execute(ok, gomysql.CURSOR_TYPE_READ_ONLY), cursorAnswer{ok: true})
	check("fetch it", fetch(ok, 1), noCursor(ok))

	// Other cursor types are ignored, as MySQL and MariaDB ignore them.
	for _, flags := range []byte{gomysql.CURSOR_TYPE_FOR_UPDATE, gomysql.CURSOR_TYPE_SCROLLABLE} {
		check(fmt.Sprintf("execute with flags %d", flags), execute(rows, flags), cursorAnswer{columns: 5, rows: plain.rows, status: serverStatus})
	}

	execute(rows, gomysql.CURSOR_TYPE_READ_ONLY)
	rawCommand(t, conn, append([]byte{gomysql.COM_STMT_CLOSE}, rows...)...)
	check("fetch after close", fetch(rows, 1), cursorAnswer{err: gomysql.ER_UNKNOWN_STMT_HANDLER,
		msg: fmt.Sprintf("Unknown prepared statement handler (%d) given to mysqld_stmt_fetch", binary.LittleEndian.Uint32(rows))})
	rawCommand(t, conn, gomysql.COM_STMT_FETCH, 1, 0, 0)
	check("a fetch of 3 bytes", readCursorAnswer(t, conn, false), cursorAnswer{err: gomysql.ER_MALFORMED_PACKET, msg: "Malformed communication packet."})
}

// TestCursorBytesPerConnection: the rows a connection's open cursors hold
// are bounded by maxConnCursorBytes; a result that would pass it is sent
// whole, as without a cursor (no SERVER_STATUS_CURSOR_EXISTS), and a closed
// cursor gives its bytes back.
func TestCursorBytesPerConnection(t *testing.T) {
	ts := startServer(t, Config{MaxAllowedPacket: 64 << 20})
	conn, err := client.Connect(ts.addr(), testUser, testPassword, "")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var ids [][]byte
	for range 3 {
		st, err := conn.Prepare(qBig)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, binary.LittleEndian.AppendUint32(nil, st.ID))
	}
	execute := func(id []byte) cursorAnswer {
		rawCommand(t, conn, append(append([]byte{gomysql.COM_STMT_EXECUTE}, id...), gomysql.CURSOR_TYPE_READ_ONLY, 1, 0, 0, 0)...)
		return readCursorAnswer(t, conn, true)
	}
	if a := execute(ids[0]); a.status&gomysql.SERVER_STATUS_CURSOR_EXISTS == 0 || len(a.rows) != 0 {
		t.Fatalf("the first big result: status %#x and %d rows, want a cursor", a.status, len(a.rows))
	}
	a := execute(ids[1])
	if a.status&gomysql.SERVER_STATUS_CURSOR_EXISTS != 0 || len(a.rows) != 1 || len(a.rows[0]) < bigRowBytes {
		t.Errorf("the second big result: status %#x and %d rows, want the row without a cursor", a.status, len(a.rows))
	}
	rawCommand(t, conn, append([]byte{gomysql.COM_STMT_CLOSE}, ids[0]...)...)
	if a := execute(ids[2]); a.status&gomysql.SERVER_STATUS_CURSOR_EXISTS == 0 || len(a.rows) != 0 {
		t.Errorf("a big result after the first cursor closed: status %#x and %d rows, want a cursor", a.status, len(a.rows))
	}
}
