package planner_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestSynopsisRealEndsOnBinEdges plans counts on readings.x, a real column
// with 10 bins over [0, 10] (edges on the whole numbers). A range end on
// an edge that asks for the rows holding the edge value (x <= 5, x > 5)
// was read as the other side of the edge with no note: x BETWEEN 2 AND 5
// dropped every row with x = 5 (1200 of 1600 on whole-number data). Such
// a plain COUNT(*) is now a fresh Laplace count with a note saying why,
// and a range count with such an end is refused; x < 5 and x >= 5 stay
// free and exact, with no note, and an end inside a bin is counted in
// proportion with the note that says so. The upper bound 10 has a cell of
// its own, 10 (the synopsis's positions run to 11), so that every end at
// it is exact: x < 10 leaves its rows out, x <= 10 and x >= 10 take them.
func TestSynopsisRealEndsOnBinEdges(t *testing.T) {
	cat := testCatalog()
	p := planner.New(cat)
	plan := func(t *testing.T, q string) (*planner.Plan, error) {
		t.Helper()
		st, err := sqlrewrite.NewParser(cat).Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		return p.Plan(st.(*sqlrewrite.Select), planner.Settings{Epsilon: 1, Mechanism: "auto"})
	}
	const fresh = "COUNT(*) is a fresh Laplace count, charged, not an answer from the synopsis of x: "
	for _, tc := range []struct {
		where string
		// spans is the synopsis answer's spans; "" when the count is a
		// fresh Laplace release, whose note has note.
		spans, note string
		// proportion is set when the answer's note says an end falls inside a bin.
		proportion bool
	}{
		{where: "x < 5", spans: "[{0 5}]"},
		{where: "x >= 5", spans: "[{5 11}]"},
		{where: "x <= 5", note: fresh + "x <= 5 ends exactly on an edge of the synopsis bins of the real column x (width 1), and the rows holding 5 are in the bin [5, 6), whose count the synopsis knows only as a whole; answered from the synopsis at no cost: write x < 5 (without the rows holding 5)"},
		{where: "x > 5", note: fresh + "x > 5 ends exactly on an edge of the synopsis bins of the real column x (width 1), and the rows holding 5 are in the bin [5, 6)"},
		{where: "x BETWEEN 2 AND 5 AND g = 0", note: fresh + "x <= 5 ends exactly on an edge"},
		{where: "x BETWEEN 2 AND 5.5 AND g = 0", spans: "[{2 5.5}]", proportion: true},
		{where: "x < 10", spans: "[{0 10}]"},
		{where: "x <= 10", spans: "[{0 11}]"},
		{where: "x >= 10", spans: "[{10 11}]"},
		{where: "x > 9.5", spans: "[{9.5 11}]", proportion: true},
		{where: "x > 0", note: fresh + "x > 0 ends exactly on an edge"},
	} {
		t.Run(tc.where, func(t *testing.T) {
			pl, err := plan(t, "SELECT COUNT(*) FROM readings WHERE "+tc.where)
			if err != nil {
				t.Fatal(err)
			}
			notes := strings.Join(pl.Notes, "\n")
			if tc.spans == "" {
				if pl.Synopsis != nil || len(pl.Releases) != 1 || !strings.Contains(notes, tc.note) {
					t.Errorf("got synopsis %v, %d release(s), notes %q; want one fresh Laplace release and a note with %q", pl.Synopsis, len(pl.Releases), notes, tc.note)
				}
				return
			}
			if pl.Synopsis == nil || len(pl.Releases) != 0 || notes != "" {
				t.Fatalf("got synopsis %v, %d release(s), notes %q; want an answer from the synopsis", pl.Synopsis, len(pl.Releases), notes)
			}
			if got := fmt.Sprint(pl.Synopsis.Answers[0].Spans); got != tc.spans {
				t.Errorf("spans %s, want %s", got, tc.spans)
			}
			if got := strings.Contains(strings.Join(pl.Synopsis.Notes, "\n"), "counted in proportion"); got != tc.proportion {
				t.Errorf("synopsis notes %q: proportion note %v, want %v", pl.Synopsis.Notes, got, tc.proportion)
			}
		})
	}
	for _, q := range []string{
		"SELECT SUM(x <= 5) FROM readings",
		"SELECT COUNT(CASE WHEN x > 5 THEN 1 END) FROM readings WHERE g = 0",
		"SELECT SUM(x >= 2) FROM readings WHERE x <= 5",
		"SELECT FLOOR(x / 2) * 2 AS b, COUNT(*) FROM readings WHERE x <= 5 GROUP BY b",
	} {
		if _, err := plan(t, q); err == nil || !strings.Contains(err.Error(), "ends exactly on an edge of the synopsis bins of the real column x") || !strings.Contains(err.Error(), "a plain COUNT(*) with this WHERE (a fresh Laplace count)") {
			t.Errorf("%s: got %v, want a refusal naming the edge and the forms answered", q, err)
		}
	}
}
