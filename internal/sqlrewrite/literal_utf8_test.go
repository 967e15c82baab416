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

// TestNULAndInvalidUTF8AreRefusedEverywhere: a text constant with a NUL
// byte (PostgreSQL: invalid byte sequence for encoding "UTF8": 0x00) or
// bytes that are not UTF-8 is refused (Unsupported, 1235) at parse, before
// any reservation, wherever it stands: a comparison, LIKE, IN, a range
// count's CASE, IF, HAVING on a key, a derived table, EXPLAIN.
func TestNULAndInvalidUTF8AreRefusedEverywhere(t *testing.T) {
	p := sqlrewrite.NewParser(testCatalog())
	for _, bad := range []string{`'a\0b'`, "'a\x00b'", "'\x00'", "'C\xffA'", "'\xc3'", `_binary 'a\0b'`} {
		for _, sql := range []string{
			"SELECT COUNT(*) FROM pums WHERE name = " + bad,
			"SELECT COUNT(*) FROM pums WHERE name LIKE " + bad,
			"SELECT COUNT(*) FROM pums WHERE name IN ('x', " + bad + ")",
			"SELECT COUNT(*) FROM pums WHERE state NOT IN ('CA', " + bad + ")",
			"SELECT SUM(CASE WHEN name = " + bad + " THEN 1 ELSE 0 END) FROM pums",
			"SELECT SUM(IF(state = " + bad + ", age, 0)) FROM pums",
			"SELECT state, COUNT(*) FROM pums GROUP BY state HAVING state <> " + bad,
			"SELECT c FROM (SELECT COUNT(*) AS c FROM pums WHERE name = " + bad + ") t",
			"EXPLAIN SELECT COUNT(*) FROM pums WHERE name = " + bad,
		} {
			_, err := p.Parse(sql)
			var e *dperr.Error
			if !errors.As(err, &e) || e.Kind != dperr.Unsupported {
				t.Errorf("%q: got %v, want an Unsupported refusal", sql, err)
			}
		}
	}
}

// TestBoundParameterWithNULIsRefused: the parameters of a prepared
// statement (COM_STMT_EXECUTE, or EXECUTE ... USING @var) are bound into
// the text as quoted literals, the bytes of a string as they are, and the
// bound text is parsed as any statement: a parameter "a\x00b" or one that
// is not UTF-8 is refused there, before anything is reserved. A parameter
// with a backslash and a 0 (two characters, quoted as the binders quote
// them) is not a NUL and is answered.
func TestBoundParameterWithNULIsRefused(t *testing.T) {
	p := sqlrewrite.NewParser(testCatalog())
	for _, sql := range []string{
		"SELECT COUNT(*) FROM pums WHERE name = ?",
		"SELECT COUNT(*) FROM pums WHERE name LIKE ?",
		"SELECT COUNT(*) FROM pums WHERE name IN ('x', ?)",
	} {
		for _, param := range []string{"'a\x00b'", "'\x00'", "'C\xffA'"} {
			bound, err := sqlrewrite.BindParameters(sql, []sqlrewrite.Argument{{Literal: param}})
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Parse(bound)
			var e *dperr.Error
			if !errors.As(err, &e) || e.Kind != dperr.Unsupported {
				t.Errorf("%s with %q: got %v, want an Unsupported refusal", sql, param, err)
			}
		}
		bound, err := sqlrewrite.BindParameters(sql, []sqlrewrite.Argument{{Literal: `'a\\0b'`}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Parse(bound); err != nil {
			t.Errorf("%s with a backslash and a 0: %v", sql, err)
		}
	}
}
