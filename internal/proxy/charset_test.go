package proxy

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/dpproxy/dpproxy/internal/dperr"
)

// TestClientCharsetRefused: dpproxy reads statements and sends text as
// utf8mb4, so SET NAMES, SET CHARACTER SET and SET character_set_client,
// _connection or _results naming another character set, and SET
// collation_connection or collation_server naming a collation of another
// (latin1_swedish_ci, which was taken), are refused
// (1235), directly, in a list with other assignments (none of which takes
// effect) and through an SQL-level prepared statement, and the session
// still says utf8mb4; utf8mb4, its subsets utf8mb3 and ascii, DEFAULT, and
// binary or NULL for results, are taken, as real clients send them
// (go-sql-driver's SET NAMES utf8mb4 COLLATE …, Connector/J's
// character_set_results = NULL).
func TestClientCharsetRefused(t *testing.T) {
	s := newTestSession(t)
	const read = "SELECT @@character_set_client, @@character_set_connection, @@character_set_results, @@collation_connection, @@collation_server, @dp_epsilon"
	want := fmt.Sprint(run(t, s, read).Rows)
	for _, q := range []string{
		"SET NAMES latin1",
		"SET NAMES latin1 COLLATE latin1_swedish_ci",
		"SET CHARACTER SET latin1",
		"SET character_set_client = latin1",
		"SET @@session.character_set_connection = 'latin1'",
		"SET character_set_results = latin1",
		"SET @dp_epsilon = 0.5, character_set_results = 'koi8r', autocommit = 0",
		"SET @dp_epsilon = 0.5, NAMES latin1",
		"SET character_set_client = @@character_set_results",
		"SET collation_connection = 'latin1_swedish_ci'",
		"SET @dp_epsilon = 0.5, collation_server = latin1_bin",
	} {
		wantKind(t, s, q, dperr.Unsupported)
		if got := fmt.Sprint(run(t, s, read).Rows); got != want {
			t.Errorf("after %s: %s, want %s", q, got, want)
		}
	}
	// A collation of another character set than SET NAMES gives is
	// MariaDB's 1253, in its words; utf8 is utf8mb3 there.
	for q, msg := range map[string]string{
		"SET NAMES utf8mb4 COLLATE latin1_bin":                           "COLLATION 'latin1_bin' is not valid for CHARACTER SET 'utf8mb4'",
		"SET NAMES utf8mb4 COLLATE 'utf8_bin'":                           "COLLATION 'utf8mb3_bin' is not valid for CHARACTER SET 'utf8mb4'",
		"SET NAMES utf8 COLLATE utf8mb4_bin":                             "COLLATION 'utf8mb4_bin' is not valid for CHARACTER SET 'utf8mb3'",
		"SET NAMES utf8mb4 COLLATE 'binary'":                             "COLLATION 'binary' is not valid for CHARACTER SET 'utf8mb4'",
		"SET @dp_epsilon = 0.5, NAMES utf8mb4 COLLATE latin1_swedish_ci": "COLLATION 'latin1_swedish_ci' is not valid for CHARACTER SET 'utf8mb4'",
	} {
		_, err := s.Execute(context.Background(), q)
		var e *dperr.Error
		if !errors.As(err, &e) || e.Kind != dperr.CollationCharset || e.Msg != msg {
			t.Errorf("%s: %v, want 1253 %q", q, err, msg)
		}
		if got := fmt.Sprint(run(t, s, read).Rows); got != want {
			t.Errorf("after %s: %s, want %s", q, got, want)
		}
	}
	run(t, s, "SET @q = 'SET NAMES latin1'")
	run(t, s, "PREPARE p FROM @q")
	wantKind(t, s, "EXECUTE p", dperr.Unsupported)
	if got := fmt.Sprint(run(t, s, read).Rows); got != want {
		t.Errorf("after EXECUTE of SET NAMES latin1: %s, want %s", got, want)
	}
	for _, q := range []string{
		"SET NAMES utf8mb4",
		"SET NAMES utf8mb4 COLLATE utf8mb4_general_ci",
		"SET NAMES utf8 COLLATE utf8_general_ci",
		"SET NAMES 'UTF8MB4' COLLATE 'UTF8MB4_BIN'",
		"SET NAMES utf8mb3",
		"SET NAMES ascii",
		"SET NAMES DEFAULT",
		"SET CHARACTER SET utf8",
		"SET autocommit = 1, character_set_results = NULL",
		"SET character_set_results = 'binary'",
		"SET character_set_client = utf8mb4, character_set_connection = 'utf8mb4', character_set_results = DEFAULT",
		"SET collation_connection = 'utf8mb4_unicode_ci', collation_server = utf8mb3_general_ci",
	} {
		run(t, s, q)
	}
}
