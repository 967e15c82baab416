package catalog

// Partitioned tables.
//
// A table on the PostgreSQL backend may list its partitions (partitions:
// [visits_2023, visits_2024]): backend relations, each name or
// schema.name, that together hold exactly the rows of Source, each row in
// exactly one of them. The configuration is the source of truth: the
// proxy never asks the backend which partitions exist. Aggregate fetches
// are then computed per partition and combined (sqlrewrite's
// partitioned.go), so that a partition that is a postgres_fdw foreign
// table receives a whole aggregate, which postgres_fdw pushes to its
// server, instead of sending every row to the coordinator (PostgreSQL 15
// pushes no aggregate through a partitioned parent, and with
// enable_partitionwise_aggregate only partial aggregates, which
// postgres_fdw cannot ship).
//
// The privacy analysis is of a row of the union of the partitions: a
// list that leaves rows out answers about fewer rows, and one whose
// partitions overlap (a partition listed with its own sub-partition, or
// the parent itself) counts the shared rows twice, which doubles what one
// row can change. Listing them correctly is the operator's duty, as
// declaring Source is.
//
// Not on a table with a privacy unit: each release bounds the rows of a
// unit over the whole table (sqlrewrite.UnitBound), which no
// per-partition aggregate can do when a unit's rows span partitions.

import (
	"fmt"
	"strings"
)

// validatePartitions checks Partitions for a backend with the given driver.
func (t *Table) validatePartitions(f, driver string) error {
	if len(t.Partitions) == 0 {
		return nil
	}
	if driver != DriverPostgres {
		return invalid(f, "partitions are supported on the postgres backend only, not %s", driver)
	}
	if t.HasPrivacyUnit() {
		return invalid(f, "cannot be declared on a table with a privacy_unit: a unit's rows are bounded over the whole table, which per-partition aggregates cannot do")
	}
	seen := map[string]bool{}
	for j, p := range t.Partitions {
		pf := fmt.Sprintf("%s[%d]", f, j)
		if !sourceName.MatchString(p) {
			return invalid(pf, "must be name or schema.name, got %q", p)
		}
		if strings.EqualFold(p, t.Source) {
			return invalid(pf, "is the table's source %q itself: partitions hold disjoint parts of its rows", p)
		}
		if seen[strings.ToLower(p)] {
			return invalid(pf, "duplicate partition %q: each row must be read once", p)
		}
		seen[strings.ToLower(p)] = true
	}
	return nil
}
