package sqlrewrite_test

import (
	"errors"
	"testing"

	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestParserErrorCodes: an error the TiDB parser raises with a MySQL code
// reaches the client under that code, with its SQLSTATE and the parser's
// message without the parser's "[class:code]" tag, as MariaDB 10.11
// answers the same text (1367 22007, 1210 HY000, 1115 42000, 1273 HY000,
// 1221 HY000); one whose code MariaDB does not give is 1064 with the
// clean message. Before, all were 1064 with the tag in the message
// ("... syntax: [types:1367]Illegal double ...").
func TestParserErrorCodes(t *testing.T) {
	p := sqlrewrite.NewParser(testCatalog())
	for _, c := range []struct {
		sql   string
		code  uint16
		state string
		msg   string
	}{
		{"SELECT COUNT(*) FROM pums WHERE income > 1e400", 1367, "22007", "Illegal double '1e400' value found during parsing"},
		{"SELECT COUNT(*) FROM pums WHERE income > -1e400", 1367, "22007", "Illegal double '1e400' value found during parsing"},
		{"SELECT AVG(income) FROM pums WHERE state LIKE 'a' ESCAPE 'ab'", 1210, "HY000", "Incorrect arguments to ESCAPE"},
		{"SELECT CONVERT('a' USING nosuch)", 1115, "42000", "Unknown character set: 'nosuch'"},
		{"SELECT 'a' COLLATE nosuch", 1273, "HY000", "Unknown collation: 'nosuch'"},
		{"SELECT ALL DISTINCT age FROM pums", 1221, "HY000", "Incorrect usage of ALL and DISTINCT"},
		{"SELECT CAST(1 AS FLOAT(60))", 1064, "42000", "You have an error in your SQL syntax: Too-big precision 60 specified for 'CAST'. Maximum is 53."},
		{"SELEC 1", 1064, "42000", `You have an error in your SQL syntax: line 1 column 5 near "SELEC 1"`},
	} {
		_, err := p.Parse(c.sql)
		var e *dperr.Error
		if !errors.As(err, &e) {
			t.Errorf("%s: got %v, want a dperr error", c.sql, err)
			continue
		}
		if code, state := e.SQLCode(); code != c.code || state != c.state || e.Msg != c.msg {
			t.Errorf("%s:\n got %d (%s) %q\nwant %d (%s) %q", c.sql, code, state, e.Msg, c.code, c.state, c.msg)
		}
		if e.Unwrap() == nil {
			t.Errorf("%s: the parser's error is not kept as the cause", c.sql)
		}
	}
}
