package budget

import (
	"context"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestPostgresBatchPlannedOnce: on a connection that ran Dialect.Session,
// the prepared batch statement is planned once (a generic plan), not at
// every execution, which took PostgreSQL longer than running it.
func TestPostgresBatchPlannedOnce(t *testing.T) {
	ctx := context.Background()
	db := testdb.Open(t, "postgres", testdb.PostgresDSN(t))
	db.SetMaxOpenConns(1) // the statement's connection is the one queried below
	for _, stmt := range Postgres.Session() {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	l, err := Open(ctx, db, Postgres)
	if err != nil {
		t.Fatal(err)
	}
	for range 8 {
		commit(t, mustReserve(t, l, proxyAccounts(100), "planned"))
	}
	var generic, custom int64
	if err := db.QueryRow("SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE 'WITH acct %'").Scan(&generic, &custom); err != nil {
		t.Fatal(err)
	}
	if custom != 0 || generic < 8 {
		t.Errorf("the batch statement was planned for %d executions and ran %d times on a generic plan, want 0 and at least 8", custom, generic)
	}
}

// TestPgArrays: the array literals of the batch statement read back as
// exactly the values written, quotes, backslashes, braces, commas and
// line breaks in names and memos included.
func TestPgArrays(t *testing.T) {
	db := testdb.Postgres(t)
	texts := []string{"user:a\"b", `table:c\d`, "x,{y}", "memo\nline", "", " space ", "NULL", "ünï"}
	var got []string
	rows, err := db.Query("SELECT x FROM unnest(CAST($1 AS TEXT[])) WITH ORDINALITY AS t (x, o) ORDER BY o", pgTextArray(texts))
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	if strings.Join(got, "|") != strings.Join(texts, "|") || len(got) != len(texts) {
		t.Errorf("text array: got %q, want %q", got, texts)
	}
	floats := []float64{0.1, 1e-300, 0.30000000000000004, 1e9, 5e-324, 0}
	var back []float64
	rows, err = db.Query("SELECT x FROM unnest(CAST($1 AS DOUBLE PRECISION[])) WITH ORDINALITY AS t (x, o) ORDER BY o", pgFloatArray(floats))
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var v float64
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		back = append(back, v)
	}
	for i := range floats {
		if i >= len(back) || back[i] != floats[i] {
			t.Errorf("float array: got %v, want %v", back, floats)
			break
		}
	}
}

// TestPostgresBatchWithFewFloatDigits: two ledgers taking turns on one
// account, on connections whose role or database sets extra_float_digits
// to 0 (PostgreSQL 11's default), which rounds a double read back to 15
// digits. The batch statement compares usage exactly, so Dialect.Session
// sets the digits back to 3; without that, every batch after the first
// usage that 15 digits cannot carry (0.30000000000000004) failed closed
// and each Reserve was refused.
func TestPostgresBatchWithFewFloatDigits(t *testing.T) {
	ctx := context.Background()
	dsn := testdb.PostgresDSN(t)
	var ledgers []*Ledger
	for range 2 {
		db := testdb.Open(t, "postgres", dsn)
		db.SetMaxOpenConns(1) // the one connection the settings below run on
		for _, stmt := range append([]string{"SET extra_float_digits = 0"}, Postgres.Session()...) {
			if _, err := db.Exec(stmt); err != nil {
				t.Fatal(err)
			}
		}
		l, err := Open(ctx, db, Postgres)
		if err != nil {
			t.Fatal(err)
		}
		ledgers = append(ledgers, l)
	}
	for i := range 8 {
		r, err := ledgers[i%2].Reserve(ctx, proxyAccounts(10), Cost{Epsilon: 0.1}, "digits")
		if err != nil {
			t.Fatalf("Reserve %d: %v", i+1, err)
		}
		commit(t, r)
	}
}
