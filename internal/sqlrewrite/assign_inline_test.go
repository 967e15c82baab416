package sqlrewrite_test

import (
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestCatalogAssignmentsInlined: MariaDB Connector/ODBC's SQLColumns assigns
// user variables in its select list (`@dt := ...` in every CASE branch) and
// reads them in later columns; the catalog engine cannot parse `:=`, so the
// statement is rewritten with each read replaced by the value the variable
// holds there: the whole CASE or IF whose branches all assign it.
func TestCatalogAssignmentsInlined(t *testing.T) {
	p := sqlrewrite.NewParser(testCatalog())
	st, err := p.Parse("SELECT COLUMN_NAME, CAST(CASE DATA_TYPE WHEN 'bigint' THEN @dt:=(-5) WHEN 'double' THEN @dt:=IF(NUMERIC_SCALE IS NULL, 8, 3) ELSE @dt:=12 END AS SIGNED) AS DATA_TYPE, " +
		"IF(NUMERIC_SCALE IS NULL, @ColSize:=15, @ColSize:=NUMERIC_PRECISION) AS COLUMN_SIZE, " +
		"@tol:=CAST(CASE @dt WHEN 8 THEN @ColSize + 1 ELSE 0 END AS SIGNED) AS BUFFER_LENGTH, @tol + @other AS T, CONCAT(CHAR(39), COLUMN_DEFAULT) AS D " +
		"FROM information_schema.COLUMNS WHERE TABLE_NAME = 'pums'")
	if err != nil {
		t.Fatal(err)
	}
	c, ok := st.(*sqlrewrite.Catalog)
	if !ok {
		t.Fatalf("got %T, want a catalog statement", st)
	}
	if strings.Contains(c.SQL, ":=") || strings.Contains(c.SQL, "@dt") || strings.Contains(c.SQL, "@ColSize") || strings.Contains(c.SQL, "@tol") {
		t.Errorf("assignments or reads left in %s", c.SQL)
	}
	for _, want := range []string{
		// @dt is the whole CASE, @ColSize the whole IF; @other, never assigned, stays a read.
		"CASE (CASE `DATA_TYPE` WHEN _UTF8MB4'bigint' THEN ((-5)) WHEN _UTF8MB4'double' THEN (IF(",
		"THEN (IF(`NUMERIC_SCALE` IS NULL, (15), (`NUMERIC_PRECISION`)))+1",
		"@`other`",
		"CONCAT(CHAR(39), `COLUMN_DEFAULT`)", // not the parser's CHAR_FUNC(39, NULL)
	} {
		if !strings.Contains(c.SQL, want) {
			t.Errorf("%s\nlacks %s", c.SQL, want)
		}
	}
	if st, err := p.Parse("SELECT @x := 1"); err != nil {
		t.Errorf("a FROM-less assignment: %v", err)
	} else if _, ok := st.(*sqlrewrite.Catalog); !ok {
		t.Errorf("a FROM-less assignment: got %T", st)
	}
}
