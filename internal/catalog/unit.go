package catalog

import (
	"fmt"
	"strings"
)

// Privacy units.
//
// By default one row is one privacy unit: neighbouring tables differ by one
// row, and a person with many rows is protected at that many times the ε
// of a statement. A table that names its privacy unit column
// (privacy_unit: person_id) protects persons instead: neighbouring tables
// differ by all the rows of one unit (add or remove one person with every
// row they have), and every release reads at most max_rows_per_unit rows of
// each unit, chosen in the database uniformly at random and independently
// of the values (sqlrewrite.UnitBound), so one neighbour step moves at most
// that many rows of what a mechanism reads. Mechanisms either scale their
// sensitivity by the bound (the Laplace baselines) or read one row per unit
// so their one-row analysis applies unchanged (planner: Release.RowsPerUnit).
//
// Histogram synopses on a unit table read a histogram bounded to
// max_rows_per_unit = k rows per unit, fixed for the build, and run at
// ε/k per row (L1 sensitivity k: planner.SynopsisSpec.Build), so ε/k must
// be at least MinSynopsisEpsilon. So do interactive instances: their
// histogram over X keeps k rows per unit with a salt fixed for the
// instance, and they run at ε/k per row
// (planner.InteractivePlan.RowEpsilon).
//
// The unit column is a backend column that is not declared among Columns:
// analysts can never output it, filter or group on it, or aggregate it.
// Rows whose unit is NULL are read by no release.
//
// GROUP BY on a unit table: a unit may contribute to at most
// max_groups_per_unit groups, and each group's releases are charged
// ε / max_groups_per_unit of the statement's per-group budget, or ε / n
// when the statement has fewer, n, public groups (a unit's rows lie in at
// most n of its disjoint groups), so that the whole grouped statement is
// ε-DP per unit (UnitGroupShare); grouped planning applies it where it
// splits ε over groups (planner.QueryPlan.GroupsPerUnit). Partition selection
// of a private key counts distinct units, each toward at most
// max_groups_per_unit keys, and calibrates each key's selection for that
// many keys changing (planner.PartitionSelection).
//
// One relation has one unit: configured tables that read one backend
// relation declare the same privacy_unit, or none
// (validateUnitSources).

// MaxRowsPerUnitLimit and MaxGroupsPerUnitLimit cap the contribution
// bounds: with k ≤ 2^20 rows per unit the scaled sensitivities stay within
// the samplers' range for every bound and ε the catalog admits (a centred
// sum of squares has sensitivity at most 2^20·2^800, and divided by
// ε ≥ 2^-50 it stays below the Laplace sampler's 2^960).
const (
	MaxRowsPerUnitLimit   = 1 << 20
	MaxGroupsPerUnitLimit = 1 << 20
)

// HasPrivacyUnit reports whether the table protects units (persons) rather
// than rows.
func (t *Table) HasPrivacyUnit() bool { return t.PrivacyUnit != "" }

// ProtectedUnit names what one neighbour step adds or removes, for EXPLAIN
// and warnings: "each <unit column>" or "each row".
func (t *Table) ProtectedUnit() string {
	if t.HasPrivacyUnit() {
		return "each " + t.PrivacyUnit
	}
	return "each row"
}

// UnitGroupShare is the most groups of a statement one neighbour step
// changes on this table, whatever their number: max_groups_per_unit for a
// unit table, 1 for a row-level table (a row lies in one group). Grouped
// planning divides a per-group ε by it, or by the number of groups where
// that is public and smaller.
func (t *Table) UnitGroupShare() int64 {
	if t.HasPrivacyUnit() {
		return t.MaxGroupsPerUnit
	}
	return 1
}

func (t *Table) applyUnitDefaults() {
	if !t.HasPrivacyUnit() {
		return
	}
	if t.MaxRowsPerUnit == 0 {
		t.MaxRowsPerUnit = 1
	}
	if t.MaxGroupsPerUnit == 0 {
		t.MaxGroupsPerUnit = 1
	}
}

