package wire

import (
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
)

// TestAnsweredAfterEachCommand: the session hears that each command's
// answer was written (Session.Answered) before the next command runs,
// so the memory it reserved for an answer (the proxy's answer gate) is
// released once the answer is sent, not at the next statement or at
// the idle timeout.
func TestAnsweredAfterEachCommand(t *testing.T) {
	ts := startServer(t, Config{})
	conn, err := client.Connect(ts.addr(), testUser, testPassword, "")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Execute(qRows); err != nil {
		t.Fatal(err)
	}
	if err := conn.Ping(); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Execute(qCoded); err == nil {
		t.Fatal("qCoded answered")
	}
	if _, err := conn.Execute(qRows); err != nil {
		t.Fatal(err)
	}
	s := ts.engine.session(t, 0)
	s.mu.Lock()
	at := s.answeredAt
	s.mu.Unlock()
	n := len(at)
	if n < 3 || at[n-2]-at[n-3] != 2 || at[n-1]-at[n-2] != 1 {
		t.Errorf("Answered counted %v as each Execute began, want 2 more after a result set and a ping, 1 more after an error", at)
	}
}
