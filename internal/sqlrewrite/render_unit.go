package sqlrewrite

import (
	"fmt"
	"strconv"
	"strings"
)

// UnitBound bounds what one privacy unit (person) contributes to a fetch:
// of the rows that pass the fetch's filter, at most MaxRows rows of each
// unit are read, chosen uniformly at random and independently of their
// values. Rows whose unit is NULL are read by no fetch, nor, on MySQL and
// MariaDB, rows whose unit's sort key is longer than MySQLSortLength
// (sortKeyFits): the database would not tell such units apart.
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
// Grouped fetches (GROUP BY over declared domains): with Groups set, the
// group of a row is its cell (Cells' index of every dimension, combined
// into one integer g(row)); rows in no cell (a NULL or undeclared key) are
// dropped inside, as no group reads them. The bound becomes
//
//	pos   = ROW_NUMBER() OVER (PARTITION BY u, g ORDER BY c1, …, cn)
//	rank  = ROW_NUMBER() OVER (PARTITION BY u, g ORDER BY key(salt, u, pos))
//	id    = MIN(spelling(u)) OVER (PARTITION BY u)
//	grank = DENSE_RANK() OVER (PARTITION BY u ORDER BY key(salt·"g", id, g), g)
//	WHERE rank <= MaxRows AND grank <= MaxGroups
//
// where id is the least byte-for-byte spelling of the unit's id, or on
// MySQL its weight string (unitID), one value on all its rows: hashing
// each row's own spelling ('bob' and 'BOB' of one unit under a
// case-insensitive collation) gave a group one rank per spelling, and
// the unit kept fewer groups than MaxGroups (an independent review). So
// each unit keeps at most MaxRows rows in each of at most MaxGroups of
// its groups: the groups by the keyed hash of (salt, unit, group), the
// rows within a group as above. Both choices depend on the unit's own
// rows' positions and group keys and on the salt, never on the measured
// values; ties of the hash are broken by g, so distinct groups get
// distinct ranks. Adding or removing a unit therefore moves at most
// MaxRows rows in each of at most MaxGroups groups, and each group's
// release gets ε / MaxGroups (catalog.Table.UnitGroupShare), or ε / n
// when the statement has fewer, n, public groups, since a unit's rows lie
// in at most n of them (planner.QueryPlan.GroupsPerUnit). Within are
// conditions applied after the bounding (one group's cell, for a fetch
// that reads one group of a grouped statement): they must not be inside,
// or every group would be bounded alone and a unit would keep all its
// groups.
//
// Private keys (partition selection on a unit table): with Key set
// instead of Groups, a row's group is its value of the Key column itself,
// whose values are not known before the fetch; rows whose key is absent
// (NULL, or for a numeric key a value that reads as no number) are
// dropped inside. The groups of a unit are numbered by their rank among
// the unit's distinct keys, and that number, not the value, is hashed:
//
//	pos   = ROW_NUMBER() OVER (PARTITION BY u, c ORDER BY c1, …, cn)
//	gpos  = DENSE_RANK() OVER (PARTITION BY u ORDER BY c)
//	rank  = ROW_NUMBER() OVER (PARTITION BY u, gpos ORDER BY key(salt, u, pos))
//	grank = DENSE_RANK() OVER (PARTITION BY u ORDER BY key(salt·"g", id, gpos), gpos)
//	WHERE rank <= MaxRows AND grank <= MaxGroups
//
// For a fresh salt the keys of gpos = 1..m are independent uniform draws,
// so the kept keys are a uniformly random MaxGroups-subset of the unit's
// m keys, whatever their values (text of any content or collation is
// never hashed: only integers are), exactly as the kept rows are a
// uniformly random subset of its rows. gpos numbers a text key's values
// character for character (exactText) and a numeric key's by their
// numbers (exactNumber), as KeyCounts groups them, so a
// unit keeps at most MaxGroups of the keys a KeyCounts fetch returns, and
// at most MaxRows rows of each. On MySQL and MariaDB a text key's rows
// whose key is longer than MySQLSortLength bytes are dropped inside
// (sortKeyFits): the DENSE_RANK would number two keys sharing their first
// MySQLSortLength bytes as one, and the unit's MaxRows rows of that number
// could count toward both. With MaxRows = 1, a
// KeyCounts fetch counts the distinct units that kept each key: one
// unit adds at most 1 to each of at most MaxGroups keys' counts.
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
	// Groups are the group key dimensions of a grouped statement (empty:
	// one group), and MaxGroups the most groups of one unit read (≥ 1 with
	// Groups).
	Groups    []CellDim
	MaxGroups int64
	// Key is the backend column whose values are the groups of a private
	// key (partition selection), instead of Groups; KeyNumeric is set when
	// it is an integer column (its values are read as numbers). MaxGroups
	// bounds the keys of one unit (≥ 1 with Key).
	Key        string
	KeyNumeric bool
	// Within are conditions applied to the bounded rows (one group's cell).
	Within []Condition
}