// validateUnit checks the privacy unit declaration of table field f.
func (t *Table) validateUnit(f string) error {
	if !t.HasPrivacyUnit() {
		if t.MaxRowsPerUnit != 0 || t.MaxGroupsPerUnit != 0 {
			return invalid(f+".privacy_unit", "max_rows_per_unit and max_groups_per_unit need a privacy_unit column")
		}
		return nil
	}
	if !identifier.MatchString(t.PrivacyUnit) {
		return invalid(f+".privacy_unit", "must be an identifier (the backend column naming the unit), got %q", t.PrivacyUnit)
	}
	for j, col := range t.Columns {
		if strings.EqualFold(col.Name, t.PrivacyUnit) || strings.EqualFold(col.Source, t.PrivacyUnit) {
			return invalid(f+".privacy_unit", "the unit column %q is declared as columns[%d]; it must not be: analysts can never output, filter, group on or aggregate the unit column", t.PrivacyUnit, j)
		}
	}
	if t.MaxRowsPerUnit < 1 || t.MaxRowsPerUnit > MaxRowsPerUnitLimit {
		return invalid(f+".max_rows_per_unit", "must be in [1, %d], got %d", MaxRowsPerUnitLimit, t.MaxRowsPerUnit)
	}
	if t.MaxGroupsPerUnit < 1 || t.MaxGroupsPerUnit > MaxGroupsPerUnitLimit {
		return invalid(f+".max_groups_per_unit", "must be in [1, %d], got %d", MaxGroupsPerUnitLimit, t.MaxGroupsPerUnit)
	}
	// An interactive instance runs at ε/k per row
	// (planner.InteractivePlan.RowEpsilon), as a synopsis does.
	if in := t.Interactive; in != nil && in.Epsilon >= MinSynopsisEpsilon && in.Epsilon/float64(t.MaxRowsPerUnit) < MinSynopsisEpsilon {
		return invalid(f+".interactive.epsilon",
			"%g runs at epsilon/max_rows_per_unit = %g per row on a table with a privacy_unit, below 2^-15: raise epsilon or lower max_rows_per_unit", in.Epsilon, in.Epsilon/float64(t.MaxRowsPerUnit))
	}
	for j, col := range t.Columns {
		// A synopsis runs at ε/k per row (planner.SynopsisSpec.Build);
		// that share must stay within what its mechanisms accept. An ε that
		// is invalid by itself is reported by the histogram's validation.
		if h := col.Histogram; h != nil && h.Epsilon >= MinSynopsisEpsilon && h.Epsilon/float64(t.MaxRowsPerUnit) < MinSynopsisEpsilon {
			return invalid(fmt.Sprintf("%s.columns[%d].histogram.epsilon", f, j),
				"%g is built at epsilon/max_rows_per_unit = %g per row on a table with a privacy_unit, below 2^-15: raise epsilon or lower max_rows_per_unit", h.Epsilon, h.Epsilon/float64(t.MaxRowsPerUnit))
		}
	}
	return nil
}

// validateUnitSources refuses two configured tables that read one backend
// relation (the source or a partition of either, compared as
// validateCappedSources compares them: sameRelation) under different
// privacy units: one at row level and one with a privacy_unit, or two
// different unit columns. Every statement states its guarantee for its
// own table's unit, but the budgets (the analyst's, and the relation's
// table cap, which both tables are charged to: TableAccount) add up the
// statements on both: a statement read at row level costs a person with
// r rows r·ε, not the ε it is charged, so the other table's "protects
// each <unit>" would hold for no person who also appears through it (an
// independent review); and two unit columns group the rows two ways,
// neither bounding the other's unit. Tables with one unit column may
// differ in max_rows_per_unit and max_groups_per_unit: a statement on
// either is ε-DP for adding or removing all the rows of one unit, its
// noise calibrated to its own table's bounds, so statements on the two
// compose per unit as statements on one table do. Unit columns are
// compared exactly: the fetches quote them, and PostgreSQL then reads pid
// and PID as two columns (where MySQL reads one, the refusal only asks
// for one spelling). A view over the relation is not seen here, as with
// validateCappedSources.
func (c *Config) validateUnitSources() error {
	for j := range c.Tables {
		later := &c.Tables[j]
		for i := range j {
			earlier := &c.Tables[i]
			if earlier.PrivacyUnit == later.PrivacyUnit {
				continue
			}
			for _, a := range later.relations() {
				for _, b := range earlier.relations() {
					if sameRelation(a, b) {
						return invalid(fmt.Sprintf("tables[%d].privacy_unit", j),
							"table %s protects %s, but tables[%d] (%s), which protects %s, also reads its backend relation %s: the budgets add up statements on both, so neither table's guarantee would hold per its unit; declare the same privacy_unit on both (max_rows_per_unit and max_groups_per_unit may differ), or declare the rows once",
							later.Name, later.ProtectedUnit(), i, earlier.Name, earlier.ProtectedUnit(), a)
					}
				}
			}
		}
	}
	return nil
}
