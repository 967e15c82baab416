package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
)

// typeCheckTTL is how long tableTypes trusts a table's checked columns,
// their types and character sets before it reads them again. A shorter TTL
// narrows the window after an ALTER in which statements are checked
// against the old columns and character sets (tableTypes), at the price
// of reading the backend's catalog (a query per column) before more
// statements; 30 s keeps that to one read per table every 30 s.
const typeCheckTTL = 30 * time.Second

// tableTypes checks a table's declared numeric and temporal columns
// against the backend's types, and that the backend's table has the
// columns the statement reads (columnTypeProblems), when a statement on
// it is about to reserve budget (exec.Executor.SetTableCheck), so that a
// table created or altered after the start check is checked too. Each
// table's verdict is kept for typeCheckTTL, then read again on its next
// statement (a column dropped, or added back, counts from then); each
// read also records the table's PostgreSQL booleans
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
//
// Columns. A refresh records which of the table's declared columns, and
// its privacy unit column, the backend's table lacks (dropped or renamed
// while the table stays); a statement whose plan reads one of them is
// refused with 1054, uncharged, and the statements that read none of them
// answer. Left, as for types: a column dropped within typeCheckTTL of the
// last refresh fails its statements charged until the next one, and one
// added back is refused until then. Behind Vitess the schema is read
// through vtgate, from one shard of the keyspace, so a schema change that
// has reached some shards only may still fail a fetch on the others.
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
	// config, if set, gives the configured table of each table checked,
	// whose columns are checked: a plan's table adds a column for each of
	// its row expressions, which the backend computes.
	config *catalog.Config

	mu       sync.Mutex
	verdicts map[string]typeVerdict
}

// typeVerdict is one table's check: the refusal of every statement on it
// (nil if none), the backend names of its columns the backend lacks
// (tableSchema.absent), and when it was read.
type typeVerdict struct {
	at     time.Time
	err    error
	absent []string
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
// comment), or an UnknownTable error (1146) when the backend's table has
// none of t's columns (dropped or renamed, or not created yet), or an
// UnknownColumn error (1054) when it lacks one of the columns reads (the
// backend columns the statement's plan reads: planner.Plan.Reads, with
// the privacy unit column on a table that has one), on every backend:
// the statement's fetch would fail after the reservation, charged. A
// statement on t that reads none of the columns it lacks passes. The
// verdict reads the schema only, never rows: an empty table is not
// missing, nor an all-NULL column. A table whose types it cannot read
// passes (the backend is unreachable: logged, and read again at the next
// statement): the statement's own fetch reports it.
//
// user is the statement's analyst: a read of the schema waits for one of
// the analyst's turns (backend.Backend.Turn) and holds it while it reads,
// so that it counts within backend.max_user_connections as the
// statement's fetches do; before, the reads of an analyst's statements on
// many tables took connections beyond that share. A wait that ctx ends
// returns its Timeout or Canceled error.
func (c *tableTypes) check(ctx context.Context, user string, t *catalog.Table, reads []string) error {
	if c.config != nil {
		if configured, ok := c.config.Table(t.Name); ok {
			t = configured
		}
	}
	c.mu.Lock()
	v, ok := c.verdicts[t.Name]
	c.mu.Unlock()
	if ok && c.now().Sub(v.at) < c.ttl {
		return v.refusal(t, reads)
	}
	release, err := c.be.Turn(ctx, user)
	if err != nil {
		return err
	}
	defer release()
	schema, err := columnTypeProblems(ctx, c.be, *t, c.vitess, c.zones)
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
	v = typeVerdict{at: c.now(), absent: schema.absent}
	var reasons []string
	if len(schema.bad) > 0 {
		reasons = append(reasons, strings.Join(schema.bad, "; ")+": "+columnTypeRule)
		c.log.Warn("statement refused: a column's backend type contradicts its declaration", "table", t.Name, "columns", strings.Join(schema.bad, "; "))
	}
	if len(unrepresentable) > 0 {
		reasons = append(reasons, strings.Join(unrepresentable, "; ")+": "+unrepresentableRule)
		c.log.Warn("statement refused: a configured value is not representable in its column's backend character set", "table", t.Name, "columns", strings.Join(unrepresentable, "; "))
	}
	switch {
	case schema.missing:
		v.err = dperr.New(dperr.UnknownTable, "table %s is configured, but the backend has no table %s with its columns (dropped, renamed, or not created yet; no budget was spent)", t.Name, t.Source)
		c.log.Warn("statement refused: its table is not found in the backend", "table", t.Name, "source", t.Source)
	case len(reasons) > 0:
		v.err = dperr.New(dperr.Unsupported, "not supported: %s (the backend's table changed since dpproxy started, or was created later; no budget was spent)", strings.Join(reasons, "; "))
	case len(schema.absent) > 0:
		c.log.Warn("configured columns not found in the backend: the statements that read them are refused", "table", t.Name, "source", t.Source, "columns", strings.Join(schema.absent, ", "))
	}
	c.mu.Lock()
	c.verdicts[t.Name] = v
	c.mu.Unlock()
	if err := v.refusal(t, reads); err != nil {
		return err
	}
	if len(changed) > 0 {
		c.log.Info("statement refused to be run again: a text column's character set changed", "table", t.Name, "columns", strings.Join(changed, ", "))
		return dperr.New(dperr.Unsupported, "the backend table %s changed since this statement was read (the character set of %s); run it again (no budget was spent)", t.Name, strings.Join(changed, ", "))
	}
	return nil
}

// refusal returns v's refusal of a statement on t that reads the backend
// columns reads: the table's, or an UnknownColumn error naming, as
// MySQL's 1054 names a column it does not have, the columns of reads the
// backend lacks, in declaration order (the privacy unit column last).
func (v typeVerdict) refusal(t *catalog.Table, reads []string) error {
	if v.err != nil {
		return v.err
	}
	var names, sources []string
	for _, source := range v.absent {
		if !slices.Contains(reads, source) {
			continue
		}
		name := source
		if i := slices.IndexFunc(t.Columns, func(c catalog.Column) bool { return c.Source == source }); i >= 0 {
			name = t.Columns[i].Name
		}
		names, sources = append(names, name), append(sources, source)
	}
	if len(names) == 0 {
		return nil
	}
	unit := ""
	if last := sources[len(sources)-1]; t.HasPrivacyUnit() && last == t.PrivacyUnit {
		unit = fmt.Sprintf("; %s is the table's privacy unit column, which every statement on it reads", last)
	}
	lacks := "column " + sources[0]
	if len(sources) > 1 {
		lacks = "columns " + strings.Join(sources, ", ")
	}
	return dperr.New(dperr.UnknownColumn, "Unknown column '%s' in 'field list': the configuration declares %s (table %s), but the backend table %s lacks %s (dropped, renamed, or not added yet%s; no budget was spent)",
		names[0], strings.Join(names, ", "), t.Name, t.Source, lacks, unit)
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
