package proxy

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestTextCollationFollowsTheBackend: every catalog surface reports, for
// a text column, the collation its backend compares text in
// (catalog.Config.TextCollation): utf8mb4_0900_bin (byte for byte,
// trailing spaces significant) on PostgreSQL and SQLite, where 'abc' =
// 'ABC' and 'abc' = 'abc ' are false; utf8mb4_general_ci on MySQL/MariaDB,
// where both are true. SHOW CREATE TABLE, SHOW [FULL] COLUMNS, DESCRIBE,
// SHOW TABLE STATUS and information_schema's COLUMNS, TABLES and SCHEMATA
// agree.
func TestTextCollationFollowsTheBackend(t *testing.T) {
	for _, c := range []struct {
		driver, collation string
	}{
		{catalog.DriverSQLite, "utf8mb4_0900_bin"},
		{catalog.DriverPostgres, "utf8mb4_0900_bin"},
		{catalog.DriverMySQL, "utf8mb4_general_ci"},
	} {
		t.Run(c.driver, func(t *testing.T) {
			cfg, err := catalog.ParseConfig(strings.NewReader(fmt.Sprintf(`
backend: {driver: %s, dsn: "unused"}
users: [{name: a, password_hash: "*0000000000000000000000000000000000000000", epsilon: 1}]
tables:
  - name: visits
    columns:
      - {name: age, type: integer, lower: 0, upper: 120}
      - {name: city, type: text}
`, c.driver)))
			if err != nil {
				t.Fatal(err)
			}
			ledger, err := budget.Open(context.Background(), testdb.SQLite(t), budget.SQLite)
			if err != nil {
				t.Fatal(err)
			}
			e, err := NewEngine(cfg, nil, ledger, nil)
			if err != nil {
				t.Fatal(err)
			}
			s := e.Open("a", 1)
			run(t, s, "USE dpproxy")
			create := fmt.Sprint(run(t, s, "SHOW CREATE TABLE visits").Rows)
			if !strings.Contains(create, "COLLATE="+c.collation) || strings.Count(create, "_ci")+strings.Count(create, "_bin") != 1 {
				t.Errorf("SHOW CREATE TABLE: %s; want the table in %s and no column in another", create, c.collation)
			}
			for _, q := range []struct{ sql, want string }{
				{"SHOW FULL COLUMNS FROM visits", "[[age bigint <nil> YES  <nil>  select bounds [0, 120]] [city text " + c.collation + " YES  <nil>  select ]]"},
				{"SHOW FULL COLUMNS FROM dpproxy.visits WHERE `Collation` IS NOT NULL", "[[city text " + c.collation + " YES  <nil>  select ]]"},
				{"SHOW COLUMNS FROM visits FROM dpproxy LIKE 'c%'", "[[city text YES  <nil> ]]"},
				{"DESCRIBE visits", "[[age bigint YES  <nil> ] [city text YES  <nil> ]]"},
				{"DESC visits city", "[[city text YES  <nil> ]]"},
				{"SELECT CHARACTER_SET_NAME, COLLATION_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'dpproxy' AND COLUMN_NAME = 'city'", "[[utf8mb4 " + c.collation + "]]"},
				{"SELECT TABLE_COLLATION FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'dpproxy'", "[[" + c.collation + "]]"},
				{"SELECT DEFAULT_COLLATION_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'dpproxy'", "[[" + c.collation + "]]"},
			} {
				if got := fmt.Sprint(run(t, s, q.sql).Rows); got != q.want {
					t.Errorf("%s: %s; want %s", q.sql, got, q.want)
				}
			}
			if got := fmt.Sprint(run(t, s, "SHOW TABLE STATUS").Rows); !strings.Contains(got, " "+c.collation+" ") {
				t.Errorf("SHOW TABLE STATUS: %s; want %s", got, c.collation)
			}
			// A result column's definition names the character set of
			// the results, not the column's collation: MariaDB 10.11 sends
			// utf8mb4_general_ci (45) for a utf8mb4_bin, a
			// utf8mb4_nopad_bin and a utf8mb4_general_ci column alike.
			if cols := run(t, s, "SELECT city FROM visits WHERE 1 = 0").Typed; len(cols) != 1 || cols[0].Charset != 45 {
				t.Errorf("SELECT city FROM visits WHERE 1 = 0: columns %+v; want collation id 45, utf8mb4's", cols)
			}
		})
	}
}
