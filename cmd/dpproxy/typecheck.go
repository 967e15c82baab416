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
// types and character sets before it reads them again. A shorter TTL
// narrows the window after an ALTER in which statements are checked
// against the old character sets (tableTypes), at the price of reading
// the backend's catalog (a query per column checked) before more
// statements; 30 s keeps that to one read per table every 30 s.
const typeCheckTTL = 30 * time.Second

// tableTypes checks a table's declared numeric and temporal columns
// against the backend's types (columnTypeProblems) when a statement on it
// is about to reserve budget (exec.Executor.SetTableCheck), so that a
// table created or altered after the start check is checked too. Each
// table's verdict is kept for typeCheckTTL, then read again on its next
// statement; each read also records the table's PostgreSQL booleans
// declared integer, which its fetches read as 1 and 0
// (backend.Backend.SetBooleans). A schema can change at any moment, so
// this is a usability aid (a clear, uncharged refusal instead of answers
// read from text); the fetches are total over any column type by
// themselves. It is safe for concurrent use.
//
// Character sets. A statement's text constants were checked, when it was
// parsed, against the character sets known then (catalog.Charsets). A
// refresh that finds one of the table's text columns in another character
// set than that (or in one where none was known: a table created later)
// refuses the statement it runs for, uncharged, to be run again: parsed
// again, it is checked against the new set (a constant the column can no
// longer hold failed in the backend, charged, with a generic 1105). The
// refusal is not kept: the next statement passes. A refresh that finds a
// configured value (values:) the new set cannot represent keeps that as
// the table's verdict, as a type problem is kept, since every statement
// that binds the values would fail after its reservation. Left: for up to
// typeCheckTTL after an ALTER, until the next refresh, statements are
// still checked against the old sets, and a statement parsed while
// another's refresh runs is not refused by it; such a statement may still
// fail charged.
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
	// zones, if set, has each checked table's date and timestamp columns
	// recorded again as with or without a time zone
	// (columnTypeProblems).
	zones *catalog.ColumnZones

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
// type contradicts their declaration, or whose configured values their
// character set cannot represent, or saying that a text column's
// character set changed since the statement was parsed (see the type's
// comment), or an UnknownTable error (1146) when the backend's schema
// has none of its numeric, date or timestamp columns (for a table of text
// columns only, and on SQLite, none of its columns: columnTypeProblems),
// on every backend: the table was dropped or
// renamed, or not created yet, and its fetch would fail after the
// reservation, charged. The verdict reads the schema only, never rows:
// an empty table is not missing. A table whose types it cannot read
// passes (the backend is unreachable: logged, and read again at the next
// statement): the statement's own fetch reports it.
func (c *tableTypes) check(ctx context.Context, t *catalog.Table) error {
	c.mu.Lock()
	v, ok := c.verdicts[t.Name]
	c.mu.Unlock()
	if ok && c.now().Sub(v.at) < c.ttl {
		return v.err
	}
	bad, missing, err := columnTypeProblems(ctx, c.be, *t, c.vitess, c.zones)
	if err != nil {
		c.log.Warn("reading the backend's column types failed", "table", t.Name, "err", err)
		return nil
	}
	var changed, unrepresentable []string
	if c.charsets != nil {
		before := c.textCharsets(t)
		unrepresentable, err = readCharsets(ctx, c.be, []catalog.Table{*t}, c.charsets)
		if err != nil {
			c.log.Warn("reading the backend's character sets failed", "table", t.Name, "err", err)
		}
		after := c.textCharsets(t)
		for _, col := range t.Columns {
			if cs, ok := after[col.Name]; ok && before[col.Name] != cs {
				changed = append(changed, col.Name)
			}
		}
	}
	v = typeVerdict{at: c.now()}
	var reasons []string
	if len(bad) > 0 {
		reasons = append(reasons, strings.Join(bad, "; ")+": "+columnTypeRule)
		c.log.Warn("statement refused: a column's backend type contradicts its declaration", "table", t.Name, "columns", strings.Join(bad, "; "))
	}
	if len(unrepresentable) > 0 {
		reasons = append(reasons, strings.Join(unrepresentable, "; ")+": "+unrepresentableRule)
		c.log.Warn("statement refused: a configured value is not representable in its column's backend character set", "table", t.Name, "columns", strings.Join(unrepresentable, "; "))
	}
	switch {
	case missing:
		v.err = dperr.New(dperr.UnknownTable, "table %s is configured, but the backend has no table %s with its columns (dropped, renamed, or not created yet; no budget was spent)", t.Name, t.Source)
		c.log.Warn("statement refused: its table is not found in the backend", "table", t.Name, "source", t.Source)
	case len(reasons) > 0:
		v.err = dperr.New(dperr.Unsupported, "not supported: %s (the backend's table changed since dpproxy started, or was created later; no budget was spent)", strings.Join(reasons, "; "))
	}
	c.mu.Lock()
	c.verdicts[t.Name] = v
	c.mu.Unlock()
	if v.err == nil && len(changed) > 0 {
		c.log.Info("statement refused to be run again: a text column's character set changed", "table", t.Name, "columns", strings.Join(changed, ", "))
		return dperr.New(dperr.Unsupported, "the backend table %s changed since this statement was read (the character set of %s); run it again (no budget was spent)", t.Name, strings.Join(changed, ", "))
	}
	return v.err
}

// textCharsets returns the recorded character sets of t's text columns,
// by column name.
func (c *tableTypes) textCharsets(t *catalog.Table) map[string]catalog.Charset {
	sets := map[string]catalog.Charset{}
	for _, col := range t.Columns {
		if cs, ok := c.charsets.Of(t.Name, col.Name); ok && col.Type == catalog.Text {
			sets[col.Name] = cs
		}
	}
	return sets
}
