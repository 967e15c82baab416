package catalogdb

import (
	"fmt"
	"testing"
)

// TestSessionFunctions: SESSION_USER() and SYSTEM_USER() are USER(), and
// CURRENT_ROLE() is NULL, as MariaDB answers them; go-mysql-server knew
// none of them (1235 "function: 'session_user' not found").
func TestSessionFunctions(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	r := query(t, s, "SELECT SESSION_USER(), SYSTEM_USER(), USER(), CURRENT_ROLE(), session_user() = user()")
	if got := fmt.Sprint(r.Rows); got != "[[a@% a@% a@% <nil> 1]]" {
		t.Errorf("rows %s", got)
	}
	user := r.Columns[2]
	for i, want := range []string{"SESSION_USER()", "SYSTEM_USER()", "CURRENT_ROLE()"} {
		c := r.Columns[[]int{0, 1, 3}[i]]
		if c.Name != want || c.Type != user.Type || c.Charset != user.Charset || c.Flags&binaryFlag != 0 {
			t.Errorf("%s: %+v, want text as USER() is, %+v", want, c, user)
		}
	}
	if r.Columns[3].Flags&notNullFlag != 0 {
		t.Errorf("CURRENT_ROLE() is NOT NULL: %+v", r.Columns[3])
	}
}
