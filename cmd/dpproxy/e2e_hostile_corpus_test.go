package main

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/dpproxy/dpproxy/internal/wire"
)

// hostileCorpusPath is the hostile-statement corpus; its header documents the format.
const hostileCorpusPath = "../../testdata/hostile/statements.txt"

// hostileEntry is one statement of the corpus and the outcome it must have.
type hostileEntry struct {
	line  int
	class string // "answer", "free" or "refused"
	code  uint16 // for "refused"
	setup []string
	sql   string
}

func (e hostileEntry) want() string {
	if e.class == "refused" {
		return fmt.Sprintf("refused %d", e.code)
	}
	return e.class
}

var repeatDirective = regexp.MustCompile(`\$\{repeat:(\d+):([^}]*)\}`)

// decodeHostileSQL expands the corpus escapes: \n, \t, \\, \xNN and
// ${repeat:N:TEXT}.
func decodeHostileSQL(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case '\\':
			b.WriteByte('\\')
		case 'x':
			if i+2 >= len(s) {
				return "", fmt.Errorf("short \\x escape")
			}
			v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return "", err
			}
			b.WriteByte(byte(v))
			i += 2
		default:
			b.WriteByte('\\')
			b.WriteByte(s[i])
		}
	}
	var err error
	out := repeatDirective.ReplaceAllStringFunc(b.String(), func(m string) string {
		sub := repeatDirective.FindStringSubmatch(m)
		n, perr := strconv.Atoi(sub[1])
		if perr != nil {
			err = perr
		}
		return strings.Repeat(sub[2], n)
	})
	return out, err
}

// loadHostileCorpus parses the corpus file.
func loadHostileCorpus(t *testing.T) []hostileEntry {
	t.Helper()
	f, err := os.Open(hostileCorpusPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []hostileEntry
	var setup []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "> "); ok {
			setup = append(setup, rest)
			continue
		}
		head, raw, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("%s:%d: no tab between class and SQL", hostileCorpusPath, n)
		}
		e := hostileEntry{line: n, setup: setup}
		setup = nil
		fields := strings.Fields(head)
		switch {
		case len(fields) == 1 && (fields[0] == "answer" || fields[0] == "free"):
			e.class = fields[0]
		case len(fields) == 2 && fields[0] == "refused":
			code, err := strconv.ParseUint(fields[1], 10, 16)
			if err != nil {
				t.Fatalf("%s:%d: error code %q", hostileCorpusPath, n, fields[1])
			}
			e.class, e.code = "refused", uint16(code)
		default:
			t.Fatalf("%s:%d: unknown class %q", hostileCorpusPath, n, head)
		}
		if e.sql, err = decodeHostileSQL(raw); err != nil {
			t.Fatalf("%s:%d: %v", hostileCorpusPath, n, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// hostileCorpusRows is the size of the people table behind the corpus.
const hostileCorpusRows = 300

// hostileIncome is the raw income of row id: a value no noisy answer can
// reproduce by chance.
func hostileIncome(id int) float64 { return 12345.6789 + float64(id)*1.0001 }

// loadHostileCorpusTables creates people and vault in the backend: the
// configuration declares people's id, age and income only.
func loadHostileCorpusTables(t *testing.T, db *sql.DB, b hostileBackend) {
	t.Helper()
	text := "TEXT"
	if b.name == "mariadb" {
		text = "VARCHAR(64)"
	}
	stmts := []string{
		"DROP TABLE IF EXISTS people", "DROP TABLE IF EXISTS vault",
		fmt.Sprintf("CREATE TABLE people (id %[2]s, age %[2]s, income %[1]s, name %[3]s, secret %[3]s)", b.double, b.integer, text),
		fmt.Sprintf("CREATE TABLE vault (secret %s)", text),
		"INSERT INTO vault (secret) VALUES ('canary-vault')",
	}
	var sb strings.Builder
	sb.WriteString("INSERT INTO people (id, age, income, name, secret) VALUES ")
	for id := range hostileCorpusRows {
		if id > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "(%d, %d, %.4f, 'canary-name-%d', 'canary-secret-%d')", id, 18+id*7%70, hostileIncome(id), id, id)
	}
	stmts = append(stmts, sb.String())
	execAll(t, db, stmts)
}

// backendText are fragments of the backends' own error messages, which
// must never reach a client (unless the statement itself has them, as in
// Table 'sqlite_master' doesn't exist).
var backendText = []string{"sqlite", "SQL logic error", "pq:", "SQLSTATE", "syntax error at or near",
	"MariaDB server version", "Error 1", "relation \"", "no such table", "no such column"}

// hostileOutcome runs one entry on a fresh connection and returns its
// outcome ("answer" with the cells, or "refused N" with the message).
func hostileOutcome(ctx context.Context, db *sql.DB, e hostileEntry) (outcome string, cells []sql.NullString, message string, err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return "", nil, "", err
	}
	defer conn.Close()
	for _, s := range e.setup {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			return "", nil, "", fmt.Errorf("setup %q: %w", s, err)
		}
	}
	rows, err := conn.QueryContext(ctx, e.sql)
	if err == nil {
		cols, _ := rows.Columns()
		for rows.Next() {
			raw := make([]sql.NullString, len(cols))
			dest := make([]any, len(cols))
			for i := range raw {
				dest[i] = &raw[i]
			}
			if err = rows.Scan(dest...); err != nil {
				break
			}
			cells = append(cells, raw...)
		}
		if err == nil {
			err = rows.Err()
		}
		rows.Close()
	}
	if err == nil {
		return "answer", cells, "", nil
	}
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return "", nil, "", err // the connection failed: a bug in itself
	}
	return fmt.Sprintf("refused %d", me.Number), nil, me.Message, nil
}

