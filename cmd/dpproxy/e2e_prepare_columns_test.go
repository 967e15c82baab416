package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
)

// preparedColumnStatements are prepared statements whose result columns
// COM_STMT_PREPARE announces, with their arguments and the MySQL type
// names of their columns.
var preparedColumnStatements = []struct {
	sql   string
	args  []any
	types string
}{
	{"SELECT COUNT(*) FROM pums", nil, "BIGINT"},
	{"SELECT race, COUNT(*), AVG(income) FROM pums WHERE age > ? GROUP BY race", []any{30}, "BIGINT BIGINT DOUBLE"},
	{"SELECT sex, COUNT(*) AS n FROM pums WHERE age BETWEEN ? AND ? GROUP BY sex ORDER BY n DESC LIMIT ?", []any{20, 60, 5}, "BIGINT BIGINT"},
	{"SELECT FLOOR(age / 2.5) * 2.5 AS b, COUNT(*) FROM pums GROUP BY b", nil, "DOUBLE BIGINT"},
	{"SELECT MEDIAN(income), IF(AVG(income) > ?, 'high', 'low') AS level FROM pums", []any{1000}, ""},
	{"SELECT MEDIAN(income), IF(AVG(income) > 1000, 'high', 'low') AS level FROM pums WHERE ? IS NULL OR sex = ?", []any{nil, nil}, "DOUBLE VARCHAR"},
	{"SELECT COUNT(*), AVG(m) FROM (SELECT race, IQR(income) AS m FROM pums WHERE income < ? GROUP BY race) AS t", []any{100000.5}, "BIGINT DOUBLE"},
	// Zero-row probes and other catalog SELECTs (before, none announced
	// its columns: 0 after prepare, 6 after execute for the first).
	{"SELECT * FROM pums WHERE 1=0", nil, "BIGINT BIGINT BIGINT BIGINT DOUBLE BIGINT"},
	{"SELECT age, income FROM pums LIMIT 0", nil, "BIGINT DOUBLE"},
	{"SELECT race, COUNT(*) FROM pums GROUP BY race LIMIT 0", nil, "BIGINT BIGINT"},
	{"SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?", []any{"dpproxy", "pums"}, "VARCHAR VARCHAR"},
}

// TestPreparedStatementColumns: COM_STMT_PREPARE of a private SELECT
// announces its result columns, each definition (name, type, length,
// flags, collation) byte for byte the one its execution's result set
// sends, so that clients asking a prepared statement for its metadata
// before executing it (Connector/J's getMetaData(), BI tools, IDEs) get
// the answer's, zero-row probes and catalog SELECTs included; a statement
// whose columns depend on an argument announces none, as before. Preparing spends nothing. Through go-mysql's client
// (which exposes the announced definitions) and go-sql-driver.
func TestPreparedStatementColumns(t *testing.T) {
	p := startProxy(t, "", nil)
	conn, err := client.Connect(p.addr, "demo", "demo", "dpproxy")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	remaining := func() string {
		r, err := conn.Execute("SELECT dp_remaining_epsilon()")
		if err != nil {
			t.Fatal(err)
		}
		v, _ := r.GetString(0, 0)
		return v
	}
	before := remaining()
	var stmts []*client.Stmt
	for _, s := range preparedColumnStatements {
		st, err := conn.Prepare(s.sql)
		if err != nil {
			t.Fatalf("%s: %v", s.sql, err)
		}
		stmts = append(stmts, st)
		if want := len(strings.Fields(s.types)); st.ColumnNum() != want {
			t.Errorf("%s: prepare announced %d columns, want %d", s.sql, st.ColumnNum(), want)
		}
	}
	if after := remaining(); after != before {
		t.Fatalf("preparing spent budget: remaining epsilon %s, then %s", before, after)
	}
	for i, s := range preparedColumnStatements {
		st := stmts[i]
		r, err := st.Execute(s.args...)
		if err != nil {
			t.Fatalf("%s: %v", s.sql, err)
		}
		if st.ColumnNum() == 0 {
			r.Close()
			continue
		}
		if len(r.Fields) != st.ColumnNum() {
			t.Errorf("%s: executed %d columns, announced %d", s.sql, len(r.Fields), st.ColumnNum())
		}
		for j := range min(len(r.Fields), st.ColumnNum()) {
			if got, want := st.RawColumnFields[j], r.Fields[j].Dump(); !bytes.Equal(got, want) {
				t.Errorf("%s: column %d announced %q, executed %q", s.sql, j, got, want)
			}
		}
		r.Close()
	}

	// go-sql-driver prepares on the server, and its column types are the
	// announced ones.
	db := p.connect(t, "demo", "demo")
	for _, s := range preparedColumnStatements {
		if s.types == "" {
			continue
		}
		st, err := db.PrepareContext(t.Context(), s.sql)
		if err != nil {
			t.Fatalf("%s: %v", s.sql, err)
		}
		rows, err := st.QueryContext(t.Context(), s.args...)
		if err != nil {
			t.Fatalf("%s: %v", s.sql, err)
		}
		cts, err := rows.ColumnTypes()
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, ct := range cts {
			names = append(names, ct.DatabaseTypeName())
		}
		if got := strings.Join(names, " "); got != s.types {
			t.Errorf("%s: column types %s, want %s", s.sql, got, s.types)
		}
		for rows.Next() {
		}
		if err := rows.Err(); err != nil {
			t.Errorf("%s: %v", s.sql, err)
		}
		rows.Close()
		st.Close()
	}
}
