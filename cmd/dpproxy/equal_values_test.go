package main

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
	"github.com/dpproxy/dpproxy/internal/wire"
)

// TestDeclaredValuesEqualInTheCollation: a text column's declared values
// that its backend collation compares equal are refused at start, naming
// the column and two of the values: on MariaDB 'x', 'X' and 'x ' under the
// default utf8mb4_general_ci (a review: GROUP BY g answered [x] 300, [X]
// 0, [x ] 0, the rows of all three in the first group), on PostgreSQL
// 'x' and 'X' under a nondeterministic ICU collation. A table created
// after start is refused so before a statement's reservation
// (tableTypes), uncharged. Values distinct in the collation pass; an
// interactive domain's are checked alike.
func TestDeclaredValuesEqualInTheCollation(t *testing.T) {
	for _, b := range []struct {
		name, driver string
		dialect      sqlrewrite.Dialect
		dsn          func(testing.TB) string
		setup        []string
		column       string // the column type of g and h
		want         string
	}{
		{"mariadb", "mysql", sqlrewrite.MySQL, testdb.MySQLDSN, nil, "VARCHAR(20)", `rdv.g: values "x" and "x " are equal in the column's collation (utf8mb4_general_ci)`},
		{"postgres", "postgres", sqlrewrite.PostgreSQL, testdb.PostgresDSN,
			[]string{"CREATE COLLATION IF NOT EXISTS dpproxy_test_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)"},
			"VARCHAR(20) COLLATE dpproxy_test_ci", `rdv.g: values "x" and "X" are equal in the column's collation (character varying COLLATE `},
	} {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			db, err := sql.Open(b.driver, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			execAll(t, db, append(b.setup, "CREATE TABLE rdv (g "+b.column+", h "+b.column+")"))
			columns := "[{name: g, type: text, values: ['x', 'X', 'x ', null]}, {name: h, type: text, values: ['x', 'y', null]}]"
			out := startWithTables(t, b.driver, dsn, "  - {name: rdv, columns: "+columns+"}\n")
			if !strings.Contains(out, b.want) || strings.Contains(out, "rdv.h") {
				t.Errorf("start: %s\nwant a refusal naming %s, and not rdv.h", out, b.want)
			}

			// Per statement: a table created after start.
			be := backend.New(db, b.dialect, nil)
			g := catalog.Column{Name: "g", Source: "g", Type: catalog.Text, Values: []string{"x", "X", "x ", catalog.NullValue}}
			h := catalog.Column{Name: "h", Source: "h", Type: catalog.Text, Values: []string{"x", "y", catalog.NullValue}}
			late := &catalog.Table{Name: "rdv", Source: "rdv_late", Columns: []catalog.Column{g, h}}
			c := newTableTypes(be, false, slog.New(slog.DiscardHandler), &catalog.Charsets{})
			c.ttl = 0
			ctx := context.Background()
			if err := c.check(ctx, "ana", late, nil); dperr.KindOf(err) != dperr.UnknownTable {
				t.Fatalf("before the table is created: %v, want 1146", err)
			}
			execAll(t, db, []string{"CREATE TABLE rdv_late (g " + b.column + ", h " + b.column + ")"})
			for range 2 {
				if err := c.check(ctx, "ana", late, nil); dperr.KindOf(err) != dperr.Unsupported || !strings.Contains(err.Error(), b.want) {
					t.Errorf("the table created later: %v, want Unsupported naming %s", err, b.want)
				}
			}
			late.Columns = []catalog.Column{h}
			if bad, err := readCharsets(ctx, be, []catalog.Table{*late}, &catalog.Charsets{}); err != nil || len(bad) > 0 {
				t.Errorf("values distinct in the collation: %v, %v", bad, err)
			}
			// An interactive domain's categories are cells of rows alike.
			late.Interactive = &catalog.Interactive{Columns: []catalog.InteractiveColumn{{Name: "h", Values: []string{"y", "x", "X"}}}}
			if bad, err := readCharsets(ctx, be, []catalog.Table{*late}, &catalog.Charsets{}); err != nil || len(bad) != 1 || !strings.HasPrefix(bad[0], `rdv.h: values "x" and "X" are equal`) {
				t.Errorf("an interactive domain's x and X: %v, %v; want rdv.h named", bad, err)
			}
		})
	}
}

// startWithTables runs the proxy with the tables (YAML list entries) on
// the backend and returns its output, after it exits or, if it did not
// within 30 s, with "still running" added.
func startWithTables(t *testing.T, driver, dsn, tables string) string {
	t.Helper()
	dir := t.TempDir()
	config := filepath.Join(dir, "dpproxy.yaml")
	yaml := fmt.Sprintf("backend: {driver: %s, dsn: %q}\nledger: {driver: sqlite, dsn: %q}\nusers:\n  - {name: eve, password_hash: %q, epsilon: 10}\ntables:\n%s",
		driver, dsn, filepath.Join(dir, "ledger.db"), wire.FormatNativePasswordHash(wire.NativePasswordHash("pw")), tables)
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, binary, "--config", config, "--listen", "127.0.0.1:0", "--metrics-listen", "off").CombinedOutput()
	if err == nil || ctx.Err() != nil {
		return string(out) + "\n(still running or exited 0)"
	}
	return string(out)
}
