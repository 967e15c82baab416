package wire

import (
	"database/sql"
	"testing"
)

func TestAuth(t *testing.T) {
	ts := startServer(t, Config{})
	mallory := unknownUser(ts, PluginNativePassword) // a name asked for the native plugin, as testUser is
	for _, tc := range []struct {
		name, user, password, db string
		wantCode                 uint16 // 0: login succeeds
		wantState                string
		wantMessage              string // if set
	}{
		{name: "right password", user: testUser, password: testPassword},
		{name: "right password and database", user: testUser, password: testPassword, db: "pums"},
		{name: "wrong password", user: testUser, password: "nope", wantCode: 1045, wantState: "28000",
			wantMessage: "Access denied for user 'analyst'@'127.0.0.1' (using password: YES)"},
		{name: "no password", user: testUser, password: "", wantCode: 1045, wantState: "28000",
			wantMessage: "Access denied for user 'analyst'@'127.0.0.1' (using password: NO)"},
		{name: "unknown user", user: mallory, password: testPassword, wantCode: 1045, wantState: "28000",
			wantMessage: "Access denied for user '" + mallory + "'@'127.0.0.1' (using password: YES)"},
		{name: "unknown database", user: testUser, password: testPassword, db: "nosuchdb", wantCode: 1049, wantState: "42000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := sql.Open("mysql", ts.dsn(tc.user, tc.password, tc.db))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			err = db.Ping()
			if tc.wantCode == 0 {
				if err != nil {
					t.Fatalf("got %v, want a successful login", err)
				}
				return
			}
			me := mysqlError(t, err)
			if me.Number != tc.wantCode || string(me.SQLState[:]) != tc.wantState {
				t.Errorf("got %d (%s) %q, want %d (%s)", me.Number, me.SQLState[:], me.Message, tc.wantCode, tc.wantState)
			}
			if tc.wantMessage != "" && me.Message != tc.wantMessage {
				t.Errorf("got message %q, want %q (MySQL names the host, not the port)", me.Message, tc.wantMessage)
			}
		})
	}

	// The session of a login carries the user, the handshake's connection id
	// and the database named in the DSN.
	var got *fakeSession
	for i := range ts.engine.sessionCount() {
		if s := ts.engine.session(t, i); len(s.dbs) > 0 && s.dbs[0] == "pums" {
			got = s
		}
	}
	if got == nil {
		t.Fatalf("no session received UseDatabase(pums)")
	}
	if got.user != testUser || got.connID == 0 {
		t.Errorf("got session user %q id %d, want %q and a nonzero id", got.user, got.connID, testUser)
	}
}
