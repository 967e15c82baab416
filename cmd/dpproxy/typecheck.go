package main

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
)

// typeCheckTTL is how long tableTypes trusts a table's checked column
// types before it reads them again.
const typeCheckTTL = 30 * time.Second

// tableTypes checks a table's declared numeric and temporal columns
// against the backend's types (columnTypeProblems) when a statement on it
// is about to reserve budget (exec.Executor.SetTableCheck), so that a
// table created or altered after the start check is checked too. Each
// table's verdict is kept for typeCheckTTL, then read again on its next
// statement. A schema can change at any moment, so this is a usability
// aid (a clear, uncharged refusal instead of answers read from text); the
// fetches are total over any column type by themselves. It is safe for
// concurrent use.
type tableTypes struct {
	be     *backend.Backend
	log    *slog.Logger
	vitess bool
	ttl    time.Duration
	now    func() time.Time
	// charsets, if set, has each checked table's text columns' character
	// sets read again with its types (readCharsets), so that later
	// statements on a table created or converted after start check their
	// literals against what it holds now.
	charsets *catalog.Charsets

	mu       sync.Mutex
	verdicts map[string]typeVerdict
}

// typeVerdict is one table's check: the refusal (nil if none) and when it
// was read.
type typeVerdict struct {
	at  time.Time
	err error
}

// newTableTypes returns the check of the tables of be (vitess: be is
// Vitess's vtgate), logging to log and refreshing charsets (may be nil).
func newTableTypes(be *backend.Backend, vitess bool, log *slog.Logger, charsets *catalog.Charsets) *tableTypes {
	return &tableTypes{be: be, log: log, vitess: vitess, ttl: typeCheckTTL, now: time.Now, verdicts: map[string]typeVerdict{}, charsets: charsets}
}

// check returns an Unsupported error naming the columns of t whose backend
// type contradicts their declaration, or nil. A table it cannot find
// passes (the statement's own fetch reports it), as does one whose types
// it cannot read (the backend is unreachable: logged, and read again at
// the next statement).
func (c *tableTypes) check(ctx context.Context, t *catalog.Table) error {
	c.mu.Lock()
	v, ok := c.verdicts[t.Name]
	c.mu.Unlock()
	if ok && c.now().Sub(v.at) < c.ttl {
		return v.err
	}
	bad, _, err := columnTypeProblems(ctx, c.be, *t, c.vitess)
	if err != nil {
		c.log.Warn("reading the backend's column types failed", "table", t.Name, "err", err)
		return nil
	}
	if c.charsets != nil {
		if err := readCharsets(ctx, c.be, []catalog.Table{*t}, c.charsets); err != nil {
			c.log.Warn("reading the backend's character sets failed", "table", t.Name, "err", err)
		}
	}
	v = typeVerdict{at: c.now()}
	if len(bad) > 0 {
		v.err = dperr.New(dperr.Unsupported, "not supported: %s: %s (the backend's table changed since dpproxy started, or was created later; no budget was spent)", strings.Join(bad, "; "), columnTypeRule)
		c.log.Warn("statement refused: a column's backend type contradicts its declaration", "table", t.Name, "columns", strings.Join(bad, "; "))
	}
	c.mu.Lock()
	c.verdicts[t.Name] = v
	c.mu.Unlock()
	return v.err
}
