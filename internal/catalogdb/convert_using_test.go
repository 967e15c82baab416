package catalogdb

import (
	"context"
	"errors"
	"testing"
)

// CONVERT(x USING cs) is text the engine's functions read as text of cs,
// as MariaDB does: HEX and LENGTH give cs's bytes, UPPER works,
// characters cs lacks are '?', bytes are read as cs's text (go-mysql-server
// held cs's bytes, which HEX, LENGTH and CONCAT read as UTF-8: a panic, a
// generic 1105, or 1105 with the engine's text); functions that would
// compute text of cs in utf8mb4 (CONCAT) are refused (1235).
func TestConvertUsingAsMariaDB(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	s.SetDatabase("dpproxy")
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"SELECT HEX(CONVERT('é' USING latin1)), LENGTH(CONVERT('é' USING latin1)), CHAR_LENGTH(CONVERT('é' USING latin1)), CONVERT('é' USING latin1)",
			[]string{"E9", "1", "1", "é"}},
		{"SELECT CONVERT('€' USING latin1), HEX(CONVERT('€' USING latin1)), CONVERT('é' USING ascii), HEX(CONVERT('é' USING ascii))",
			[]string{"€", "80", "?", "3F"}},
		{"SELECT HEX(CONVERT('é' USING utf8mb4)), HEX(CONVERT('é' USING binary)), UPPER(CONVERT('é' USING latin1)), HEX(LOWER(CONVERT('É' USING latin1)))",
			[]string{"C3A9", "C3A9", "É", "E9"}},
		// Bytes are text of cs, typed in cs (they kept their binary type:
		// HEX wrote the UTF-8 of the text, C3A9 and C383C2A9, and 'A' was
		// sent as bytes).
		{"SELECT HEX(CONVERT(X'E9' USING latin1)), LENGTH(CONVERT(0xE9 USING latin1)), HEX(CONVERT(X'C3A9' USING latin1)), CONVERT(X'41' USING latin1)",
			[]string{"E9", "1", "C3A9", "A"}},
		{"SELECT HEX(CONVERT(CONCAT('é', 'é') USING latin1)), HEX(SUBSTRING(CONVERT('é' USING latin1), 1)), HEX(CASE WHEN 1 THEN CONVERT('é' USING latin1) END), TO_BASE64(CONVERT('é' USING latin1)), HEX(CAST(CONVERT('é' USING latin1) AS CHAR))",
			[]string{"E9E9", "E9", "E9", "6Q==", "C3A9"}},
		{"SELECT CONVERT(UNHEX('E9') USING latin1), CONVERT(UNHEX('FF') USING utf8mb4), (SELECT HEX(CONVERT('é' USING latin1))), HEX(CONVERT(CONVERT('é' USING latin1) USING utf8mb4))",
			[]string{"é", "?", "E9", "C3A9"}},
		{"SELECT HEX(CONVERT(table_name USING latin1)) FROM information_schema.tables WHERE table_name = 'visits'",
			[]string{"766973697473"}},
	} {
		r := query(t, s, c.query)
		if len(r.Rows) != 1 || len(r.Rows[0]) != len(c.want) {
			t.Errorf("%s: %q", c.query, r.Rows)
			continue
		}
		for i, w := range c.want {
			if r.Rows[0][i] != w {
				t.Errorf("%s: column %d is %q, want %q", c.query, i+1, r.Rows[0][i], w)
			}
		}
	}
	// A function computing text from text of another character set,
	// which the engine computes in utf8mb4 (HEX of CONCAT(CONVERT('é'
	// USING latin1), 'é') was C3A9C3A9, MariaDB's E9E9; with '日' MariaDB
	// refuses the mix, 1267), is refused, as a statement and prepared.
	for _, q := range []string{
		"SELECT HEX(CONCAT(CONVERT('é' USING latin1), 'é'))",
		"SELECT CONCAT(CONVERT('é' USING latin1), _utf8mb4'日')",
		"SELECT HEX(REPLACE(CONVERT('é' USING latin1), 'x', 'é'))",
		"SELECT HEX(LPAD(CONVERT('é' USING latin1), 3, 'é'))",
		"SELECT HEX(LEFT(CONVERT('é' USING latin1), 1))",
		"SELECT MD5(CONVERT('é' USING latin1))",
		"SELECT HEX(CONCAT(x, 'a')) FROM (SELECT CONVERT('é' USING latin1) AS x) d",
	} {
		var e *Error
		if _, err := s.Query(context.Background(), q); !errors.As(err, &e) || e.Code != 1235 || e.State != "42000" {
			t.Errorf("%s: %v, want 1235", q, err)
		}
		if _, err := s.Describe(context.Background(), q); !errors.As(err, &e) || e.Code != 1235 {
			t.Errorf("%s described: %v, want 1235", q, err)
		}
	}
	// CAST to CHAR of another character set, which the engine ignores,
	// is refused naming CONVERT ... USING.
	for _, q := range []string{"SELECT HEX(CAST('é' AS CHAR CHARACTER SET latin1))", "SELECT CONVERT('é', CHAR(3) CHARSET latin1)", "SELECT CAST('é' AS CHAR ASCII)"} {
		var e *Error
		if _, err := s.Query(context.Background(), q); !errors.As(err, &e) || e.Code != 1235 {
			t.Errorf("%s: %v, want 1235", q, err)
		}
	}
	query(t, s, "SELECT CAST('é' AS CHAR CHARACTER SET utf8mb4), CONVERT('é', CHAR CHARSET utf8)")
}
