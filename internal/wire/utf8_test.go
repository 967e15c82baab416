package wire

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"
)

// TestInvalidUTF8Refused: statement text, prepared text, text arguments
// and database names that are not UTF-8 (latin1's é, 0xE9, from a client
// that believes the connection is latin1) are refused with MariaDB's 1300
// (HY000) before the session sees them, which records each (Refused, for
// SHOW WARNINGS); UTF-8 text, and bytes in a BLOB argument, pass.
func TestInvalidUTF8Refused(t *testing.T) {
	ts := startServer(t, Config{})
	db := ts.open(t)
	db.SetMaxOpenConns(1)
	var sent []string // the refusals' "code message"
	refused := func(what string, err error, excerpt string) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error, want 1300", what)
			return
		}
		me := mysqlError(t, err)
		sent = append(sent, fmt.Sprintf("%d %s", me.Number, me.Message))
		if me.Number != 1300 || string(me.SQLState[:]) != "HY000" || !strings.HasPrefix(me.Message, "Invalid utf8mb4 character string: '"+excerpt+"'") || !strings.Contains(me.Message, "SET NAMES utf8mb4") {
			t.Errorf("%s: got %d %s %q, want 1300 HY000 quoting '%s'", what, me.Number, me.SQLState, me.Message, excerpt)
		}
	}
	_, _, err := scanAll(db.Query("SELECT 'caf\xe9' AS x"))
	refused("COM_QUERY", err, `caf\xE9`)
	_, _, err = scanAll(db.Query("SELECT COUNT(*) AS `\xf1` FROM pums"))
	refused("COM_QUERY, identifier", err, `\xF1`)
	_, err = db.Prepare("SELECT ? AS `a\xe9b`")
	refused("COM_STMT_PREPARE", err, `a\xE9b`)
	_, _, err = queryPrepared(db, "SELECT ?", "caf\xe9")
	refused("string argument", err, `caf\xE9`)
	_, _, err = queryPrepared(db, "SELECT ?", []byte("x\xe9"))
	refused("[]byte argument (go-sql-driver sends MYSQL_TYPE_STRING)", err, `x\xE9`)
	// The database named at login (the fake session takes any name).
	login, err := sql.Open("mysql", ts.dsn(testUser, testPassword, "d\xe9"))
	if err != nil {
		t.Fatal(err)
	}
	defer login.Close()
	refused("database at login", login.Ping(), `d\xE9`)

	s := ts.engine.session(t, 0)
	s.mu.Lock()
	queries, described := strings.Join(s.queries, "\n"), strings.Join(s.described, "\n")
	recorded := strings.Join(s.refused, "\n")
	s.mu.Unlock()
	if want := strings.Join(sent[:5], "\n"); recorded != want {
		t.Errorf("the session recorded the refusals\n%s\nwant\n%s", recorded, want)
	}
	login1 := ts.engine.session(t, 1)
	login1.mu.Lock()
	if got := strings.Join(login1.refused, "\n"); got != sent[5] {
		t.Errorf("the login's session recorded %q, want %q", got, sent[5])
	}
	login1.mu.Unlock()
	if strings.ContainsRune(queries, 0xFFFD) || strings.Contains(queries, "\xe9") || strings.Contains(queries, "\xf1") || strings.Contains(described, "\xe9") {
		t.Errorf("the session saw invalid text:\n%s\n%s", queries, described)
	}

	// UTF-8 text passes, and a BLOB argument may hold any bytes.
	_, rows, err := scanAll(db.Query("SELECT 'café' AS `ñ`"))
	if err != nil || len(rows) != 1 || string(rows[0][0].([]byte)) != "SELECT 'café' AS `ñ`" {
		t.Errorf("UTF-8 text: %v %v", rows, err)
	}
}

// TestInvalidExcerpt: the error quotes the word around the first invalid
// byte, as MariaDB quotes the identifier, at most 64 characters.
func TestInvalidExcerpt(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"SELECT 1 AS `ab\xe9cd`", `ab\xE9cd`},
		{"SELECT 1 AS `\xc3`", `\xC3`},
		{"SELECT 'é', 'caf\xe9 au lait'", `caf\xE9`},
		{"\xe9", `\xE9`},
		{"SELECT x\n\x01\xe9", `\x01\xE9`},
		{"SELECT " + strings.Repeat("é", 40) + "\xff" + strings.Repeat("b", 80), strings.Repeat("é", 16) + `\xFF` + strings.Repeat("b", 47) + "..."},
		{"SELECT \xed\xa0\x80", `\xED\xA0\x80`}, // a surrogate is not utf8mb4
	} {
		if got := invalidExcerpt(c.text); got != c.want {
			t.Errorf("%q: got %q, want %q", c.text, got, c.want)
		}
	}
}
