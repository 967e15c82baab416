package backend

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// failingQueryer fails every query with err.
type failingQueryer struct{ err error }

func (q failingQueryer) QueryContext(context.Context, string, ...any) (*sql.Rows, error) {
	return nil, q.err
}

// sqlAttrs keeps the "sql" attribute of every record, at every level.
type sqlAttrs struct {
	mu  sync.Mutex
	sql map[string][]string // by message
}

func (h *sqlAttrs) Enabled(context.Context, slog.Level) bool { return true }
func (h *sqlAttrs) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "sql" {
			h.sql[r.Message] = append(h.sql[r.Message], a.Value.String())
		}
		return true
	})
	return nil
}
func (h *sqlAttrs) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *sqlAttrs) WithGroup(string) slog.Handler      { return h }

// TestFailedFetchLogHoldsNoRanks: a window fetch (ranks 3,959 to 11,877,
// as the exact count would place them) that fails logs its text at ERROR
// ("backend fetch failed") and, out of time, at WARN ("backend fetch
// timed out"), on every dialect and on Vitess, where the ranks are
// written in the text sent: the logged text has LIMIT and OFFSET as
// placeholders, no rank, and no per-statement settings (MariaDB's
// max_statement_time, Vitess's QUERY_TIMEOUT_MS, the time left to the
// statement). Before, the text sent was logged, ranks and all.
func TestFailedFetchLogHoldsNoRanks(t *testing.T) {
	f := sqlrewrite.Fetch{Table: "pums", Filter: []sqlrewrite.Condition{{Column: "state", In: []sqlrewrite.Value{{Str: "CA", IsText: true}}, Text: true}},
		Window: &sqlrewrite.Window{Column: "income", Lower: 0, Upper: 500000, Offset: 3958, Limit: 7919}}
	for _, c := range []struct {
		name            string
		dialect         sqlrewrite.Dialect
		mariaDB, vitess bool
		ranks           string
	}{
		{"sqlite", sqlrewrite.SQLite, false, false, "LIMIT ? OFFSET ?"},
		{"postgres", sqlrewrite.PostgreSQL, false, false, "LIMIT $2 OFFSET $3"},
		{"mariadb", sqlrewrite.MySQL, true, false, "LIMIT ? OFFSET ?"},
		{"mysql", sqlrewrite.MySQL, false, false, "LIMIT ? OFFSET ?"},
		{"vitess", sqlrewrite.MySQL, false, true, "LIMIT ? OFFSET ?"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := &sqlAttrs{sql: map[string][]string{}}
			b := New(nil, c.dialect, slog.New(h))
			b.flavorKnown, b.mariaDB, b.vitess = true, c.mariaDB, c.vitess
			scan := func(*sql.Rows) error { return nil }
			if err := b.query(context.Background(), failingQueryer{errors.New("the backend failed")}, f, scan); err == nil {
				t.Fatal("a failed fetch succeeded")
			}
			late, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
			defer cancel()
			if err := b.query(late, failingQueryer{context.DeadlineExceeded}, f, scan); err == nil {
				t.Fatal("a fetch out of time succeeded")
			}
			failed, timedOut := h.sql["backend fetch failed"], h.sql["backend fetch timed out"]
			if len(failed) != 1 || len(timedOut) != 1 {
				t.Fatalf("logged %v, want one failure and one timeout", h.sql)
			}
			for _, text := range append(failed, timedOut...) {
				if !strings.HasPrefix(text, "SELECT CASE WHEN ") || !strings.HasSuffix(text, " ORDER BY `pums`.`income` "+c.ranks) &&
					!strings.HasSuffix(text, " ORDER BY 1 "+c.ranks) || strings.Contains(text, "3958") || strings.Contains(text, "7919") {
					t.Errorf("logged %q, want the fetch with %s and no rank", text, c.ranks)
				}
			}
		})
	}
}