// UnitKeyFunction is the SQLite function the backend registers for the
// keyed hash: unit_key(salt TEXT, unit ANY, pos INTEGER) → INTEGER.
const UnitKeyFunction = "dpproxy_unit_key"

// The names of the bounding's helper columns.
const (
	unitPosColumn       = "dpproxy_unit_pos"
	unitRankColumn      = "dpproxy_unit_rank"
	unitGroupColumn     = "dpproxy_unit_group"
	unitGroupRankColumn = "dpproxy_unit_group_rank"
	unitIDColumn        = "dpproxy_unit_id"
)

// maxUnitGroupCells caps the product of the dimensions' cell counts, so the
// combined group index is an exact integer on every backend.
const maxUnitGroupCells = 1 << 50

// unitSaltDigits is the length of UnitBound.Salt.
const unitSaltDigits = 32

// unitFrom renders the FROM clause of a unit-bounded fetch (see UnitBound)
// over table (rendered, with its derived columns) with the conditions
// conds (filter and predicate, rendered) inside, and Within and extra
// outside.
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
	q := func(name string) string { return r.spec.quote + name + r.spec.quote }
	pos, rank := q(unitPosColumn), q(unitRankColumn)
	// The salt is hex digits only (checked above), so a literal is safe.
	key := r.unitKey("'"+u.Salt+"'", r.unitText(unit), pos)
	// The group key is named by the inner select, partitions it and is
	// tested in its WHERE: one rendering in three places (its bind
	// arguments are bound at each, Render).
	partition, group, groupKey := unit, "", ""
	grouped := len(u.Groups) > 0 || u.Key != ""
	var present string // the private key's presence, inside
	var keyFits string // its sort key within MySQLSortLength, inside
	if u.Key != "" {
		if len(u.Groups) > 0 || u.MaxGroups < 1 {
			return "", fmt.Errorf("sqlrewrite: a unit bound by a private key needs max groups ≥ 1 and no group dimensions")
		}
		c, err := r.column(u.Key)
		if err != nil {
			return "", err
		}
		// The keys KeyCounts counts: a text key's spellings, a numeric
		// key's numbers as exactNumber reads them. Grouped by the column
		// itself, a column declared integer but of type text in the
		// backend (MySQL and MariaDB read it as numbers) made '5' and
		// '05' two groups of one unit, both counted toward the key 5.
		key := r.exactText(c)
		present = c + " IS NOT NULL"
		if u.KeyNumeric {
			key, present = r.exactNumber(c), r.readable(c)
		} else {
			keyFits = r.sortKeyFits(key, true)
		}
		group = "DENSE_RANK() OVER (PARTITION BY " + unit + " ORDER BY " + key + ") AS " + q(unitGroupColumn) + ", "
		partition = unit + ", " + key
	} else if len(u.Groups) > 0 {
		if u.MaxGroups < 1 {
			return "", fmt.Errorf("sqlrewrite: a grouped unit bound needs max groups ≥ 1")
		}
		if groupKey, err = r.unitGroupKey(u.Groups); err != nil {
			return "", err
		}
		group = groupKey + " AS " + q(unitGroupColumn) + ", "
		partition = unit + ", " + groupKey
	}
	where := []string{unit + " IS NOT NULL"}
	if fits := r.sortKeyFits(unit, false); fits != "" {
		where = append(where, fits)
	}
	where = append(where, conds...)
	if groupKey != "" {
		where = append(where, groupKey+" IS NOT NULL")
	}
	if present != "" {
		where = append(where, present)
	}
	if keyFits != "" {
		where = append(where, keyFits)
	}
	// The unit's id as the group choice hashes it, the same on all its
	// rows (see UnitBound): a column of the inner select, or on MySQL an
	// expression of the row.
	id, perPartition := r.unitID(unit)
	if grouped && perPartition {
		group += "MIN(" + id + ") OVER (PARTITION BY " + unit + ") AS " + q(unitIDColumn) + ", "
		id = q(unitIDColumn)
	}
	inner := "SELECT dpproxy_t.*, " + group + "ROW_NUMBER() OVER (PARTITION BY " + partition + " ORDER BY " + strings.Join(order, ", ") +
		") AS " + pos + " FROM " + table + " AS dpproxy_t WHERE " + joinConditions(where, " AND ")
	middlePartition := unit
	if grouped {
		middlePartition += ", " + q(unitGroupColumn)
	}
	middleCols := "dpproxy_p.*, ROW_NUMBER() OVER (PARTITION BY " + middlePartition + " ORDER BY " + key + ") AS " + rank
	keep := rank + " <= " + strconv.FormatInt(u.MaxRows, 10)
	if grouped {
		g, groupRank := q(unitGroupColumn), q(unitGroupRankColumn)
		middleCols += ", DENSE_RANK() OVER (PARTITION BY " + unit + " ORDER BY " + r.unitKey("'"+u.Salt+"g'", id, g) + ", " + g + ") AS " + groupRank
		keep += " AND " + groupRank + " <= " + strconv.FormatInt(u.MaxGroups, 10)
	}
	middle := "SELECT " + middleCols + " FROM (" + inner + ") AS dpproxy_p"
	outer := " FROM (" + middle + ") AS " + unitAlias + " WHERE " + keep
	for _, c := range u.Within {
		s, err := r.condition(c)
		if err != nil {
			return "", err
		}
		outer += " AND " + s
	}
	if extra != "" {
		outer += " AND " + extra
	}
	return outer, nil
}

