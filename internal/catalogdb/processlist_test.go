package catalogdb

import (
	"fmt"
	"testing"
)

// TestProcessListShowsTheOwnConnection: SHOW PROCESSLIST and
// information_schema.PROCESSLIST list the session's own connection,
// running the statement, and no other session's (another user's or the
// same user's); both were empty.
func TestProcessListShowsTheOwnConnection(t *testing.T) {
	e := testEngine(t)
	s := e.Open("a", 7, nil)
	s.SetClientHost("127.0.0.1:50334")
	s.SetDatabase("dpproxy")
	other := e.Open("b", 8, nil)
	other.SetClientHost("10.0.0.2:4000")
	query(t, other, "SELECT 1")
	for q, want := range map[string]string{
		"SHOW PROCESSLIST":      "[[7 a 127.0.0.1:50334 dpproxy Query 0 running SHOW PROCESSLIST]]",
		"SHOW FULL PROCESSLIST": "[[7 a 127.0.0.1:50334 dpproxy Query 0 running SHOW FULL PROCESSLIST]]",
		"SELECT ID, USER, HOST, DB, COMMAND, INFO FROM information_schema.PROCESSLIST":   "[[7 a 127.0.0.1:50334 dpproxy Query SELECT ID, USER, HOST, DB, COMMAND, INFO FROM information_schema.PROCESSLIST]]",
		"SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()": "[[1]]",
	} {
		if got := fmt.Sprint(query(t, s, q).Rows); got != want {
			t.Errorf("%s: %s, want %s", q, got, want)
		}
	}
	s.SetDatabase("")
	if got := fmt.Sprint(query(t, s, "SELECT DB IS NULL FROM information_schema.PROCESSLIST").Rows); got != "[[1]]" {
		t.Errorf("without a database, DB: %s, want NULL", got)
	}
}