// TestHostileStatementCorpus runs every statement of the corpus through the
// real proxy on SQLite, PostgreSQL and MariaDB and checks its outcome class
// and, whatever the class, the invariants: no answer or error carries a
// raw value (a canary string or a raw income) or a backend's error text; a
// statement is charged if and only if it answers with data (dp_remaining_epsilon()
// falls exactly then); the proxy never logs a panic and keeps serving.
func TestHostileStatementCorpus(t *testing.T) {
	corpus := loadHostileCorpus(t)
	if len(corpus) < 300 {
		t.Fatalf("the corpus has %d statements, want at least 300", len(corpus))
	}
	for _, b := range hostileBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			dsn := b.dsn(t)
			db, err := sql.Open(b.driver, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			loadHostileCorpusTables(t, db, b)
			dir := t.TempDir()
			config := filepath.Join(dir, "dpproxy.yaml")
			yaml := fmt.Sprintf(`
backend: {driver: %s, dsn: %q}
ledger: {driver: sqlite, dsn: %q}
privacy: {default_epsilon: 0.1, max_epsilon: 10, default_delta: 1.0e-7, max_delta: 1.0e-4}
users:
  - {name: eve, password_hash: %q, epsilon: 100000, delta: 0.5}
tables:
  - name: people
    epsilon: 1000000
    delta: 0.5
    columns:
      - {name: id, type: integer, lower: 0, upper: 1000}
      - {name: age, type: integer, lower: 0, upper: 100}
      - {name: income, type: real, lower: 0, upper: 500000}
`, b.driver, dsn, filepath.Join(dir, "ledger.db"), wire.FormatNativePasswordHash(wire.NativePasswordHash("pw")))
			if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			p := startProxy(t, dir, nil, "--config", config)
			client := p.connect(t, "eve", "pw")
			client.SetMaxIdleConns(0) // every statement on a fresh session
			meter := p.connect(t, "eve", "pw")
			meter.SetMaxOpenConns(1)
			remaining := func() float64 {
				var eps float64
				if err := meter.QueryRow("SELECT dp_remaining_epsilon()").Scan(&eps); err != nil {
					t.Fatalf("dp_remaining_epsilon(): %v (the proxy stopped serving?)", err)
				}
				return eps
			}
			raw := make(map[string]bool, hostileCorpusRows)
			for id := range hostileCorpusRows {
				raw[strconv.FormatFloat(hostileIncome(id), 'f', 4, 64)] = true
			}
			counts := map[string]int{}
			for _, e := range corpus {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				before := remaining()
				got, cells, msg, err := hostileOutcome(ctx, client, e)
				cancel()
				where := fmt.Sprintf("%s:%d %.80q", filepath.Base(hostileCorpusPath), e.line, e.sql)
				if err != nil {
					t.Errorf("%s: %v", where, err)
					continue
				}
				after := remaining()
				counts[got]++
				class := got
				if got == "answer" && after == before {
					class = "free"
				}
				if class != e.want() {
					t.Errorf("%s: %s (%s), want %s", where, class, msg, e.want())
				}
				// The invariants, whatever the class.
				if after > before || (after < before && got != "answer") {
					t.Errorf("%s: %s and remaining ε went from %v to %v", where, got, before, after)
				}
				for _, c := range cells {
					if c.String == "vault" || c.String == "secret" {
						t.Errorf("%s: a backend object the configuration does not name: %q", where, c.String)
					}
					if strings.Contains(c.String, "canary-name") || strings.Contains(c.String, "canary-secret") ||
						strings.Contains(c.String, "canary-vault") {
						t.Errorf("%s: a raw value in an answer: %.80q", where, c.String)
					}
					if v, err := strconv.ParseFloat(c.String, 64); err == nil && !math.IsInf(v, 0) &&
						raw[strconv.FormatFloat(v, 'f', 4, 64)] && v == math.Round(v*1e4)/1e4 {
						t.Errorf("%s: a raw income in an answer: %s", where, c.String)
					}
				}
				if strings.Contains(msg, "canary") {
					t.Errorf("%s: a raw value in the error: %.200q", where, msg)
				}
				for _, frag := range backendText {
					if strings.Contains(msg, frag) && !strings.Contains(strings.ToLower(e.sql), strings.ToLower(frag)) {
						t.Errorf("%s: backend text %q in the error: %.200q", where, frag, msg)
					}
				}
				if got == "refused 1105" && !strings.Contains(msg, "query id") && !strings.Contains(msg, "internal error (ref") {
					t.Errorf("%s: 1105 with a message of its own: %.200q", where, msg)
				}
			}
			if logs := p.Logs(); strings.Contains(logs, "goroutine ") || strings.Contains(logs, "panic") {
				t.Error("the proxy logged a panic or a stack trace")
			}
			t.Logf("%d statements: %v", len(corpus), counts)
		})
	}
}
