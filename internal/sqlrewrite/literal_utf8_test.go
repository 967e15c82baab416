package sqlrewrite_test

import (
	"errors"
	"testing"

	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestInvalidUTF8LiteralIsRefusedAtParse: a string constant that is not
// valid UTF-8 would be sent to the backend as a bind argument, which
// PostgreSQL rejects only after the statement was planned and charged
// (issue 10 #6); the parser refuses it instead, before anything is
// reserved. The same statement with valid UTF-8 parses.
func TestInvalidUTF8LiteralIsRefusedAtParse(t *testing.T) {
	p := sqlrewrite.NewParser(testCatalog())
	for _, sql := range []string{
		"SELECT COUNT(*) FROM pums WHERE state = 'C\xffA'",
		"SELECT COUNT(*) FROM pums WHERE state IN ('CA', '\xc3')",
	} {
		_, err := p.Parse(sql)
		var e *dperr.Error
		if !errors.As(err, &e) || e.Kind != dperr.Unsupported {
			t.Errorf("%q: got %v, want an Unsupported refusal", sql, err)
		}
	}
	if _, err := p.Parse("SELECT COUNT(*) FROM pums WHERE state = 'Zürich'"); err != nil {
		t.Errorf("valid UTF-8: %v", err)
	}
}
