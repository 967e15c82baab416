package catalogdb

import "testing"

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
