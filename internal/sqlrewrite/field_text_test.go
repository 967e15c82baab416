package sqlrewrite

import "testing"

// TestWrittenText checks the column names of unaliased expressions against
// MariaDB 10.11's for the same text (the parser's span of the field, which
// may carry the comments after it and the end of an executable comment).
func TestWrittenText(t *testing.T) {
	for _, c := range []struct{ span, want string }{
		{"COUNT(*) /* c */", "COUNT(*)"},
		{"COUNT(*) */", "COUNT(*)"}, // SELECT /*!50000 COUNT(*) */
		{"COUNT(*) -- x\n", "COUNT(*)"},
		{"COUNT(*) # x", "COUNT(*)"},
		{"COUNT(*)/*x*/+1", "COUNT(*)/*x*/+1"},
		{"COUNT(*) /* c */ + 1", "COUNT(*) /* c */ + 1"},
		{"COUNT(*) -- x\n + 1", "COUNT(*) -- x\n + 1"},
		{"COUNT(*) + /*!50000 1 */", "COUNT(*) +  1"},
		{"COUNT(*) */ + 1", "COUNT(*)  + 1"},
		{"COUNT(*/* c */)", "COUNT(*/* c */)"},
		{"'/* s */' /* t */", "'/* s */'"},
		{"`a -- b` -- c", "`a -- b`"},
		{"'it''s */' */", "'it''s */'"},
		{"COUNT(*) /* unterminated", "COUNT(*)"},
	} {
		if got := writtenText(c.span); got != c.want {
			t.Errorf("writtenText(%q) = %q, want %q", c.span, got, c.want)
		}
	}
}
