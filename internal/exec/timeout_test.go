package exec

import (
	"context"
	"database/sql"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// slowViews make "SELECT ... FROM t" run for far longer than the test's
// statement timeout on each backend.
var slowViews = []struct {
	name    string
	open    func(testing.TB) *sql.DB
	dialect sqlrewrite.Dialect
	view    string
}{
	{"sqlite", func(t testing.TB) *sql.DB { return testdb.SQLite(t) }, sqlrewrite.SQLite,
		"CREATE VIEW t AS WITH RECURSIVE c(a) AS (SELECT 0 UNION ALL SELECT (a + 1) % 16 FROM c LIMIT 1000000000) SELECT a FROM c"},
	{"postgres", func(t testing.TB) *sql.DB { return testdb.Postgres(t) }, sqlrewrite.PostgreSQL,
		"CREATE VIEW t AS SELECT 1 AS a FROM pg_sleep(30)"},
	{"mariadb", func(t testing.TB) *sql.DB { return testdb.MySQL(t) }, sqlrewrite.MySQL,
		"CREATE VIEW t AS SELECT 1 AS a FROM (SELECT SLEEP(30) AS s) AS z"},
}

// TestStatementTimeout: a statement on a backend that does not answer ends
// at the statement timeout with 3024, and is charged (its fetch was sent:
// the README's rule), where before it waited as long as the backend did.
func TestStatementTimeout(t *testing.T) {
	for _, b := range slowViews {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			if _, err := db.Exec(b.view); err != nil {
				t.Fatal(err)
			}
			lo, hi := 0.0, 15.0
			cat := &catalog.Config{Tables: []catalog.Table{{Name: "t", Source: "t", Columns: []catalog.Column{
				{Name: "a", Source: "a", Type: catalog.Integer, Lower: &lo, Upper: &hi},
			}}}}
			ctx := context.Background()
			l, err := budget.Open(ctx, testdb.SQLite(t), budget.SQLite)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.SetLimit(ctx, "user:a", budget.Cost{Epsilon: 10}); err != nil {
				t.Fatal(err)
			}
			e := New(backend.New(db, b.dialect, nil), l, nil)
			e.SetStatementTimeout(300 * time.Millisecond)
			st, err := sqlrewrite.NewParser(cat).Parse("SELECT COUNT(*) FROM t")
			if err != nil {
				t.Fatal(err)
			}
			plan, err := planner.New(cat).Plan(st.(*sqlrewrite.Select), planner.Settings{Epsilon: 0.5})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = e.Run(ctx, "a", plan, rand.NewChaCha8([32]byte{1}))
			took := time.Since(start)
			if dperr.KindOf(err) != dperr.Timeout {
				t.Errorf("got %v, want a timeout error", err)
			}
			if code, _ := dperr.KindOf(err).Code(); code != 3024 {
				t.Errorf("code %d, want 3024", code)
			}
			if took > 3*time.Second {
				t.Errorf("the statement took %v with a 300ms timeout", took)
			}
			left, err := l.Remaining(ctx, "user:a")
			if err != nil {
				t.Fatal(err)
			}
			if left.Epsilon != 9.5 {
				t.Errorf("remaining ε %v, want 9.5: a statement whose fetch was sent is charged", left.Epsilon)
			}
		})
	}
}
