package main

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestRepeatedStatementAcrossProxies: with privacy.repeat_window set, two
// proxies sharing a ledger give a statement and its respelling the same
// answer, SHOW WARNINGS says "repeated answer", and repeating it costs
// nothing: carol's ε = 0.25 pays for two statements at ε = 0.1, yet she
// gets six answers of the same statement.
func TestRepeatedStatementAcrossProxies(t *testing.T) {
	dir, config := sqliteDeployment(t, 0.25)
	withRepeatWindow(t, config)
	proxies := []*proxyProcess{startProxy(t, dir, nil, "--config", config), startProxy(t, dir, nil, "--config", config)}
	answer := func(p *proxyProcess, q string) ([]any, string) {
		t.Helper()
		conn, err := p.connect(t, "carol", "carol-pw").Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		var count, avg float64
		if err := conn.QueryRowContext(context.Background(), q).Scan(&count, &avg); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		rows, err := conn.QueryContext(context.Background(), "SHOW WARNINGS")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var notes []string
		for rows.Next() {
			var level, msg string
			var code int
			if err := rows.Scan(&level, &code, &msg); err != nil {
				t.Fatal(err)
			}
			notes = append(notes, msg)
		}
		return []any{count, avg}, strings.Join(notes, "\n")
	}
	first, notes := answer(proxies[0], "SELECT COUNT(*), AVG(age) FROM pums WHERE age > 30 AND income < 60000")
	if strings.Contains(notes, "repeated answer") {
		t.Errorf("first answer described as repeated:\n%s", notes)
	}
	for i := range 5 {
		again, notes := answer(proxies[i%2], "select count(*) as n, avg(age) from pums where income < 60000 and 30 < age")
		if !reflect.DeepEqual(again, first) {
			t.Errorf("repeat %d: got %v, want the first answer %v", i, again, first)
		}
		if strings.Count(notes, "repeated answer") != 2 {
			t.Errorf("repeat %d: SHOW WARNINGS does not say \"repeated answer\" for both columns:\n%s", i, notes)
		}
	}
}

// withRepeatWindow turns on repeated answers (privacy.repeat_window: 1h) in
// the configuration file of a sqliteDeployment.
func withRepeatWindow(t *testing.T, config string) {
	t.Helper()
	yaml, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	withWindow := strings.Replace(string(yaml), "privacy: {", "privacy: {repeat_window: 1h, ", 1)
	if err := os.WriteFile(config, []byte(withWindow), 0o600); err != nil {
		t.Fatal(err)
	}
}
