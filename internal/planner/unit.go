package planner

import (
	"fmt"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

// Privacy units (catalog.Table.PrivacyUnit).
//
// On a table with a privacy unit every fetch of a release reads at most
// RowsPerUnit rows of each unit, chosen by the database uniformly at random
// and independently of the values (sqlrewrite.UnitBound), so neighbouring
// tables (all rows of one unit added or removed) differ by at most
// RowsPerUnit rows of what the release reads. The choice per mechanism:
//
//   - laplace (COUNT, SUM and the sums behind AVG, VARIANCE, STDDEV when
//     forced): reads max_rows_per_unit = k rows per unit and scales every
//     sensitivity by k (laplace.ReleaseUnitCount and its siblings).
//   - every instance-adaptive mechanism (grid exponential and smooth
//     quantiles, piecewise, inverse sensitivity, preprocessing, auto-mean,
//     PTR and its robust and trimmed variants): reads one row per unit,
//     chosen uniformly at random, so one neighbour step moves at most one
//     row of what it reads and its one-row analysis applies unchanged. The
//     price is the rows not read (a quantile of one row per person rather
//     than of all rows); bench/RESULTS.md measures it.
//
// All fetches of one statement share one secret salt, so a release's
// count, sums and windows are computed over the same bounded rows.
// Histogram synopses read a histogram bounded to k rows per unit with a
// salt of their own build and run at ε/k per row (SynopsisSpec.Build);
// interactive instances read their histogram over X bounded to k rows per
// unit with a salt fixed for the instance and run at ε/k per row
// (InteractivePlan.RowEpsilon). GROUP BY over declared domains bounds each unit to
// max_groups_per_unit groups in the database (sqlrewrite.UnitBound.Groups)
// and gives each group's releases ε / min(n, max_groups_per_unit) over
// its n public, disjoint groups (QueryPlan.GroupsPerUnit,
// unitGroupSettings); GROUP BY a private key selects the keys by their
// number of distinct units, each unit counted toward at most
// max_groups_per_unit keys (sqlrewrite.UnitBound.Key), each key at the
// selection's ε and δ divided by that bound (PartitionSelection), and
// answers the released keys as a declared domain (planSelected).

// unitScaled marks the mechanisms analysed for changes of k rows: they read
// max_rows_per_unit rows per unit; every other mechanism reads one.
type unitScaled interface{ scalesWithRows() }

// rowsPerUnit is the number of rows per unit a release by m reads on t (0
// on a row-level table).
func rowsPerUnit(t *catalog.Table, m Mechanism) int64 {
	if !t.HasPrivacyUnit() {
		return 0
	}
	if _, ok := m.(unitScaled); ok {
		return t.MaxRowsPerUnit
	}
	return 1
}

// rows is the k a release's sensitivity is scaled by: RowsPerUnit, or 1 on
// a row-level table.
func (r *Release) rows() int64 { return max(1, r.RowsPerUnit) }

// unitNote describes for EXPLAIN what the release reads of each unit and
// its resulting sensitivity; empty on a row-level table.
func (r *Release) unitNote(t *catalog.Table) string {
	if !t.HasPrivacyUnit() {
		return ""
	}
	if _, ok := r.Mechanism.(unitScaled); ok {
		return fmt.Sprintf("; ≤ %d rows per %s, sensitivity %s", r.RowsPerUnit, t.PrivacyUnit, laplaceSensitivity(r))
	}
	return fmt.Sprintf("; 1 row per %s chosen uniformly at random, so its one-row analysis holds per %s", t.PrivacyUnit, t.PrivacyUnit)
}

// laplaceSensitivity is the k-row sensitivity of a laplace release: k
// for a count, COUNT(DISTINCT col) included (k rows hold at most k
// distinct values; laplace.ReleaseUnitCount adds noise for k).
func laplaceSensitivity(r *Release) string {
	k := r.rows()
	if r.Stat.Column == nil || r.Stat.Kind == StatCount || r.Stat.Kind == StatCountDistinct {
		return fmt.Sprintf("%d", k)
	}
	b := columnBounds(r)
	switch r.Stat.Kind {
	case StatSum:
		return fmt.Sprintf("%d·max(|L|,|U|) = %.6g", k, float64(k)*b.Magnitude())
	case StatCenteredSum:
		return fmt.Sprintf("%d·(U-L)/2 = %.6g", k, float64(k)*b.HalfRange())
	default:
		return fmt.Sprintf("%d·((U-L)/2)² = %.6g", k, float64(k)*b.HalfRange()*b.HalfRange())
	}
}

// unitTotal describes the plan's privacy unit for EXPLAIN's total row.
func unitTotal(t *catalog.Table) string {
	if !t.HasPrivacyUnit() {
		return "; privacy unit: each row (a person with r rows is protected at r times ε)"
	}
	return fmt.Sprintf("; privacy unit: each %s (≤ %d rows per aggregate, ≤ %d groups)", t.PrivacyUnit, t.MaxRowsPerUnit, t.MaxGroupsPerUnit)
}
