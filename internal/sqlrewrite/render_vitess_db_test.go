package sqlrewrite_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestRenderVitessDistinctKeys: on MariaDB, the COUNT(DISTINCT c) that
// RenderVitess sends (over a hashed key of each value's class, which the
// shards sort as vtgate compares) counts what MariaDB's own COUNT(DISTINCT
// c) counts, for text under PAD SPACE and NO PAD, case-insensitive and
// binary collations (trailing spaces and tabs, accents, 'ß', characters
// beyond the BMP, the empty string, values longer than max_sort_length
// that share their first 1,500 bytes), binary strings and numbers, reals,
// decimals, dates and datetimes; and under utf8mb4_general_ci, the
// collation of the finding, for every BMP character alone and followed
// by a space or a tab. Its KeyCounts, grouped by the hash of the key
// first, returns the keys and counts Render's does. The key is a function
// of each row's value whatever it equates (the count's sensitivity is 1
// either way); this checks that it equates what the backend does.
func TestRenderVitessDistinctKeys(t *testing.T) {
	db := testdb.MySQL(t)
	long := strings.Repeat("x", 1500)
	texts := []string{"a", "A", "Å", "a ", "a  ", "a\t", "a\t ", "", " ", "ß", "ss", "s", "\U0001F600", "\U0001F601", "\uFFFD",
		long + "a", long + "b", long + "A", long + "a ", "b", "B ", "日本"}
	cols := []struct{ name, def string }{
		{"g", "VARCHAR(2000) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"},
		{"n", "VARCHAR(2000) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_nopad_ci"},
		{"bn", "VARCHAR(2000) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"},
		{"tx", "TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_uca1400_as_cs"},
		{"vb", "VARBINARY(2000)"},
		{"i", "BIGINT"}, {"r", "DOUBLE"}, {"m", "DECIMAL(10, 2)"}, {"d", "DATE"}, {"dt", "DATETIME(3)"},
	}
	numbers := []string{"0", "-1", "1", "9007199254740993", "-9223372036854775808"}
	reals := []string{"0.1e0 + 0.2e0", "0.3e0", "1e-300", "-0e0", "0", "1.5", "-1.5", "1e300"}
	decimals := []string{"0", "0.00", "1.5", "1.50", "-1.5", "99999999.99"}
	dates := []string{"'2020-01-01'", "'2020-01-02'", "'1000-01-01'", "'9999-12-31'"}
	times := []string{"'2020-01-01 00:00:00'", "'2020-01-01 00:00:00.001'", "'2020-01-01 00:00:00.000'", "'1999-12-31 23:59:59.999'"}
	var defs []string
	for _, c := range cols {
		defs = append(defs, c.name+" "+c.def)
	}
	exec := func(q string) {
		t.Helper()
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%.80s: %v", q, err)
		}
	}
	exec("CREATE TABLE vk (id INT PRIMARY KEY, " + strings.Join(defs, ", ") + ")")
	var rows []string
	pick := func(vals []string, k int) string {
		if k%(len(vals)+1) == len(vals) {
			return "NULL"
		}
		return vals[k%(len(vals)+1)]
	}
	for k := range 3 * len(texts) {
		text := "NULL"
		if k%(len(texts)+1) != len(texts) {
			text = "'" + strings.NewReplacer("\t", `\t`).Replace(texts[k%(len(texts)+1)]) + "'"
		}
		rows = append(rows, fmt.Sprintf("(%d, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)", k, text, text, text, text, text,
			pick(numbers, k), pick(reals, k), pick(decimals, k), pick(dates, k), pick(times, k)))
	}
	exec("INSERT INTO vk VALUES " + strings.Join(rows, ", "))

	run := func(f sqlrewrite.Fetch, vitess bool) ([]string, string) {
		t.Helper()
		query, args, err := sqlrewrite.Render(f, sqlrewrite.MySQL)
		if vitess {
			query, _, err = sqlrewrite.RenderVitess(f, sqlrewrite.MySQL)
			args = nil
		}
		if err != nil {
			t.Fatal(err)
		}
		rs, err := db.Query(query, args...)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		defer rs.Close()
		var out []string
		for rs.Next() {
			var a, b []byte
			if f.Keys != nil {
				err = rs.Scan(&a, &b)
			} else {
				err = rs.Scan(&b)
			}
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%q:%s", a, b))
		}
		if err := rs.Err(); err != nil {
			t.Fatal(err)
		}
		slices.Sort(out)
		return out, query
	}
	for _, c := range cols {
		f := sqlrewrite.Fetch{Table: "vk", Summary: []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountDistinctValues, Column: c.name}}}
		want, _ := run(f, false)
		got, query := run(f, true)
		if !strings.Contains(query, "SHA2(") {
			t.Errorf("%s: the Vitess fetch counts no hashed key: %s", c.name, query)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s (%s): COUNT(DISTINCT) for Vitess %v, MariaDB's %v", c.name, c.def, got, want)
		}
	}
	for _, c := range []string{"g", "n", "tx"} {
		f := sqlrewrite.Fetch{Table: "vk", Keys: &sqlrewrite.KeyCounts{Column: c}}
		want, _ := run(f, false)
		got, query := run(f, true)
		if !strings.Contains(query, "SHA2(") {
			t.Errorf("%s: the Vitess key counts group by no hashed key: %s", c, query)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: key counts for Vitess %q, MariaDB's %q", c, got, want)
		}
	}

	// Every BMP character c alone and as c + ' ' and c + '\t' (tabs and
	// other characters below the space sort before a padded end).
	exec("CREATE TABLE vb (id INT PRIMARY KEY, s VARCHAR(4) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci)")
	var batch []string
	id := 0
	flush := func() {
		if len(batch) > 0 {
			exec("INSERT INTO vb VALUES " + strings.Join(batch, ", "))
			batch = batch[:0]
		}
	}
	for c := rune(0); c < 0x10000; c++ {
		if c >= 0xD800 && c < 0xE000 {
			continue
		}
		for _, suffix := range []string{"", " ", "\t"} {
			batch = append(batch, fmt.Sprintf("(%d, X'%x')", id, string(c)+suffix))
			id++
		}
		if len(batch) >= 3000 {
			flush()
		}
	}
	flush()
	f := sqlrewrite.Fetch{Table: "vb", Summary: []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountDistinctValues, Column: "s"}}}
	want, _ := run(f, false)
	got, query := run(f, true)
	if !slices.Equal(got, want) {
		t.Errorf("every BMP character: COUNT(DISTINCT) for Vitess %v, MariaDB's %v", got, want)
	}
	// And the key is the pair's: no two classes share one.
	var pairs int
	pairsQuery := strings.Replace(query, "COUNT(DISTINCT ", "COUNT(DISTINCT `s`, ", 1)
	if err := db.QueryRow(pairsQuery).Scan(&pairs); err != nil {
		t.Fatalf("%s: %v", pairsQuery, err)
	}
	if fmt.Sprintf("%q:%d", []byte(nil), pairs) != got[0] {
		t.Errorf("every BMP character: %d (class, key) pairs, %s classes", pairs, got[0])
	}
}
