package proxy

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestDescribe: a prepared private SELECT is described with the column
// definitions its execution sends (answerColumn of the plan's types), its
// markers standing for values not yet known; statements whose columns
// are not the private path's, or could depend on an argument, are not.
func TestDescribe(t *testing.T) {
	s := newTestSession(t)
	spent := func() float64 {
		eps, _, err := s.remaining(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return eps
	}
	before := spent()
	for _, c := range []struct {
		query string
		want  string // name:type ..., "" for not described
	}{
		{"SELECT COUNT(*) FROM pums", "COUNT(*):8"},
		{"SELECT race, COUNT(*), AVG(income) FROM pums WHERE age > ? GROUP BY race", "race:8 COUNT(*):8 AVG(income):5"},
		{"SELECT race, COUNT(*) AS n FROM pums WHERE age BETWEEN ? AND ? GROUP BY race ORDER BY n DESC LIMIT ?", "race:8 n:8"},
		{"SELECT COUNT(*) FROM pums WHERE age > ? LIMIT ? OFFSET ?", "COUNT(*):8"},
		{"SELECT COUNT(*) FROM pums WHERE sex = ? LIMIT ?, ?", "COUNT(*):8"},
		{"SELECT FLOOR(age / 10) * 10 AS b, COUNT(*) FROM pums WHERE income > ? GROUP BY b", "b:8 COUNT(*):8"},
		{"SELECT MEDIAN(income) FROM pums WHERE ? IS NULL OR sex = ?", "MEDIAN(income):5"},
		{"SELECT t.n FROM (SELECT COUNT(*) AS n FROM pums WHERE age > ?) t", "n:8"},
		// A marker whose value names or types a column.
		{"SELECT COUNT(*) + ? FROM pums", ""},
		{"SELECT SUM(CASE WHEN sex = ? THEN 1 END) AS n FROM pums", ""},
		// The catalog engine's, the session's, refused and unparsed statements.
		{"SELECT * FROM information_schema.tables", ""},
		{"SELECT COUNT(*) FROM pums LIMIT 0", ""},
		{"SELECT 1", ""},
		{"SELECT dp_remaining_epsilon()", ""},
		{"SELECT age FROM pums", ""},
		{"SET @dp_epsilon = ?", ""},
		{"SELECT COUNT(*) FROM nosuch", ""},
		{"SELEC", ""},
	} {
		markers := strings.Count(c.query, "?")
		var got []string
		for _, col := range s.Describe(context.Background(), c.query, markers) {
			got = append(got, fmt.Sprintf("%s:%d", col.Name, col.Type))
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("%s: described %q, want %q", c.query, g, c.want)
		}
	}
	// A statement past largeStatementBytes is not parsed outside the
	// large-parse gate: not described, though it would be if shorter.
	long := "SELECT COUNT(*) FROM pums WHERE age > ?" + strings.Repeat(" ", largeStatementBytes)
	if cols := s.Describe(context.Background(), long, 1); cols != nil {
		t.Errorf("described a statement of %d bytes: %v", len(long), cols)
	}
	// A miscounted statement (the protocol's count decides) is not described.
	if cols := s.Describe(context.Background(), "SELECT COUNT(*) FROM pums WHERE age > ?", 2); cols != nil {
		t.Errorf("described %v with the wrong marker count", cols)
	}
	if after := spent(); after != before {
		t.Errorf("describing spent epsilon %g", before-after)
	}
}
