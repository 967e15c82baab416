package catalogdb

import (
	"context"
	"errors"
	"testing"
)

// CONVERT(x USING cs) is text the engine's functions read as text of cs,
// as MariaDB does: HEX and LENGTH give cs's bytes, CONCAT and UPPER work,
// characters cs lacks are '?', bytes are read as cs's (go-mysql-server
// held cs's bytes, which HEX, LENGTH and CONCAT read as UTF-8: a panic, a
// generic 1105, or 1105 with the engine's text).
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
		{"SELECT HEX(CONVERT('é' USING utf8mb4)), HEX(CONVERT('é' USING binary)), UPPER(CONVERT('é' USING latin1)), CONCAT(CONVERT('é' USING latin1), 'x')",
			[]string{"C3A9", "C3A9", "É", "éx"}},
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
