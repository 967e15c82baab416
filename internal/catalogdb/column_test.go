package catalogdb

import (
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
)

// TestStringVariablesAreText: a string system variable is text in
// utf8mb3_general_ci without the BINARY flag, as MariaDB sends it (mariadb
// --column-type-info: VAR_STRING, collation 33, no flags), so that JDBC's
// getObject returns a String and PyMySQL a str. go-mysql-server's system
// string, enum and set types have no collation of their own, and
// column() sent them as binary (63) with the BINARY flag.
func TestStringVariablesAreText(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	r := query(t, s, "SELECT @@version, @@sql_mode, @@time_zone, @@character_set_client, @@transaction_isolation, @@version_comment, @@max_allowed_packet")
	for _, c := range r.Columns[:6] {
		if c.Type != 253 || c.Charset != utf8mb3GeneralCI || c.Flags&binaryFlag != 0 {
			t.Errorf("%s: type %d, collation %d, flags %#x; want VAR_STRING (253), utf8mb3_general_ci (33), not BINARY", c.Name, c.Type, c.Charset, c.Flags)
		}
	}
	if c := r.Columns[6]; c.Charset != binaryCharset || c.Flags&unsignedFlag == 0 {
		t.Errorf("%s: collation %d, flags %#x; want a binary unsigned number", c.Name, c.Charset, c.Flags)
	}
}

// The proxy sends all text as UTF-8, so a text column of a character set
// other than utf8mb3 and utf8mb4 is announced as utf8mb4_general_ci (45),
// as MariaDB announces text it converts for a utf8mb4 session (mariadb
// --default-character-set=utf8mb4 --column-type-info: 45 for
// CONVERT('é' USING latin1), CONVERT('a' USING ascii), _latin1'x' COLLATE
// latin1_bin); CONVERT('é' USING latin1) sent the bytes c3 a9 announced as
// latin1 (8), which a client decodes as 'Ã©'. utf8mb4 and utf8mb3
// collations are announced as they are, binary strings as binary (63).
func TestForeignCharsetTextAnnouncedAsUTF8(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	r := query(t, s, "SELECT CONVERT('é' USING latin1), CONVERT('a' USING ascii), _latin1'x' COLLATE latin1_bin, CONVERT('a' USING utf8mb4) COLLATE utf8mb4_bin, CONVERT('a' USING utf8mb3), CONVERT('a' USING binary), 'a'")
	for i, want := range []uint16{45, 45, 45, 46, 33, 63, 46} {
		if got := r.Columns[i].Charset; got != want {
			t.Errorf("%s: collation %d, want %d", r.Columns[i].Name, got, want)
		}
	}
	if got := r.Rows[0][0]; got != "é" {
		t.Errorf("CONVERT('é' USING latin1) = %q, want é", got)
	}
	for id, want := range map[uint16]uint16{8: 45, 47: 45, 11: 45, 45: 45, 46: 46, 33: 33, 83: 83, 63: 63, 309: 46, 255: 45} {
		if got := ClientCollation(sql.CollationID(id)); got != want {
			t.Errorf("ClientCollation(%d) = %d, want %d", id, got, want)
		}
	}
}
