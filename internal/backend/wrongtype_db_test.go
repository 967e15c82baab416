package backend

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestRanksOfTextColumnOnMariaDB: on MariaDB a column declared real but
// of type VARCHAR in the backend (a table created or altered after the
// proxy started) is read as numbers by the clamp ('10' as 10, 'abc' as 0)
// yet sorted as text ('10' before '9'). Windows, with and without a
// condition on another column, and a GridSums rank slice must rank the
// values as numbers: they read the same as over a DOUBLE column holding
// the numbers the clamp reads, on both neighbours of a row '10' (without
// it every value is one digit, where text and numbers sort alike) and
// with a row 'abc'; summaries and histograms read alike too. Over text ranked by the column, the row '10' put the
// window out of order and made the median's mechanism fail (an
// independent review).
func TestRanksOfTextColumnOnMariaDB(t *testing.T) {
	db := testdb.MySQL(t)
	ctx := context.Background()
	for _, s := range []string{
		"CREATE TABLE txt (x VARCHAR(10), k INT, KEY (x))",
		"CREATE TABLE num (x DOUBLE, k INT, KEY (x))",
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	insert := func(text string, number float64) {
		t.Helper()
		if _, err := db.Exec("INSERT INTO txt VALUES (?, 1)", text); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("INSERT INTO num VALUES (?, 1)", number); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 100 {
		insert(fmt.Sprint(i%10), float64(i%10))
	}
	b := New(db, sqlrewrite.MySQL, nil)
	read := func(table string, filtered bool) ([]float64, sqlrewrite.GridTotals, []float64, []int64) {
		t.Helper()
		s, err := b.Snapshot(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		f := sqlrewrite.Fetch{Table: table}
		if filtered {
			f.Filter = []sqlrewrite.Condition{{Column: "k", Range: &sqlrewrite.Range{HasLower: true, Lower: 1}}}
		}
		w := f
		w.Window = &sqlrewrite.Window{Column: "x", Lower: 0, Upper: 100, Offset: 40, Limit: 70}
		values, err := s.Window(ctx, w)
		if err != nil {
			t.Fatalf("window of %s: %v", table, err)
		}
		g := f
		g.GridSums = &sqlrewrite.GridSums{Column: "x", Lower: 0, Upper: 100, Unit: 1.0 / 16, Ranks: &sqlrewrite.RankSlice{Offset: 85, Limit: 20}}
		sums, err := s.GridSums(ctx, g)
		if err != nil {
			t.Fatalf("grid sums of %s: %v", table, err)
		}
		m := f
		m.Summary = []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}, {Kind: sqlrewrite.CountNumbers, Column: "x"},
			{Kind: sqlrewrite.ClampedSum, Column: "x", Lower: 0, Upper: 100}, {Kind: sqlrewrite.ClampedSumSquares, Column: "x", Lower: 0, Upper: 100}}
		summary, err := s.Summary(ctx, m)
		if err != nil {
			t.Fatalf("summary of %s: %v", table, err)
		}
		h := f
		h.Histogram = &sqlrewrite.Histogram{Column: "x", Lower: 0, Upper: 100, Bins: 20}
		bins, err := s.Histogram(ctx, h)
		if err != nil {
			t.Fatalf("histogram of %s: %v", table, err)
		}
		return values, sums, summary, bins
	}
	check := func(neighbour string) {
		t.Helper()
		for _, filtered := range []bool{false, true} {
			want, wantSums, wantSummary, wantBins := read("num", filtered)
			got, gotSums, gotSummary, gotBins := read("txt", filtered)
			if !slices.Equal(gotSummary, wantSummary) || !slices.Equal(gotBins, wantBins) {
				t.Errorf("%s, filtered %v: summary %v and histogram %v over text, want %v and %v as over numbers", neighbour, filtered, gotSummary, gotBins, wantSummary, wantBins)
			}
			if !slices.IsSorted(got) || !slices.Equal(got, want) {
				t.Errorf("%s, filtered %v: window over text %v, want %v as over numbers", neighbour, filtered, got, want)
			}
			if gotSums.Count != wantSums.Count || gotSums.Sum.Cmp(wantSums.Sum) != 0 || cmpNil(gotSums.SumSquares, wantSums.SumSquares) != 0 {
				t.Errorf("%s, filtered %v: ranked grid sums over text %d %v %v, want %d %v %v as over numbers", neighbour, filtered,
					gotSums.Count, gotSums.Sum, gotSums.SumSquares, wantSums.Count, wantSums.Sum, wantSums.SumSquares)
			}
		}
	}
	check("without '10'")
	insert("10", 10)
	check("with '10'")
	insert("abc", 0)
	insert("1e400", 100)
	check("with '10', 'abc' and '1e400'")

	// The probe names the column's type, whatever the rows.
	s, err := b.Snapshot(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for table, want := range map[string]bool{"txt": false, "num": true} {
		got, err := s.sortsAsNumbers(ctx, table, "x")
		if err != nil || got != want {
			t.Errorf("sortsAsNumbers(%s) = %v, %v, want %v", table, got, err, want)
		}
	}
	if _, err := s.sortsAsNumbers(ctx, "missing", "x"); err == nil || !strings.Contains(err.Error(), "backend error") {
		t.Errorf("sortsAsNumbers of a missing table: %v, want the generic error", err)
	}
}

// cmpNil compares two possibly nil big integers, nil first.
func cmpNil(a, b *big.Int) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	return a.Cmp(b)
}
