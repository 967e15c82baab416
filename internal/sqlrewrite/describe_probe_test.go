package sqlrewrite_test

import (
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestProbeForEveryValue: a prepared statement is a zero-row probe for
// every value of its markers when its LIMIT is 0 or its WHERE is TRUE for
// no row whatever they hold; one that a WHERE marker bound to NULL alone
// makes a probe (age = ?), or a LIMIT ? bound to 0, is not.
func TestProbeForEveryValue(t *testing.T) {
	p := sqlrewrite.NewParser(testCatalog())
	for sql, want := range map[string]bool{
		"SELECT * FROM pums WHERE age > ? LIMIT 0":                              true,
		"SELECT age, income FROM pums WHERE age = ? AND 1 = 0":                  true,
		"SELECT * FROM pums WHERE ? = 1 AND age = NULL":                         true,
		"SELECT race, COUNT(*) FROM pums WHERE age IN (?, ?) LIMIT 0 OFFSET ?":  true,
		"SELECT * FROM pums WHERE age = ?":                                      false,
		"SELECT * FROM pums WHERE age IN (?, ?)":                                false,
		"SELECT * FROM pums WHERE ? = 1 OR 1 = 0":                               false,
		"SELECT * FROM pums WHERE age BETWEEN ? AND 5":                          false,
		"SELECT * FROM pums WHERE age = ? LIMIT ?":                              false,
		"SELECT COUNT(*) FROM pums WHERE age > ?":                               false,
		"SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_NAME = ?": false,
		"SELECT age + ? FROM pums LIMIT 0":                                      false,
	} {
		if got := p.ProbeForEveryValue(sql, countMarkers(sql)); got != want {
			t.Errorf("%s: %v, want %v", sql, got, want)
		}
	}
}

func countMarkers(sql string) int {
	n := 0
	for _, c := range sql {
		if c == '?' {
			n++
		}
	}
	return n
}