// unitKey renders the keyed hash of (salt, id, n) for a unit's id as
// unitText or unitID render it and an integer expression n:
// HMAC-SHA-256 on SQLite (UnitKeyFunction), MD5 elsewhere.
func (r *renderer) unitKey(salt, id, n string) string {
	switch r.spec.name {
	case "sqlite":
		return UnitKeyFunction + "(" + salt + ", " + id + ", " + n + ")"
	case "postgres":
		return "md5(" + salt + " || " + id + " || '/' || CAST(" + n + " AS TEXT))"
	default:
		return "MD5(CONCAT(" + salt + ", " + id + ", '/', " + n + "))"
	}
}

// unitText renders a unit column as the text unitKey hashes for a row.
func (r *renderer) unitText(unit string) string {
	switch r.spec.name {
	case "sqlite":
		return unit
	case "postgres":
		return "CAST(" + unit + " AS TEXT)"
	default:
		return "CAST(" + unit + " AS CHAR)"
	}
}

// unitID renders a unit column as what the group choice hashes, one
// value on all the rows of a unit where the id itself may vary ('bob',
// 'BOB' and 'bob ' of one unit under a case-insensitive collation). On
// PostgreSQL and SQLite it is a value that orders the spellings byte
// for byte (the text in the "C" collation, the column in the BINARY
// collation), and perPartition says the caller takes its least over the
// unit's partition (MIN OVER (PARTITION BY unit), which both compute once
// a partition). MariaDB computes such a MIN once a row, over the whole
// partition (a person of 50,000 rows took minutes), so on MySQL it is a
// function of the row: the weight string of the id without its trailing
// spaces, the key the collation compares (for a binary value, a number
// or a date, the value itself). Two spellings that differ in trailing
// characters weighing as a space other than U+0020 (U+00A0 under a UCA
// collation) still hash apart: the group then takes two ranks, and the
// unit keeps fewer groups, never more; and under a NO PAD collation
// 'bob' and 'bob ', two units, hash alike, so they choose among the
// same groups alike, each still by its own rows and the salt.
func (r *renderer) unitID(unit string) (id string, perPartition bool) {
	switch r.spec.name {
	case "sqlite":
		return "(" + unit + " COLLATE BINARY)", true
	case "postgres":
		return "(CAST(" + unit + ` AS TEXT) COLLATE "C")`, true
	default:
		return "IF(COLLATION(" + unit + ") = 'binary', CAST(" + unit + " AS BINARY), WEIGHT_STRING(TRIM(TRAILING ' ' FROM " + unit + ")))", false
	}
}

