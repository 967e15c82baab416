package planner_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestCastAsCharLength evaluates CAST(x AS CHAR(n)) over one released row
// (COUNT(*) = 3000, AVG(income) = 2.5, a DOUBLE) and checks the cells,
// the columns' types and the warnings against MariaDB 10.11's answer to
// the same expressions over a BIGINT 3000 and a DOUBLE 2.5 (checked
// there by hand, text and column lengths): the text is cut to n
// characters with warning 1292 "Truncated incorrect CHAR(n) value: '…'"
// (the value cut at 128 bytes in the message), the column is n long
// whatever the text, and an n beyond max_allowed_packet is warning 1301
// with the value kept (checked at MariaDB's default packet, 16777216,
// with CHAR(16777217)). Before, n was ignored.
func TestCastAsCharLength(t *testing.T) {
	parser := sqlrewrite.NewParser(testCatalog())
	p := planner.New(testCatalog())
	many := strings.Repeat("é", 62) + "..."
	for _, c := range []struct{ sql, types, want, warnings string }{
		{"SELECT CAST(AVG(income) AS CHAR(2)), CAST(COUNT(*) AS CHAR(2)), CONCAT(CAST(COUNT(*) AS CHAR(2)), 'x'), CAST(COUNT(*) AS CHAR(0)), CAST(COUNT(*) AS CHAR(10))",
			"VARCHAR(2) VARCHAR(2) VARCHAR(3) VARCHAR(0) VARCHAR(10)", "2.|30|30x||3000",
			"Warning 1292 Truncated incorrect CHAR(2) value: '2.5'; Warning 1292 Truncated incorrect CHAR(2) value: '3000'; " +
				"Warning 1292 Truncated incorrect CHAR(2) value: '3000'; Warning 1292 Truncated incorrect CHAR(0) value: '3000'"},
		{"SELECT CAST(COUNT(*) / 7 AS CHAR(4)), CAST(AVG(income) AS CHAR(1025)), CAST(CONCAT(REPEAT('é', 200), COUNT(*)) AS CHAR(3))",
			"VARCHAR(4) VARCHAR(1025) VARCHAR(3)", "428.|2.5|ééé",
			"Warning 1292 Truncated incorrect CHAR(4) value: '428.5714'; " +
				"Warning 1301 Result of cast_as_char() was larger than max_allowed_packet (1024) - truncated; " +
				"Warning 1292 Truncated incorrect CHAR(3) value: '" + many + "'"},
		// CHAR(4294967295) is CHAR without a length, as MariaDB reads it.
		{"SELECT CAST(COUNT(*) AS CHAR(4294967295)), CAST(COUNT(*) AS CHAR)", "VARCHAR(21) VARCHAR(21)", "3000|3000", ""},
	} {
		// MariaDB's least max_allowed_packet; its default, 16777216, warns from CHAR(16777217).
		types, cells, casts := postProcessedCells(t, parser, p, c.sql, 1024)
		var warnings []string
		for _, cw := range casts {
			warnings = append(warnings, map[bool]string{false: "Warning", true: "Note"}[cw.Note]+fmt.Sprintf(" %d %s", cw.Code, cw.Message))
		}
		if got := strings.Join(types, " "); got != c.types {
			t.Errorf("%s: types %s, want %s", c.sql, got, c.types)
		}
		if got := strings.Join(cells, "|"); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.sql, got, c.want)
		}
		if got := strings.Join(warnings, "; "); got != c.warnings {
			t.Errorf("%s: warnings\n got %q\nwant %q", c.sql, got, c.warnings)
		}
	}
	// Beyond 4294967295: MariaDB's 1439.
	_, err := parser.Parse("SELECT CAST(COUNT(*) + 1 AS CHAR(4294967296)) FROM pums")
	if code, _ := dperr.KindOf(err).Code(); code != 1439 || !strings.Contains(fmt.Sprint(err), "Display width out of range for '") {
		t.Errorf("CHAR(4294967296): %v, want 1439", err)
	}
}
