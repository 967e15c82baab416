package proxy

import (
	"github.com/dpproxy/dpproxy/internal/catalogdb"
	"github.com/dpproxy/dpproxy/internal/exec"
)

// notes are a statement's conditions (its errors, warnings and notes) as
// the session keeps them for SHOW WARNINGS, as MariaDB keeps them: the
// first max of them (the session's max_error_count, 64 by default), and
// the counts of all, which @@warning_count, @@error_count and SHOW
// COUNT(*) WARNINGS | ERRORS read. A grouped statement raises a note per
// released value (40,001 at the cap of 10,000 groups of four aggregates,
// 12.6 MB), which every session kept until its next statement; SET
// max_error_count = 65535 keeps them.
type notes struct {
	max   uint64
	kept  []exec.Warning
	count catalogdb.Conditions
}

// newNotes returns the empty notes of a statement of the session, which
// keep at most its max_error_count.
func (s *Session) newNotes() *notes {
	return &notes{max: s.catalog.MaxErrorCount()}
}

// add counts the conditions ws, in order, and keeps those there is room
// for.
func (n *notes) add(ws ...exec.Warning) {
	for _, w := range ws {
		n.count.All++
		if w.Level == "Error" {
			n.count.Errors++
		}
		if uint64(len(n.kept)) < n.max {
			n.kept = append(n.kept, w)
		}
	}
}

// addCatalog adds the conditions of a statement of the catalog engine:
// the first of them, r.Warnings (which the engine already cut to the
// same max_error_count), kept while there is room, and all of them,
// r.Conditions, counted.
func (n *notes) addCatalog(r *catalogdb.Result) {
	for _, w := range r.Warnings {
		if uint64(len(n.kept)) < n.max {
			n.kept = append(n.kept, exec.Warning{Level: w.Level, Code: w.Code, Message: w.Message})
		}
	}
	n.count.All += r.Conditions.All
	n.count.Errors += r.Conditions.Errors
}
