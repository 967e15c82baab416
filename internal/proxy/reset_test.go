package proxy

import (
	"fmt"
	"testing"

	"github.com/dpproxy/dpproxy/internal/dperr"
)

// Queries that read the state a session keeps in the catalog engine or
// answers itself; resetKeeps are those whose answer belongs to the
// connection, which a reset keeps.
const (
	readPrivacySettings = "SELECT @dp_epsilon, @dp_delta, @dp_mechanism, @dp_trim"
	readVariables       = "SELECT @u, LAST_INSERT_ID(), DATABASE()"
	readSystemVariables = "SELECT @@sql_mode, @@sql_select_limit, @@time_zone, @@autocommit, @@max_execution_time"
	readCharset         = "SELECT @@character_set_client, @@character_set_results, @@collation_connection"
	readLogin           = "SELECT CONNECTION_ID(), USER()"
	readTLS             = "SHOW SESSION STATUS WHERE Variable_name IN ('Ssl_version', 'Ssl_cipher')"
)

var resetKeeps = map[string]bool{readLogin: true, readTLS: true}

// sessionState describes every kind of state a statement can leave in a
// session, and what a reset must keep, by name.
func sessionState(t *testing.T, s *Session) (names []string, state map[string]string) {
	t.Helper()
	// What the next statement would overwrite, read first and directly.
	state = map[string]string{
		"warnings":   fmt.Sprint(s.notes.kept, s.notes.count),
		"found_rows": fmt.Sprint(s.foundRows),
		"prepared":   fmt.Sprintf("%d statements, %d bytes", len(s.prepared), s.preparedBytes),
		"settings":   fmt.Sprintf("%+v", s.settings()),
	}
	names = []string{"warnings", "found_rows", "prepared", "settings"}
	for _, q := range []string{readPrivacySettings, readVariables, readSystemVariables, readCharset, readLogin, readTLS} {
		state[q] = fmt.Sprint(run(t, s, q).Rows)
		names = append(names, q)
	}
	return names, state
}

// TestResetForgetsTheSession: Session.Reset (COM_RESET_CONNECTION) leaves
// a session that statements of every kind changed as a fresh session of
// the same connection: user, connection id, TLS state and current
// database kept, everything else back to its default.
func TestResetForgetsTheSession(t *testing.T) {
	s := newTestSession(t)
	s.SetTLS("TLSv1.3", "TLS_AES_128_GCM_SHA256")
	fresh := s.engine.Open(s.user, s.connID)
	fresh.SetTLS("TLSv1.3", "TLS_AES_128_GCM_SHA256")
	run(t, fresh, "USE information_schema") // a reset keeps the database
	names, want := sessionState(t, fresh)

	for _, q := range []string{
		"SET @dp_epsilon = 0.5, @dp_delta = 1e-6, @dp_mechanism = 'laplace', @dp_trim = 0.2",
		"SET @u = 'x', sql_mode = 'STRICT_ALL_TABLES', sql_select_limit = 3, time_zone = '+01:00', autocommit = 0, max_execution_time = 5",
		"SET NAMES utf8mb3",
		"PREPARE p FROM 'SELECT 1'",
		"SELECT LAST_INSERT_ID(5)",
		"USE information_schema",
		"SELECT 1/0", // a warning, and FOUND_ROWS() 1
	} {
		run(t, s, q)
	}
	// Every item the statements above should have changed did change,
	// so that the comparison after the reset tests something.
	_, dirty := sessionState(t, s)
	for _, name := range names {
		if same := dirty[name] == want[name]; same != resetKeeps[name] {
			t.Errorf("before the reset, %s: %s (fresh session: %s)", name, dirty[name], want[name])
		}
	}

	run(t, s, "SELECT 1/0") // the warning again: reading the state cleared it
	source := s.source
	s.Reset()
	if s.source != source {
		t.Errorf("the reset replaced the noise source")
	}
	_, got := sessionState(t, s)
	for _, name := range names {
		if got[name] != want[name] {
			t.Errorf("after the reset, %s: %s; want %s", name, got[name], want[name])
		}
	}
	wantKind(t, s, "EXECUTE p", dperr.UnknownStatement)
	if want[readVariables] != "[[<nil> 0 information_schema]]" || want[readTLS] != "[[Ssl_cipher TLS_AES_128_GCM_SHA256] [Ssl_version TLSv1.3]]" {
		t.Errorf("the fresh session's state is not the expected one: %v", want)
	}
}
