package sqlrewrite_test

import (
	"errors"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestOutOfCharsetLiteralRefusedAtParse: on a backend that stores the
// text column name in latin1, a constant with a character latin1 lacks,
// wherever it meets the column (comparison, LIKE, IN, a function of the
// column, a conditional aggregate, HAVING), is refused at parse, before
// any reservation, with MySQL's 1267; a constant latin1 has (é, €) and
// one compared with a utf8mb4 column parse.
func TestOutOfCharsetLiteralRefusedAtParse(t *testing.T) {
	cs := &catalog.Charsets{}
	cs.Set("pums", "name", catalog.Charset{Name: "latin1", Collation: "latin1_swedish_ci"})
	cs.Set("pums", "state", catalog.Charset{Name: "utf8mb4", Collation: "utf8mb4_general_ci"})
	p := sqlrewrite.NewParser(testCatalog())
	p.SetCharsets(cs)
	for _, sql := range []string{
		"SELECT COUNT(*) FROM pums WHERE name = 'x😀'",
		"SELECT COUNT(*) FROM pums WHERE name LIKE '%ā%'",
		"SELECT COUNT(*) FROM pums WHERE name IN ('a', '中')",
		"SELECT COUNT(*) FROM pums WHERE LEFT(name, 1) = '😀'",
		"SELECT AVG(name LIKE 'x😀') FROM pums",
		"SELECT SUM(CASE WHEN name = '😀' THEN age ELSE 0 END) FROM pums",
		"SELECT COUNT(*) FROM pums WHERE name <> '😀' AND age > 3",
		"SELECT COUNT(*) FROM pums WHERE NOT (name BETWEEN 'a' AND 'ż')",
	} {
		_, err := p.Parse(sql)
		var e *dperr.Error
		if !errors.As(err, &e) || e.Kind != dperr.CollationMix {
			t.Errorf("%q: got %v, want an illegal mix of collations", sql, err)
			continue
		}
		if code, state := e.SQLCode(); code != 1267 || state != "HY000" {
			t.Errorf("%q: code %d %s, want 1267 HY000", sql, code, state)
		}
	}
	for _, sql := range []string{
		"SELECT COUNT(*) FROM pums WHERE name = 'é€'",
		"SELECT COUNT(*) FROM pums WHERE name LIKE 'x%'",
		"SELECT COUNT(*) FROM pums WHERE state = 'x😀'",
		"SELECT COUNT(*) FROM pums WHERE name = 'a' AND state = '😀'",
		"SELECT SUM(CASE WHEN name = 'é' THEN age ELSE 0 END) FROM pums WHERE state IN ('中', 'CA')",
	} {
		if _, err := p.Parse(sql); err != nil {
			t.Errorf("%q: %v", sql, err)
		}
	}
}
