package sqlrewrite

import (
	"fmt"
	"strconv"
	"strings"
)

// UnitBound bounds what one privacy unit (person) contributes to a fetch:
// of the rows that pass the fetch's filter, at most MaxRows rows of each
// unit are read, chosen uniformly at random and independently of their
// values. Rows whose unit is NULL are read by no fetch.
//
// The choice is computed in the database by two window functions:
//
//	FROM (SELECT p.*, ROW_NUMBER() OVER (PARTITION BY u ORDER BY key(salt, u, pos)) AS rank
//	      FROM (SELECT t.*, ROW_NUMBER() OVER (PARTITION BY u ORDER BY c1, …, cn) AS pos
//	            FROM t WHERE u IS NOT NULL AND F) AS p) AS b
//	WHERE rank <= MaxRows [AND the fetch's own extra condition]
//
// pos numbers a unit's filtered rows 1..m in the order of Order (the
// table's declared columns), and key is a keyed hash of (Salt, unit, pos):
// MD5 on PostgreSQL and MariaDB, HMAC-SHA-256 on SQLite (a function the
// backend package registers, UnitKeyFunction). For a fresh secret salt the
// keys of positions 1..m behave as independent uniform draws, so the kept
// positions are a uniformly random MaxRows-subset of 1..m whatever values
// sit at those positions: which rows are kept does not depend on their
// values, only on the salt and on how many rows the unit has. Rows equal
// in every declared column may swap positions between queries; nothing
// the proxy reads can tell them apart. Every fetch of one statement uses
// the same salt and filter, so they all read the same bounded rows.
//
// Privacy does not rest on the hash: what a unit keeps depends only on its
// own rows (its partition) and the salt, so adding or removing one unit
// adds or removes at most MaxRows rows of the bounded table and changes
// nothing else. That is the neighbouring relation every mechanism's
// unit-level analysis starts from.
//
// Grouped fetches (GROUP BY, not built here): bound per group by adding
// the group key to the first PARTITION BY (MaxRows rows per unit per
// group), and keep at most max_groups_per_unit groups of each unit with a
// further ROW_NUMBER over the unit's distinct group keys ordered by the
// keyed hash of (salt, unit, group key); a unit then moves at most that
// many groups, so each group's release gets ε / max_groups_per_unit
// (catalog.Table.UnitGroupShare).
type UnitBound struct {
	// Column is the backend column identifying the unit.
	Column string
	// MaxRows is the most rows of one unit the fetch reads (≥ 1).
	MaxRows int64
	// Order are backend columns that order a unit's rows before the keyed
	// shuffle (the table's declared columns); at least one.
	Order []string
	// Salt is the statement's secret key: 32 hex digits from the crypto source.
	Salt string
}

// UnitKeyFunction is the SQLite function the backend registers for the
// keyed hash: unit_key(salt TEXT, unit ANY, pos INTEGER) → INTEGER.
const UnitKeyFunction = "dpproxy_unit_key"

// The names of the bounding's helper columns.
const (
	unitPosColumn  = "dpproxy_unit_pos"
	unitRankColumn = "dpproxy_unit_rank"
)

// unitSaltDigits is the length of UnitBound.Salt.
const unitSaltDigits = 32

// unitFrom renders the FROM clause of a unit-bounded fetch (see UnitBound)
// with the conditions conds (filter and predicate) inside and extra outside.
func (r *renderer) unitFrom(u *UnitBound, table string, conds []string, extra string) (string, error) {
	if u.MaxRows < 1 || len(u.Order) == 0 || len(u.Salt) != unitSaltDigits || strings.Trim(u.Salt, "0123456789abcdef") != "" {
		return "", fmt.Errorf("sqlrewrite: unit bound needs max rows ≥ 1, order columns and a %d-digit hex salt", unitSaltDigits)
	}
	unit, err := r.spec.ident(u.Column)
	if err != nil {
		return "", err
	}
	order := make([]string, len(u.Order))
	for i, c := range u.Order {
		if order[i], err = r.spec.ident(c); err != nil {
			return "", err
		}
	}
	pos, rank := r.spec.quote+unitPosColumn+r.spec.quote, r.spec.quote+unitRankColumn+r.spec.quote
	// The salt is hex digits only (checked above), so a literal is safe;
	// literals keep the placeholders in textual order.
	salt := "'" + u.Salt + "'"
	var key string
	switch r.spec.name {
	case "sqlite":
		key = UnitKeyFunction + "(" + salt + ", " + unit + ", " + pos + ")"
	case "postgres":
		key = "md5(" + salt + " || CAST(" + unit + " AS TEXT) || '/' || CAST(" + pos + " AS TEXT))"
	default:
		key = "MD5(CONCAT(" + salt + ", CAST(" + unit + " AS CHAR), '/', " + pos + "))"
	}
	where := append([]string{unit + " IS NOT NULL"}, conds...)
	inner := "SELECT dpproxy_t.*, ROW_NUMBER() OVER (PARTITION BY " + unit + " ORDER BY " + strings.Join(order, ", ") +
		") AS " + pos + " FROM " + table + " AS dpproxy_t WHERE " + strings.Join(where, " AND ")
	middle := "SELECT dpproxy_p.*, ROW_NUMBER() OVER (PARTITION BY " + unit + " ORDER BY " + key + ") AS " + rank +
		" FROM (" + inner + ") AS dpproxy_p"
	outer := " FROM (" + middle + ") AS " + unitAlias + " WHERE " + rank + " <= " + strconv.FormatInt(u.MaxRows, 10)
	if extra != "" {
		outer += " AND " + extra
	}
	return outer, nil
}

// unitAlias names the bounded rows in the outer FROM of a unit-bounded
// fetch: a fetch that qualifies a column (a window's ORDER BY) uses it.
const unitAlias = "dpproxy_b"
