package wire

import (
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
)

// TestWarningsAndConnectionID uses go-mysql's client, which reports the
// warning count of OK and EOF packets and the handshake's connection id
// (go-sql-driver shows neither).
func TestWarningsAndConnectionID(t *testing.T) {
	ts := startServer(t, Config{})
	conn, err := client.Connect(ts.addr(), testUser, testPassword, "")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	if got, want := ts.engine.session(t, 0).connID, conn.GetConnectionID(); got != want {
		t.Errorf("got session connection id %d, want the handshake's %d", got, want)
	}

	for _, tc := range []struct {
		query string
		want  uint16
	}{
		{qWarn, 2},   // resultset: the count is in the EOF packet
		{qWarnOK, 1}, // OK packet
		{qRows, 0},   // the count does not carry over to the next statement
	} {
		r, err := conn.Execute(tc.query)
		if err != nil {
			t.Fatalf("%s: %v", tc.query, err)
		}
		if r.Warnings != tc.want {
			t.Errorf("%s: got %d warnings, want %d", tc.query, r.Warnings, tc.want)
		}
		r.Close()
	}

	// A prepared statement's resultset carries the count too.
	stmt, err := conn.Prepare(qWarn)
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	r, err := stmt.Execute()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Warnings != 2 {
		t.Errorf("prepared %s: got %d warnings, want 2", qWarn, r.Warnings)
	}
}
