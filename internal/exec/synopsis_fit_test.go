package exec

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// synopsisFixture is a SQLite table t of 1,000 rows whose integer column x
// in [0, bins) has a histogram of bins bins (mechanism, ε = 1), and the
// plan of a range count on it.
func synopsisFixture(t *testing.T, bins int, mechanism string) (*backend.Backend, *planner.Plan) {
	t.Helper()
	db := testdb.SQLite(t)
	if _, err := db.Exec(`CREATE TABLE t (x INTEGER);
		WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < 999)
		INSERT INTO t SELECT i FROM s`); err != nil {
		t.Fatal(err)
	}
	lo, hi := 0.0, float64(bins-1)
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "t", Source: "t", Columns: []catalog.Column{
		{Name: "x", Source: "x", Type: catalog.Integer, Lower: &lo, Upper: &hi,
			Histogram: &catalog.Histogram{Epsilon: 1, Bins: bins, Mechanism: mechanism, Workload: catalog.Workload{Kind: catalog.WorkloadAllRanges}}},
	}}}}
	st, err := sqlrewrite.NewParser(cat).Parse("SELECT COUNT(*) FROM t WHERE x < 100")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := planner.New(cat).Plan(st.(*sqlrewrite.Select), planner.Settings{Epsilon: 1, Mechanism: "auto"})
	if err != nil || plan.Synopsis == nil || len(plan.Synopsis.Synopses) != 1 || plan.Synopsis.Synopses[0].Domain.Bins != bins {
		t.Fatalf("plan %v, %v; want one synopsis of %d bins", plan, err, bins)
	}
	return backend.New(db, sqlrewrite.SQLite, nil), plan
}

// TestSynopsisTooLargeRefusedUncharged: a synopsis of 2^20 bins (the most
// a histogram may declare) can take 9 MiB (Greedy-H's real totals took
// 22 MB as the JSON it was stored as), above what a MariaDB ledger takes (max_allowed_packet,
// 16 MiB by default, holding a value escaped to twice its size) and the
// limit every ledger shares. Each statement is refused before any
// reservation, naming the limit, on every ledger. Before the fix each
// statement on MariaDB read the data, failed to store the synopsis with
// 1105 and was charged ε = 1 again (10 → 9 → 8 → 7); on SQLite and
// PostgreSQL the synopsis was built and stored.
func TestSynopsisTooLargeRefusedUncharged(t *testing.T) {
	ctx := context.Background()
	back, plan := synopsisFixture(t, 1<<20, catalog.SynopsisGreedyH)
	for _, lb := range ledgerBackends {
		t.Run(lb.dialect.String(), func(t *testing.T) {
			l := sharedLedgers(t, lb.dialect, lb.dsn(t), 1)[0]
			e := New(back, l, nil)
			t.Cleanup(e.Wait)
			for range 3 {
				_, err := e.Run(ctx, "a", plan, rand.NewChaCha8([32]byte{1}))
				if dperr.KindOf(err) != dperr.Unsupported || !strings.Contains(fmt.Sprint(err), "max_allowed_packet") ||
					!strings.Contains(fmt.Sprint(err), "declare at most 463665 bins") {
					t.Fatalf("range count from a synopsis too large for the ledger: got %v, want 1235 naming the limit and the bins that fit", err)
				}
			}
			e.Wait()
			if r := remaining(t, l); r != 10 {
				t.Errorf("remaining ε: got %v, want 10 (nothing charged)", r)
			}
			h, err := l.History(ctx, claimAccount(plan.Synopsis.Synopses[0].Key), 0)
			if err != nil && !errors.Is(err, budget.ErrUnknownAccount) || len(h) != 0 {
				t.Errorf("claim account: %v, %v; want no reservation", h, err)
			}
		})
	}
}

// TestSynopsisLargestFitsEveryLedger: a synopsis of 2^18 bins (its binary
// form about 2 MiB) is built, stored and read back by a restarted proxy
// for free, on every ledger, MariaDB's included.
func TestSynopsisLargestFitsEveryLedger(t *testing.T) {
	ctx := context.Background()
	back, plan := synopsisFixture(t, 1<<18, catalog.SynopsisIdentity)
	for _, lb := range ledgerBackends {
		t.Run(lb.dialect.String(), func(t *testing.T) {
			l := sharedLedgers(t, lb.dialect, lb.dsn(t), 1)[0]
			var answers []any
			for i := range 2 {
				e := New(back, l, nil) // the second: a restarted proxy
				res, err := e.Run(ctx, "a", plan, rand.NewChaCha8([32]byte{1}))
				if err != nil {
					t.Fatalf("run %d: %v", i, err)
				}
				e.Wait()
				answers = append(answers, res.Row[0])
			}
			if r := remaining(t, l); r != 9 {
				t.Errorf("remaining ε: got %v, want 9 (the build, once)", r)
			}
			if answers[0] != answers[1] {
				t.Errorf("answers %v: want the same synopsis read back", answers)
			}
		})
	}
}

