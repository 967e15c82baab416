package exec

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestResultPastItsLimitFailsCharged: a key chosen by partition selection
// is as long as the data's values, which the plan counts as 255
// characters; here 14 released names of 1 MiB, each kept five times in a
// row (the name and CONCAT of four), make 70 MiB of cells, past the 64
// MiB a result may hold. Post-processing stops counting at the limit
// (dperr.ResultTooLarge, 1105) instead of building the result, after
// the releases were made: the statement is charged its ε, as a 1690 of
// post-processing is. Before, it answered 70 MiB.
func TestResultPastItsLimitFailsCharged(t *testing.T) {
	db := testdb.SQLite(t)
	var values []string
	for i := range 14 * 4 {
		values = append(values, fmt.Sprintf("(%d, %d)", i%14, i%50))
	}
	for _, s := range []string{
		"CREATE TABLE base (i INTEGER, v REAL)",
		"INSERT INTO base (i, v) VALUES " + strings.Join(values, ", "),
		// 14 names of 1 MiB (hex of 512 KiB of zeros and the name's number), 4 rows each.
		"CREATE VIEW p AS SELECT hex(zeroblob(524288)) || i AS name, v FROM base",
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	lo, hi := 0.0, 100.0
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "p", Source: "p", Columns: []catalog.Column{
		{Name: "name", Source: "name", Type: catalog.Text, PartitionSelection: true},
		{Name: "v", Source: "v", Type: catalog.Real, Lower: &lo, Upper: &hi},
	}}}}
	e := newGroupedExecutor(t, backend.New(db, sqlrewrite.SQLite, nil))
	qp := planGrouped(t, cat, "SELECT name, CONCAT(name, name, name, name), COUNT(*) FROM p GROUP BY name", 40)
	if sel := qp.Selection; sel == nil || float64(sel.Threshold)+20*sel.Scale() > 4 {
		t.Fatalf("selection %+v: the fixture's names are too close to its threshold", sel)
	}
	before, err := e.ledger.Remaining(context.Background(), "user:a")
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.RunQuery(context.Background(), "a", qp, rand.NewChaCha8([32]byte{3}))
	if dperr.KindOf(err) != dperr.ResultTooLarge {
		rows := 0
		if res != nil {
			rows = len(res.Rows)
		}
		t.Fatalf("got %v (%d rows), want ResultTooLarge", err, rows)
	}
	if code, state := dperr.KindOf(err).Code(); code != 1105 || state != "HY000" {
		t.Errorf("code %d (%s), want 1105 (HY000)", code, state)
	}
	e.Wait()
	after, err := e.ledger.Remaining(context.Background(), "user:a")
	if err != nil {
		t.Fatal(err)
	}
	if spent := before.Epsilon - after.Epsilon; math.Abs(spent-40) > 1e-9 {
		t.Errorf("spent epsilon=%g, want the statement's 40 (its releases were made)", spent)
	}
}
