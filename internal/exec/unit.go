package exec

import (
	"fmt"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// newUnitSalt draws the statement's secret key for unit bounding (128 bits
// from the crypto source, as 32 hex digits), or "" on a row-level table.
// Every fetch of the statement uses it, so all of them read the same rows
// of each unit; the next statement draws a new one.
func newUnitSalt(plan *planner.Plan, src noise.Source) string {
	if !plan.Table.HasPrivacyUnit() {
		return ""
	}
	return fmt.Sprintf("%016x%016x", src.Uint64(), src.Uint64())
}

// unitScope is what a statement's fetches share on a unit table: the salt
// (newUnitSalt) and, for a grouped statement, the group dimensions and the
// bound of groups per unit (sqlrewrite.UnitBound.Groups), and the one
// group a per-group fetch reads of the bounded rows (Within). The zero
// scope is a row-level table's.
type unitScope struct {
	salt      string
	groups    []sqlrewrite.CellDim
	maxGroups int64
	within    []sqlrewrite.Condition
}

// unitBound is the bound of a fetch that reads rowsPerUnit rows of each
// unit of t (in each group of the scope, and at most the scope's groups of
// each unit; nil on a row-level table). A unit's rows are ordered by all
// the declared columns before the keyed shuffle (sqlrewrite.UnitBound).
func unitBound(t *catalog.Table, rowsPerUnit int64, scope unitScope) *sqlrewrite.UnitBound {
	if !t.HasPrivacyUnit() {
		return nil
	}
	order := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		order[i] = c.Source
	}
	return &sqlrewrite.UnitBound{Column: t.PrivacyUnit, MaxRows: max(1, rowsPerUnit), Order: order, Salt: scope.salt,
		Groups: scope.groups, MaxGroups: scope.maxGroups, Within: scope.within}
}

// unitNote is the privacy-unit part of an output's note: whom the value
// protects and at what ε (the output's own releases, and the statement's
// total, which bounds what all its outputs reveal together).
func unitNote(plan *planner.Plan, eps float64) string {
	if !plan.Table.HasPrivacyUnit() {
		return fmt.Sprintf("; protects each row at epsilon=%.6g (row-level table; statement %.6g)", eps, plan.Cost.Epsilon)
	}
	return fmt.Sprintf("; protects each %s at epsilon=%.6g (statement %.6g)", plan.Table.PrivacyUnit, eps, plan.Cost.Epsilon)
}
