package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// TestHostileStatementsThroughTheProxy: through the real proxy and
// go-sql-driver, SHOW [GLOBAL] VARIABLES answers (it failed with 1105), and
// an 82-digit literal in a query, a SET or a prepared statement is a parse
// error on a connection that stays usable (the parser
// panicked and the connection died with 2013).
func TestHostileStatementsThroughTheProxy(t *testing.T) {
	p := startProxy(t, "", nil)
	db := p.connect(t, "demo", "demo")
	db.SetMaxOpenConns(1)
	for _, q := range []string{"SHOW VARIABLES", "SHOW GLOBAL VARIABLES", "SHOW VARIABLES LIKE 'max_allowed_packet'", "SHOW STATUS"} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		n := 0
		for rows.Next() {
			n++
		}
		rows.Close()
		if n == 0 {
			t.Errorf("%s: no rows", q)
		}
	}
	long := strings.Repeat("9", 82)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{"SELECT " + long, nil},
		{"SET @dp_epsilon = 0." + strings.Repeat("1", 80), nil},
		{"SELECT COUNT(*) FROM pums WHERE age < ? AND age < " + long, []any{50}}, // prepared: COM_STMT_EXECUTE
	} {
		_, err := db.Exec(q.sql, q.args...)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1064 {
			t.Errorf("%.40s: got %v, want error 1064", q.sql, err)
		}
		if err := db.Ping(); err != nil {
			t.Fatalf("after %.40s: the connection is gone: %v", q.sql, err)
		}
	}
	if strings.Contains(p.Logs(), "goroutine ") {
		t.Error("the proxy logged a stack trace")
	}
}

// TestMetricsEndpoint scrapes /metrics and /healthz of a running demo after
// an answered query, a refused statement and a failed login.
func TestMetricsEndpoint(t *testing.T) {
	p := startProxy(t, "", nil)
	db := p.connect(t, "demo", "demo")
	if _, err := db.Exec("SELECT COUNT(*) FROM pums"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("SELECT age FROM pums"); err == nil {
		t.Fatal("a bare column was answered")
	}
	bad, err := sql.Open("mysql", "demo:wrong@tcp("+p.addr+")/dpproxy")
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	if bad.Ping() == nil {
		t.Fatal("a wrong password logged in")
	}

	// A statement's commit (and with it the ε spent metric) completes after
	// its answer is sent: scrape until it shows, for at most 10 s.
	body := httpGet(t, "http://"+p.metricsAddr+"/metrics")
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if v, ok := sample(body, `dpproxy_epsilon_spent_total{table="pums",user="demo"}`); ok && v >= 0.1 {
			break
		}
		time.Sleep(50 * time.Millisecond)
		body = httpGet(t, "http://"+p.metricsAddr+"/metrics")
	}
	for _, want := range []struct {
		series string
		min    float64
	}{
		{`dpproxy_statements_total{outcome="ok"}`, 1},
		{`dpproxy_statements_total{outcome="unsupported"}`, 1},
		{`dpproxy_failed_logins_total`, 1},
		{`dpproxy_connections_accepted_total`, 3},
		{`dpproxy_epsilon_spent_total{table="pums",user="demo"}`, 0.1},
		{`dpproxy_statement_duration_seconds_count{outcome="ok"}`, 1},
		{`dpproxy_connections`, 1},
	} {
		got, ok := sample(body, want.series)
		if !ok || got < want.min {
			t.Errorf("%s = %v (found %v), want at least %v", want.series, got, ok, want.min)
		}
	}
	if strings.Contains(body, "demo:wrong") || strings.Contains(body, "wrong") {
		t.Error("/metrics mentions the password")
	}
	if got := httpGet(t, "http://"+p.metricsAddr+"/healthz"); strings.TrimSpace(got) != "ok" {
		t.Errorf("/healthz: %q", got)
	}
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return string(b)
}

// sample returns the value of one series in a Prometheus text exposition.
func sample(body, series string) (float64, bool) {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(m[1], 64)
	return v, err == nil
}

// TestKillOwnConnection: KILL QUERY and KILL of one's own connection id
// are answered 1317, as MySQL answers them (the KILL interrupts itself);
// after KILL QUERY the connection stays usable, after KILL it is closed.
// Before, KILL of one's own connection closed it without an answer, and
// KILL QUERY answered OK.
func TestKillOwnConnection(t *testing.T) {
	p := startProxy(t, "", nil)
	db := p.connect(t, "demo", "demo")
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var id int64
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"KILL QUERY %d", "KILL %d"} {
		_, err := conn.ExecContext(ctx, fmt.Sprintf(q, id))
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1317 {
			t.Errorf("%s of one's own connection: got %v, want error 1317", q, err)
		}
		if q == "KILL QUERY %d" {
			if err := conn.PingContext(ctx); err != nil {
				t.Errorf("after KILL QUERY of its own id, the connection is gone: %v", err)
			}
		}
	}
	if _, err := conn.ExecContext(ctx, "SELECT 1"); err == nil {
		t.Errorf("after KILL of its own id, the connection still answers")
	}
}
