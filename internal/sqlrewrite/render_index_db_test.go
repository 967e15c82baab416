package sqlrewrite_test

import (
	"context"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestWindowUsesIndex: on PostgreSQL, a window over a column with a b-tree
// index, and the grid sums of a range of its ranks, are read from the
// index, not sorted. (Ordering by the bare column
// name let PostgreSQL take it for the clamped output column, named after
// the CASE's ELSE branch, and sort by the expression.)
func TestWindowUsesIndex(t *testing.T) {
	conn, err := testdb.Postgres(t).Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, s := range []string{
		"CREATE TABLE dp_indexed AS SELECT (i % 997) * 1.5 AS income FROM generate_series(1, 20000) AS i",
		"CREATE INDEX ON dp_indexed (income)",
		"ANALYZE dp_indexed",
		"SET enable_seqscan = off", // this connection's choice then does not hang on costs
	} {
		if _, err := conn.ExecContext(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	for _, f := range []sqlrewrite.Fetch{
		{Window: &sqlrewrite.Window{Column: "income", Lower: 0, Upper: 1000, Offset: 10000, Limit: 50}},
		{Window: &sqlrewrite.Window{Column: "income", Lower: 0, Upper: 1000, Offset: 10000, Limit: 50, GridUnit: 0.5}},
		{GridSums: &sqlrewrite.GridSums{Column: "income", Lower: 0, Upper: 1000, Unit: 0.5, SumOnly: true, Ranks: &sqlrewrite.RankSlice{Offset: 10000, Limit: 50}}},
	} {
		f.Table = "dp_indexed"
		query, args, err := sqlrewrite.Render(f, sqlrewrite.PostgreSQL)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := conn.QueryContext(context.Background(), "EXPLAIN "+query, args...)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		var plan []string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, line)
		}
		rows.Close()
		text := strings.Join(plan, "\n")
		if strings.Contains(text, "Sort") || !strings.Contains(text, "Index") {
			t.Errorf("fetch is not read from the index:\n%s\n%s", query, text)
		}
	}
}
