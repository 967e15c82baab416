package sqlrewrite_test

import (
	"database/sql"
	"fmt"
	"slices"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech/privtest"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// hostileKeys are text group keys that break naive SQL: quotes, a comment,
// a backslash, LIKE wildcards, the empty string, the word NULL, accents,
// CJK and an emoji. No two are equal under MariaDB's default utf8mb4
// collation (case- and accent-insensitive, all emoji alike), so every
// backend sees the same groups.
var hostileKeys = []string{"plain", "O'Brien", "x''y;--", "back\\slash", "100%_", "", "NULL", "Zürich", "東京", "smile 😀"}

// textKeyRow is one row of the text-key table: unit u (0: NULL), key
// hostileKeys[key] (-1: NULL), and x unique to the row.
type textKeyRow struct {
	u   int64
	key int
	x   float64
}

// textKeyRows: unit u (1..24) has 1 + u%6 distinct keys, key i of it with
// 1 + (u+i)%4 rows (unit 7: 6 keys of 10 rows); every third unit also has
// two rows with a NULL key; four rows have a NULL unit. x = 1000·u + j.
func textKeyRows() []textKeyRow {
	var rows []textKeyRow
	for u := int64(1); u <= 24; u++ {
		keys, per := 1+int(u%6), func(i int) int { return 1 + (int(u)+i)%4 }
		if u == 7 {
			keys, per = 6, func(int) int { return 10 }
		}
		j := 0
		add := func(key int) {
			rows = append(rows, textKeyRow{u: u, key: key, x: float64(1000*u) + float64(j)})
			j++
		}
		for i := range keys {
			for range per(i) {
				add((int(u)*3 + i) % len(hostileKeys))
			}
		}
		if u%3 == 0 {
			add(-1)
			add(-1)
		}
	}
	for j := range 4 {
		rows = append(rows, textKeyRow{key: j % len(hostileKeys), x: float64(-1 - j)})
	}
	return rows
}

func loadTextKeyRows(t *testing.T, db *sql.DB, d sqlrewrite.Dialect, double, text, table string, rows []textKeyRow) {
	t.Helper()
	if _, err := db.Exec(fmt.Sprintf("CREATE TABLE %s (u INTEGER, x %s, s %s)", table, double, text)); err != nil {
		t.Fatal(err)
	}
	insert := "INSERT INTO " + table + " (u, x, s) VALUES (?, ?, ?)"
	if d == sqlrewrite.PostgreSQL {
		insert = "INSERT INTO " + table + " (u, x, s) VALUES ($1, $2, $3)"
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		var u, s any
		if r.u != 0 {
			u = r.u
		}
		if r.key >= 0 {
			s = hostileKeys[r.key]
		}
		if _, err := tx.Exec(insert, u, r.x, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// keyBound bounds units by the private key s: k rows per kept key, g keys.
func keyBound(k, g int64, salt int) *sqlrewrite.UnitBound {
	return &sqlrewrite.UnitBound{Column: "u", MaxRows: k, Order: []string{"x", "s"}, Salt: fmt.Sprintf("%032x", salt*104729+3),
		Key: "s", MaxGroups: g}
}

// keyCountsOf runs a KeyCounts fetch of s and returns value → count.
func keyCountsOf(t *testing.T, db *sql.DB, d sqlrewrite.Dialect, table string, u *sqlrewrite.UnitBound) map[string]int64 {
	t.Helper()
	f := sqlrewrite.Fetch{Table: table, Unit: u, Keys: &sqlrewrite.KeyCounts{Column: "s"}}
	q, args, err := sqlrewrite.Render(f, d)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var raw any
		var n int64
		if err := rows.Scan(&raw, &n); err != nil {
			t.Fatal(err)
		}
		var s string
		switch v := raw.(type) {
		case string:
			s = v
		case []byte:
			s = string(v)
		default:
			t.Fatalf("key %#v of type %T", raw, raw)
		}
		if _, dup := out[s]; dup {
			t.Fatalf("key %q twice", s)
		}
		out[s] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTextKeyUnitBoundingOnDatabases checks on SQLite, PostgreSQL and
// MariaDB that text group keys, hostile ones included (quotes, a comment,
// a backslash, wildcards, the empty string, unicode, NULL), are bounded
// per unit: (1) by a private key (partition selection, UnitBound.Key):
// every unit keeps exactly min(g, its keys) distinct keys and exactly
// min(k, its rows there) rows of each kept key, no row with a NULL key or
// a NULL unit; the KeyCounts fetch at k = 1 returns every kept key
// byte-exact with the number of distinct units that kept it; removing one
// unit leaves every other unit's rows as they were; (2) by a declared
// text domain (values: with hostile values and null, UnitBound.Groups):
// the same bounds over the declared groups, rows with undeclared values
// in no group, NULL in the null group, and Within reads one hostile
// group of the same bounded rows.
func TestTextKeyUnitBoundingOnDatabases(t *testing.T) {
	for _, b := range []struct {
		name         string
		dialect      sqlrewrite.Dialect
		open         func(testing.TB) *sql.DB
		double, text string
	}{
		{"sqlite", sqlrewrite.SQLite, testdb.SQLite, "REAL", "TEXT"},
		{"postgres", sqlrewrite.PostgreSQL, testdb.Postgres, "DOUBLE PRECISION", "TEXT"},
		{"mysql", sqlrewrite.MySQL, testdb.MySQL, "DOUBLE", "VARCHAR(64)"},
	} {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			rows := textKeyRows()
			loadTextKeyRows(t, db, b.dialect, b.double, b.text, "dp_tkeys", rows)
			var without []textKeyRow
			for _, r := range rows {
				if r.u != 7 {
					without = append(without, r)
				}
			}
			loadTextKeyRows(t, db, b.dialect, b.double, b.text, "dp_tkeys_neighbour", without)
			byX := map[float64]textKeyRow{}
			type cell struct {
				unit int64
				key  int
			}
			available := map[cell]int64{}
			keysOf := map[int64]map[int]bool{}
			for _, r := range rows {
				byX[r.x] = r
				if r.u == 0 || r.key < 0 {
					continue
				}
				available[cell{r.u, r.key}]++
				if keysOf[r.u] == nil {
					keysOf[r.u] = map[int]bool{}
				}
				keysOf[r.u][r.key] = true
			}
			// (1) The private key.
			for _, k := range []int64{1, 3, 20} {
				for _, g := range []int64{1, 2, 4} {
					for salt := range 2 {
						u := keyBound(k, g, salt)
						kept := keptValues(t, db, b.dialect, "dp_tkeys", nil, u)
						perCell := map[cell]int64{}
						keptKeys := map[int64]map[int]bool{}
						for _, x := range kept {
							r, ok := byX[x]
							if !ok || r.u == 0 || r.key < 0 {
								t.Fatalf("k=%d g=%d: kept row %v (unit %d, key %d)", k, g, x, r.u, r.key)
							}
							perCell[cell{r.u, r.key}]++
							if keptKeys[r.u] == nil {
								keptKeys[r.u] = map[int]bool{}
							}
							keptKeys[r.u][r.key] = true
						}
						for unit, keys := range keysOf {
							if int64(len(keptKeys[unit])) != min(g, int64(len(keys))) {
								t.Errorf("k=%d g=%d salt %d: unit %d kept %d of its %d keys", k, g, salt, unit, len(keptKeys[unit]), len(keys))
							}
						}
						for c, n := range perCell {
							if n != min(k, available[c]) {
								t.Errorf("k=%d g=%d salt %d: unit %d key %q kept %d of %d rows", k, g, salt, c.unit, hostileKeys[c.key], n, available[c])
							}
						}
						// The selection's counts: distinct units per kept key.
						units := map[string]int64{}
						for _, keys := range keptKeys {
							for key := range keys {
								units[hostileKeys[key]]++
							}
						}
						one := *u
						one.MaxRows = 1
						if got := keyCountsOf(t, db, b.dialect, "dp_tkeys", &one); fmt.Sprint(got) != fmt.Sprint(units) {
							t.Errorf("k=%d g=%d salt %d: key counts %v, want the kept units per key %v", k, g, salt, got, units)
						}
						neighbour := keptValues(t, db, b.dialect, "dp_tkeys_neighbour", nil, u)
						rest := slices.DeleteFunc(slices.Clone(kept), func(x float64) bool { return byX[x].u == 7 })
						if !slices.Equal(rest, neighbour) {
							t.Errorf("k=%d g=%d salt %d: removing unit 7 changed other units' rows", k, g, salt)
						}
					}
				}
			}
			// (2) A declared text domain: five hostile values and null; the
			// other values are in no group.
			declared := []int{1, 2, 3, 5, 8}
			dim := sqlrewrite.CellDim{Column: "s"}
			inDomain := map[int]bool{-1: true}
			for _, i := range declared {
				dim.Values = append(dim.Values, sqlrewrite.Value{Str: hostileKeys[i], IsText: true})
				inDomain[i] = true
			}
			dim.Values = append(dim.Values, sqlrewrite.Value{Null: true, IsText: true})
			groupsOf := map[int64]map[int]bool{}
			availableD := map[cell]int64{}
			for _, r := range rows {
				if r.u == 0 || !inDomain[r.key] {
					continue
				}
				availableD[cell{r.u, r.key}]++
				if groupsOf[r.u] == nil {
					groupsOf[r.u] = map[int]bool{}
				}
				groupsOf[r.u][r.key] = true
			}
			for _, k := range []int64{1, 3} {
				for _, g := range []int64{1, 2} {
					u := unitBound(k, 5)
					u.Order = []string{"x", "s"}
					u.Groups, u.MaxGroups = []sqlrewrite.CellDim{dim}, g
					kept := keptValues(t, db, b.dialect, "dp_tkeys", nil, u)
					perCell := map[cell]int64{}
					keptGroups := map[int64]map[int]bool{}
					for _, x := range kept {
						r := byX[x]
						if r.u == 0 || !inDomain[r.key] {
							t.Fatalf("declared k=%d g=%d: kept row %v (unit %d, key %d) outside the domain", k, g, x, r.u, r.key)
						}
						perCell[cell{r.u, r.key}]++
						if keptGroups[r.u] == nil {
							keptGroups[r.u] = map[int]bool{}
						}
						keptGroups[r.u][r.key] = true
					}
					for unit, groups := range groupsOf {
						if int64(len(keptGroups[unit])) != min(g, int64(len(groups))) {
							t.Errorf("declared k=%d g=%d: unit %d kept %d of its %d groups", k, g, unit, len(keptGroups[unit]), len(groups))
						}
					}
					for c, n := range perCell {
						if n != min(k, availableD[c]) {
							t.Errorf("declared k=%d g=%d: unit %d group %d kept %d of %d rows", k, g, c.unit, c.key, n, availableD[c])
						}
					}
					// Within one hostile group ("x''y;--") and the null group.
					for _, key := range []int{2, -1} {
						within := *u
						if key < 0 {
							within.Within = []sqlrewrite.Condition{{Column: "s", IsNull: true, Text: true}}
						} else {
							within.Within = []sqlrewrite.Condition{{Column: "s", In: []sqlrewrite.Value{{Str: hostileKeys[key], IsText: true}}}}
						}
						got := keptValues(t, db, b.dialect, "dp_tkeys", nil, &within)
						want := slices.DeleteFunc(slices.Clone(kept), func(x float64) bool { return byX[x].key != key })
						if len(want) == 0 || !slices.Equal(got, want) {
							t.Errorf("declared k=%d g=%d: Within key %d read %d rows, the bound keeps %d there", k, g, key, len(got), len(want))
						}
					}
				}
			}
		})
	}
}

// TestPrivateKeyChoiceIsUniform: over 600 salts with g = 1, each of unit
// 7's six keys (hostile text, 10 rows each) is the kept one with
// probability 1/6 whatever its value: a chi-square test at false-rejection
// rate 1e-6 on SQLite. A value-ordered choice (always the smallest key)
// fails the same test.
func TestPrivateKeyChoiceIsUniform(t *testing.T) {
	db := testdb.SQLite(t)
	loadTextKeyRows(t, db, sqlrewrite.SQLite, "REAL", "TEXT", "dp_tkeys", textKeyRows())
	filter := []sqlrewrite.Condition{{Column: "u", In: []sqlrewrite.Value{{Num: 7}}}}
	rows := textKeyRows()
	byX := map[float64]int{}
	var keys []int
	for _, r := range rows {
		byX[r.x] = r.key
		if r.u == 7 && !slices.Contains(keys, r.key) {
			keys = append(keys, r.key)
		}
	}
	counts := make([]int, len(keys))
	const salts = 600
	for s := range salts {
		kept := keptValues(t, db, sqlrewrite.SQLite, "dp_tkeys", filter, keyBound(1, 1, s+10))
		if len(kept) != 1 {
			t.Fatalf("kept %v", kept)
		}
		counts[slices.Index(keys, byX[kept[0]])]++
	}
	probs := make([]float64, len(keys))
	for i := range probs {
		probs[i] = 1 / float64(len(keys))
	}
	stat, critical, err := privtest.ChiSquare(counts, probs, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	if stat > critical {
		t.Errorf("kept keys not uniform: χ² = %v > %v; counts %v", stat, critical, counts)
	}
	t.Logf("χ² = %.1f (critical %.1f at 1e-6); counts %v over keys %v", stat, critical, counts, keys)
	biased := make([]int, len(keys))
	biased[0] = salts
	if stat, critical, _ := privtest.ChiSquare(biased, probs, 1e-6); stat <= critical {
		t.Errorf("the test cannot see a value-ordered choice")
	}
}

// TestNumericKeyUnitBoundingOnDatabases: an integer private key (f, three
// values per unit, NULL units excluded) bounded per unit on SQLite,
// PostgreSQL and MariaDB: the KeyCounts fetch at k = 1 returns each value
// with the number of units that kept it, and every unit keeps exactly
// min(g, its values), so the counts add up to Σ min(g, values of the unit).
func TestNumericKeyUnitBoundingOnDatabases(t *testing.T) {
	for _, b := range doubleBackends {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			rows := unitRows()
			loadUnitRows(t, db, b.dialect, b.double, "dp_nkeys", rows)
			valuesOf := map[int64]map[float64]bool{}
			for _, r := range rows {
				if r.u == 0 {
					continue
				}
				if valuesOf[r.u] == nil {
					valuesOf[r.u] = map[float64]bool{}
				}
				valuesOf[r.u][r.f] = true
			}
			for _, g := range []int64{1, 2, 3} {
				var want int64
				perValue := map[float64]int64{}
				for _, vs := range valuesOf {
					want += min(g, int64(len(vs)))
					for v := range vs {
						perValue[v]++
					}
				}
				u := &sqlrewrite.UnitBound{Column: "u", MaxRows: 1, Order: []string{"x", "f"}, Salt: fmt.Sprintf("%032x", 77+g),
					Key: "f", KeyNumeric: true, MaxGroups: g}
				f := sqlrewrite.Fetch{Table: "dp_nkeys", Unit: u, Keys: &sqlrewrite.KeyCounts{Column: "f", Numeric: true}}
				q, args, err := sqlrewrite.Render(f, b.dialect)
				if err != nil {
					t.Fatal(err)
				}
				res, err := db.Query(q, args...)
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				var total int64
				for res.Next() {
					var v float64
					var n int64
					if err := res.Scan(&v, &n); err != nil {
						t.Fatal(err)
					}
					if n > perValue[v] || n < 1 {
						t.Errorf("g=%d: value %v counted %d units, %d have it", g, v, n, perValue[v])
					}
					total += n
				}
				res.Close()
				if total != want {
					t.Errorf("g=%d: counts add up to %d, want Σ min(g, values) = %d", g, total, want)
				}
			}
		})
	}
}

// TestTextKeyUnitBoundingCountsOnePerUnitPerKey: on MariaDB a unit adds at
// most 1 to each key of a KeyCounts fetch at k = 1 even where different
// stored values become one key: in a VARBINARY column, bytes that are not
// utf8mb4 become '?' (X'61FF', X'61FE' and 'a?' are all the key "a?"). The
// bounding ranked the unit's keys by the stored values, and one unit with
// the three counted 3 towards "a?".
func TestTextKeyUnitBoundingCountsOnePerUnitPerKey(t *testing.T) {
	db := testdb.MySQL(t)
	for _, q := range []string{
		"CREATE TABLE vb (u INTEGER, x INTEGER, s VARBINARY(8))",
		"INSERT INTO vb (u, x, s) VALUES (1, 1, X'61FF'), (1, 2, X'61FE'), (1, 3, 'a?'), (1, 4, 'b'), (2, 1, X'61FF'), (3, 1, 'b')",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for salt := range 20 {
		counts := keyCountsOf(t, db, sqlrewrite.MySQL, "vb", keyBound(1, 4, salt))
		if counts["a?"] != 2 || counts["b"] != 2 || len(counts) != 2 {
			t.Fatalf("salt %d: key counts %v, want a? and b from 2 units each", salt, counts)
		}
	}
}
