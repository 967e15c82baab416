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
// bound of groups per unit (sqlrewrite.UnitBound.Groups), or, grouped by
// the values partition selection released alone, that key's column
// (sqlrewrite.UnitBound.Key), and the one group a per-group fetch reads of
// the bounded rows (Within). The zero scope is a row-level table's.
type unitScope struct {
	salt      string
	groups    []sqlrewrite.CellDim
	key       *sqlrewrite.CellDim
	maxGroups int64
	within    []sqlrewrite.Condition
}

// groupedScope is the scope of a grouped statement's fetches on a unit
// table, each unit keeping at most maxGroups of its groups. Grouped by a
// released key alone (a ByValue dimension: partition selection's values,
// whose number nothing bounds), the units are bounded by the key's own
// values (sqlrewrite.UnitBound.Key): each unit keeps at most maxGroups of
// all its values, as the selection's counts were bounded, and the fetches
// group by value, the caller dropping the values not released. Bounding
// by the cells of the released values instead would render a CASE of
// every released value, three times, per row: past about 21,800 values
// more than the backends' 65,535 placeholders, and slow long before. The
// bound is the same either way: adding or removing a unit changes at most
// MaxRows rows in each of at most maxGroups groups.
func groupedScope(scope unitScope, dims []sqlrewrite.CellDim, maxGroups int64) unitScope {
	scope.maxGroups = maxGroups
	if len(dims) == 1 && dims[0].ByValue && len(dims[0].Values) > 0 {
		scope.key = &dims[0]
		return scope
	}
	scope.groups = dims
	return scope
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
	u := &sqlrewrite.UnitBound{Column: t.PrivacyUnit, MaxRows: max(1, rowsPerUnit), Order: order, Salt: scope.salt,
		Groups: scope.groups, MaxGroups: scope.maxGroups, Within: scope.within}
	if k := scope.key; k != nil {
		u.Key, u.KeyNumeric = k.Column, !k.Values[0].IsText
	}
	return u
}

// statementScope is what an output's note says of the statement the
// output belongs to: its cost (what the ledger is charged, the QueryPlan's
// for a grouped statement, not one group's plan), and the most groups
// whose releases one neighbour step changes (QueryPlan.GroupsPerUnit: on
// a unit table with GROUP BY, whose groups' releases each get the
// statement's share divided by it; 1 otherwise: without GROUP BY, or on a
// row-level table, where a row is in one group).
type statementScope struct {
	cost   planner.Cost
	groups int64
}

// planScope is the scope of a statement answered by one plan.
func planScope(plan *planner.Plan) statementScope {
	return statementScope{cost: plan.Cost, groups: 1}
}

// queryScope is the scope of a grouped statement's outputs.
func queryScope(qp *planner.QueryPlan) statementScope {
	return statementScope{cost: qp.Cost, groups: qp.GroupsPerUnit}
}

// unitNote is the privacy part of an output's note: whom the statement
// protects and at what ε, its cost, which bounds what all its outputs
// reveal together; then eps, the ε of the output's own releases (in its
// group), and on a unit table with GROUP BY the g groups a unit's rows
// reach, across which the output's releases spend g·eps of it.
func unitNote(plan *planner.Plan, eps float64, s statementScope) string {
	if !plan.Table.HasPrivacyUnit() {
		return fmt.Sprintf("; protects each row at epsilon=%.6g, the statement's (row-level table; this value's releases: epsilon=%.6g)", s.cost.Epsilon, eps)
	}
	u := plan.Table.PrivacyUnit
	if s.groups > 1 {
		return fmt.Sprintf("; protects each %s at epsilon=%.6g, the statement's (each %s's rows reach at most %d groups; this value's releases: epsilon=%.6g in each, %.6g across them)",
			u, s.cost.Epsilon, u, s.groups, eps, float64(s.groups)*eps)
	}
	return fmt.Sprintf("; protects each %s at epsilon=%.6g, the statement's (this value's releases: epsilon=%.6g)", u, s.cost.Epsilon, eps)
}