// TestSynopsisStoreFailureKeptAndRetried: a build that read the data but
// whose synopsis the ledger failed to store (a write refused, as a ledger
// that lost its connection or timed out refuses it) leaves no mark: its
// statement answers from the synopsis it paid for, which the process keeps
// and answers every later statement from, uncharged. Another proxy, which
// cannot see it, builds its own, paid once too, and keeps it the same way:
// one build per process, never one per statement. Once the ledger works
// again the next statement stores the first proxy's synopsis, without a
// second charge; the other proxy adopts it, and a restarted proxy reads
// it for free. Before the fix the build's statement failed with 1105 and
// stored a permanent mark, and every later statement was refused with
// 1226 ("could not be stored"), even after the ledger recovered, until the
// column's histogram configuration changed.
func TestSynopsisStoreFailureKeptAndRetried(t *testing.T) {
	ctx := context.Background()
	back, plan := synopsisFixture(t, 4096, catalog.SynopsisGreedyH) // about 33 KB stored
	key := stateKey(plan.Synopsis.Synopses[0].Key)
	for _, lb := range ledgerBackends {
		t.Run(lb.dialect.String(), func(t *testing.T) {
			dsn := lb.dsn(t)
			l := sharedLedgers(t, lb.dialect, dsn, 1)[0]
			allow := refuseLargeStates(t, lb.dialect, dsn, "synopsis:", 600)
			run := func(e *Executor, seed byte, wantBuilt bool, want any) any {
				t.Helper()
				res, err := e.Run(ctx, "a", plan, rand.NewChaCha8([32]byte{seed}))
				if err != nil {
					t.Fatalf("statement %d: %v; want an answer from a paid synopsis", seed, err)
				}
				built := strings.Contains(fmt.Sprint(res.Warnings), "built now by this statement")
				if built != wantBuilt || want != nil && res.Row[0] != want {
					t.Fatalf("statement %d: %v, built now %v; want %v, built now %v", seed, res.Row[0], built, want, wantBuilt)
				}
				return res.Row[0]
			}
			e, other := New(back, l, nil), New(back, l, nil)
			t.Cleanup(e.Wait)
			t.Cleanup(other.Wait)
			answer := run(e, 1, true, nil)
			run(e, 2, false, answer)
			if r := remaining(t, l); r != 9 {
				t.Fatalf("remaining ε: got %v, want 9 (the build, once)", r)
			}
			if _, ok, err := l.GetState(ctx, key); err != nil || ok {
				t.Fatalf("state while the ledger refuses it: stored %v, %v; want nothing stored (no mark)", ok, err)
			}
			theirs := run(other, 3, true, nil)
			run(other, 4, false, theirs)
			if r := remaining(t, l); r != 8 {
				t.Fatalf("remaining ε: got %v, want 8 (one build per proxy)", r)
			}
			allow()
			run(e, 5, false, answer)
			if _, ok, err := l.GetState(ctx, key); err != nil || !ok {
				t.Fatalf("state once the ledger works: stored %v, %v; want stored", ok, err)
			}
			run(other, 6, false, answer)             // adopts the stored synopsis
			run(New(back, l, nil), 7, false, answer) // a restart
			e.Wait()
			other.Wait()
			if r := remaining(t, l); r != 8 {
				t.Errorf("remaining ε: got %v, want 8 (no build after the ledger recovered)", r)
			}
		})
	}
}

// TestCheckSynopsisFits: a histogram is refused from the configuration
// alone exactly when its synopsis over every row exceeds the limit of
// every ledger, and the bins it names fit.
func TestCheckSynopsisFits(t *testing.T) {
	for _, typ := range []catalog.ColumnType{catalog.Integer, catalog.Real} {
		lo, hi := 0.0, float64(1<<21)
		tbl := &catalog.Table{Name: "pums", Source: "pums", Columns: []catalog.Column{
			{Name: "income", Source: "income", Type: typ, Lower: &lo, Upper: &hi, Histogram: &catalog.Histogram{Epsilon: 1, Bins: catalog.MaxHistogramBins, Mechanism: catalog.SynopsisAuto, Workload: catalog.Workload{Kind: catalog.WorkloadAllRanges}}},
		}}
		col := &tbl.Columns[0]
		err := CheckSynopsisFits(tbl, col)
		m := regexp.MustCompile(`declare at most (\d+) bins`).FindStringSubmatch(fmt.Sprint(err))
		if m == nil {
			t.Fatalf("%s, 2^20 bins: %v, want a refusal naming the bins that fit", typ, err)
		}
		most, _ := strconv.Atoi(m[1])
		for _, c := range []struct {
			bins int
			fits bool
		}{{most, true}, {most + 1, false}, {catalog.DefaultHistogramBins, true}} {
			col.Histogram.Bins = c.bins
			spec, _ := planner.WholeSynopsis(tbl, col)
			if err := CheckSynopsisFits(tbl, col); (err == nil) != c.fits || (synopsisBound(spec) <= budget.MaxStateValue) != c.fits {
				t.Errorf("%s, %d bins: %v (bound %d of %d), want fits=%v", typ, c.bins, err, synopsisBound(spec), budget.MaxStateValue, c.fits)
			}
		}
	}
}
