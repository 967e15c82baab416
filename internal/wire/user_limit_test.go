package wire

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// TestMaxUserConnections: a user past MaxUserConnections (or the account's
// own MaxConnections) gets 1203 after logging in, while other users still
// log in, and a connection that ends gives its slot back. Before the fix
// one user could take every slot of max_connections.
func TestMaxUserConnections(t *testing.T) {
	ts := startServer(t, Config{MaxConnections: 20, MaxUserConnections: 2})
	want1203 := func(err error, user string) {
		t.Helper()
		me, ok := errors.AsType[*gomysql.MyError](err)
		if !ok || me.Code != gomysql.ER_TOO_MANY_USER_CONNECTIONS || me.State != "42000" ||
			me.Message != "User "+user+" already has more than 'max_user_connections' active connections" {
			t.Fatalf("login as %s: got %v, want 1203 (42000)", user, err)
		}
	}
	var held []*client.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range 2 {
		c, err := client.Connect(ts.addr(), testUser, testPassword, "")
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	_, err := client.Connect(ts.addr(), testUser, testPassword, "")
	want1203(err, testUser)

	// The per-account limit: one connection.
	c, err := client.Connect(ts.addr(), testLimitedUser, testPassword, "")
	if err != nil {
		t.Fatalf("first login of %s: %v", testLimitedUser, err)
	}
	held = append(held, c)
	_, err = client.Connect(ts.addr(), testLimitedUser, testPassword, "")
	want1203(err, testLimitedUser)

	// Refused logins hold nothing; closing a connection frees its slot.
	held[0].Close()
	held = held[1:]
	waitFor(t, "the closed connection's slot freed", 2*time.Second, func() bool {
		c, err := client.Connect(ts.addr(), testUser, testPassword, "")
		if err != nil {
			return false
		}
		held = append(held, c)
		return true
	})
	waitFor(t, "the refused connections closed", 2*time.Second, func() bool { return ts.Stats().Open == 3 })
	if !strings.Contains(ts.logs.String(), "too many connections for the user") {
		t.Error("the refusal was not logged")
	}
}
