package sqlrewrite_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestParserKeepsNoLongStatement: a session's parser does not hold a long
// statement's tree once parsed (TiDB's parser kept its last tree and
// stacks: 17 MiB after a 78 KiB select list, 60 MB or more per connection
// after 255 KiB, found by a review as prepared statements' retained
// memory).
func TestParserKeepsNoLongStatement(t *testing.T) {
	p := sqlrewrite.NewParser(testCatalog())
	q := "SELECT 1" + strings.Repeat(",1", 40000)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := p.Parse(q); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 4<<20 {
		t.Errorf("the parser holds %d KiB after parsing %d KiB", grown>>10, len(q)>>10)
	}
	runtime.KeepAlive(p)
	if _, err := p.Parse("SELECT COUNT(*) FROM pums"); err != nil {
		t.Errorf("the next statement: %v", err)
	}
}
