package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
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

// TestConnectionStatementMemory: the long data and the prepared texts one
// connection holds are capped in total, not only per statement: with 1024
// statements of 16 MiB of long data (or 4 MiB of text) each, one connection
// could hold gigabytes. Past the cap the client gets 1153; executing,
// resetting or closing statements gives the room back.
func TestConnectionStatementMemory(t *testing.T) {
	ts := startServer(t, Config{MaxAllowedPacket: 4 << 20})
	conn, err := client.Connect(ts.addr(), testUser, testPassword, "")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	wantTooLarge := func(err error, what string) {
		t.Helper()
		var me *gomysql.MyError
		if !errors.As(err, &me) || me.Code != gomysql.ER_NET_PACKET_TOO_LARGE || !bytes.Contains([]byte(me.Message), []byte("this connection")) {
			t.Fatalf("%s: got %v, want 1153 about this connection", what, err)
		}
	}

	// Long data: 10 MiB on one statement, then 7 MiB on another is 1 MiB
	// too many (each is under the 16 MiB per-statement cap).
	s1, err := conn.Prepare("SELECT ?")
	if err != nil {
		t.Fatal(err)
	}
	s2, err := conn.Prepare("SELECT ?")
	if err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte{'a'}, 1<<20)
	longData := func(st *client.Stmt, mib int) {
		for range mib {
			rawCommand(t, conn, append(binary.LittleEndian.AppendUint32([]byte{gomysql.COM_STMT_SEND_LONG_DATA}, st.ID), append([]byte{0, 0}, chunk...)...)...)
		}
	}
	reset := func(st *client.Stmt) {
		rawCommand(t, conn, binary.LittleEndian.AppendUint32([]byte{gomysql.COM_STMT_RESET}, st.ID)...)
		if p, err := conn.ReadPacket(); err != nil || p[0] != gomysql.OK_HEADER {
			t.Fatalf("got %q, %v after COM_STMT_RESET, want OK", p, err)
		}
	}
	longData(s1, 10)
	longData(s2, 7)
	_, err = s2.Execute(nil)
	wantTooLarge(err, "executing with 17 MiB of long data on the connection")
	reset(s1)
	longData(s2, 7)
	reset(s2)
	longData(s1, 10)
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	longData(s2, 16)
	reset(s2)

	// Texts: fifteen statements of 1 MiB fit next to "SELECT ?", a
	// sixteenth does not, until one is closed.
	text := "SELECT 1 /*" + string(bytes.Repeat([]byte{'x'}, 1<<20-len("SELECT 1 /**/"))) + "*/"
	var stmts []*client.Stmt
	for range 15 {
		st, err := conn.Prepare(text)
		if err != nil {
			t.Fatalf("statement %d: %v", len(stmts)+1, err)
		}
		stmts = append(stmts, st)
	}
	_, err = conn.Prepare(text)
	wantTooLarge(err, "a 16th 1 MiB statement next to SELECT ?")
	if err := stmts[0].Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Prepare(text); err != nil {
		t.Fatalf("after closing one: %v", err)
	}
}

// TestPrepareAnnouncesDescribedColumns: COM_STMT_PREPARE announces the
// columns the session describes, each definition byte for byte the one the
// execution's result set sends (Connector/J's getMetaData() before execute
// reads them), and none for a statement the session cannot describe.
func TestPrepareAnnouncesDescribedColumns(t *testing.T) {
	ts := startServer(t, Config{})
	conn, err := client.Connect(ts.addr(), testUser, testPassword, "")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	stmt, err := conn.Prepare(qTyped)
	if err != nil {
		t.Fatal(err)
	}
	if stmt.ColumnNum() != len(typedFields) {
		t.Fatalf("prepare announced %d columns, want %d", stmt.ColumnNum(), len(typedFields))
	}
	announced, err := stmt.GetColumnFields()
	if err != nil {
		t.Fatal(err)
	}
	r, err := stmt.Execute("books")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if len(r.Fields) != len(announced) {
		t.Fatalf("the execution sent %d columns, the prepare announced %d", len(r.Fields), len(announced))
	}
	for j, f := range r.Fields {
		if got, want := stmt.RawColumnFields[j], f.Dump(); !bytes.Equal(got, want) {
			t.Errorf("column %d: announced %q, executed %q", j, got, want)
		}
		if string(announced[j].Name) != typedFields[j].Name || announced[j].Type != typedFields[j].Type {
			t.Errorf("column %d announced as %s type %d, want %s type %d", j, announced[j].Name, announced[j].Type, typedFields[j].Name, typedFields[j].Type)
		}
	}
	// Executing again sends the same columns: the announcement is sent once
	// and not kept.
	r2, err := stmt.Execute("music")
	if err != nil {
		t.Fatal(err)
	}
	if len(r2.Fields) != len(typedFields) {
		t.Errorf("the second execution sent %d columns, want %d", len(r2.Fields), len(typedFields))
	}
	r2.Close()

	plain, err := conn.Prepare("SELECT ?, ?")
	if err != nil {
		t.Fatal(err)
	}
	if plain.ColumnNum() != 0 {
		t.Errorf("an undescribed statement announced %d columns, want 0", plain.ColumnNum())
	}
	s := ts.engine.session(t, 0)
	s.mu.Lock()
	described := slices.Clone(s.described)
	s.mu.Unlock()
	if want := []string{qTyped + " (1)", "SELECT ?, ? (2)"}; !slices.Equal(described, want) {
		t.Errorf("the session was asked to describe %q, want %q", described, want)
	}
}

// TestExecuteGivesThePreparedText: COM_STMT_EXECUTE hands the session the
// prepared text beside the text with the arguments bound, which names the
// columns the select list names after its markers (Session.ExecutePrepared).
func TestExecuteGivesThePreparedText(t *testing.T) {
	ts := startServer(t, Config{})
	conn, err := client.Connect(ts.addr(), testUser, testPassword, "")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stmt, err := conn.Prepare("SELECT 1 + ?")
	if err != nil {
		t.Fatal(err)
	}
	r, err := stmt.Execute(5)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	s := ts.engine.session(t, 0)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Equal(s.prepared, []string{"SELECT 1 + ?"}) || s.queries[len(s.queries)-1] != "SELECT 1 + 5" {
		t.Errorf("the session executed %q for the prepared %q, want SELECT 1 + 5 for SELECT 1 + ?", s.queries, s.prepared)
	}
}