// MySQLSortLength is the max_sort_length, in bytes, every MySQL and
// MariaDB fetch runs with (the backend sets it). Their sorts, and so the
// window functions' PARTITION BY and ORDER BY, compare a string on the
// first MySQLSortLength bytes of its sort key (its collation's weight
// string) only, while MariaDB tells a raw column's partitions apart on
// the whole value: two ids of one length past that which share those
// bytes had their rows interleaved in the sort, and each change of
// value started a new partition, so one person was bounded as many
// (found by an independent review, where one person's key was released
// and COUNT(*) tripled). Expressions (a text key) are compared on their
// cut sort keys instead, so two keys sharing those bytes were one group
// of the unit, whose kept rows then spanned both keys.
const MySQLSortLength = 16384

// sortKeyFits renders, on MySQL, the condition that expr's sort key is
// at most MySQLSortLength bytes, so that the window functions compare
// it whole. The sort key of a string is its weight string in its
// collation (WEIGHT_STRING: one byte a character for latin1, two for
// utf8mb4_general_ci, more for UCA collations), of a binary string its
// bytes; numbers and dates have short sort keys that are never cut, and
// a NULL WEIGHT_STRING. So the condition tests, for a binary expr
// (exactText's keys), its length, and otherwise, for a value of any type
// (a person id), the larger of its length in bytes and its weight
// string's, or its own length where its collation is binary (binary
// strings, numbers, dates). The weight string alone was not enough: an id
// of 7,000 three-byte characters under utf8mb4_general_ci has a weight
// string of 14,002 bytes, yet MariaDB split its 21,001 bytes into many
// partitions (found by an independent review). Lengths are OCTET_LENGTH,
// bytes in every sql_mode: MariaDB's ORACLE mode makes LENGTH count
// characters, which let those ids through (an independent review; the
// backend pins the sql_mode too, backend.MySQLSQLMode). A row whose
// value fails the condition is read by no fetch, as a row whose unit is
// NULL: the condition is on the row's own value, so it drops the same
// rows whatever the other rows hold. Elsewhere strings are compared
// whole: no condition ("").
func (r *renderer) sortKeyFits(expr string, binary bool) string {
	limit := " <= " + strconv.Itoa(MySQLSortLength)
	switch {
	case r.dialect != MySQL:
		return ""
	case binary:
		return "OCTET_LENGTH(" + expr + ")" + limit
	}
	return "IF(COLLATION(" + expr + ") = 'binary', OCTET_LENGTH(" + expr + "), GREATEST(OCTET_LENGTH(" + expr + "), OCTET_LENGTH(WEIGHT_STRING(" + expr + "))))" + limit
}

// unitGroupKey renders a row's group as one integer: the cell indices of
// the dimensions in mixed radix (k_1 + n_1·(k_2 + n_2·(…))), NULL when any
// is NULL (the row is in no group).
func (r *renderer) unitGroupKey(dims []CellDim) (string, error) {
	expr := ""
	cells := int64(1)
	for i := len(dims) - 1; i >= 0; i-- {
		k, err := r.cellKey(dims[i])
		if err != nil {
			return "", err
		}
		n := dims[i].Size()
		if n < 1 {
			return "", fmt.Errorf("sqlrewrite: a unit bound's group dimension has no cells")
		}
		if cells > maxUnitGroupCells/n {
			return "", fmt.Errorf("sqlrewrite: more than 2^50 groups for a unit bound")
		}
		cells *= n
		if expr == "" {
			expr = "(" + k + ")"
		} else {
			expr = "((" + k + ") + " + strconv.FormatInt(n, 10) + " * " + expr + ")"
		}
	}
	return expr, nil
}

// unitAlias names the bounded rows in the outer FROM of a unit-bounded
// fetch: a fetch that qualifies a column (a window's ORDER BY) uses it.
const unitAlias = "dpproxy_b"
