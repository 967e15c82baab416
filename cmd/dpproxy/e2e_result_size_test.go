package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestLargeResultsRefusedPromptly: on the demo, a statement whose result
// post-processing would build past 64 MiB (three REPEATs of 1 MB beside
// the 5,001 buckets of FLOOR(income / 100) * 100, an independent review's,
// which built 15 GB in the proxy and killed it with "out of memory" for
// every connection; one REPEAT of 100,000, which sent 500 MB over 100 s
// and slowed other clients' SELECT 1 from 0.05 s to a second) is refused
// with 1235 when planned, within seconds, charged nothing, while another
// connection keeps being answered; the buckets alone still answer.
func TestLargeResultsRefusedPromptly(t *testing.T) {
	p := startProxy(t, "", nil)
	db := p.connect(t, "demo", "demo")
	other := p.connect(t, "demo", "demo")
	var before float64
	if err := db.QueryRow("SELECT dp_remaining_epsilon()").Scan(&before); err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{
		"SELECT REPEAT('x',1000000) AS s, REPEAT('y',1000000) AS t, REPEAT('z',1000000) AS u, FLOOR(income/100)*100 AS a, COUNT(*) FROM pums GROUP BY FLOOR(income/100)*100",
		"SELECT REPEAT('x',100000) AS s, FLOOR(income/100)*100 AS a, COUNT(*) FROM pums GROUP BY FLOOR(income/100)*100",
	} {
		type outcome struct {
			err     error
			elapsed time.Duration
		}
		done := make(chan outcome, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			start := time.Now()
			rows, err := db.QueryContext(ctx, sql)
			if err == nil {
				for rows.Next() {
				}
				err = rows.Err()
				rows.Close()
			}
			done <- outcome{err, time.Since(start)}
		}()
		var o outcome
	waiting:
		for {
			select {
			case o = <-done:
				break waiting
			default:
			}
			start := time.Now()
			var one int
			if err := other.QueryRow("SELECT 1").Scan(&one); err != nil || one != 1 {
				t.Fatalf("another connection's SELECT 1: %d, %v", one, err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("another connection's SELECT 1 took %v", d)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if mysqlCode(o.err) != 1235 || !strings.Contains(o.err.Error(), "64 MiB") {
			t.Errorf("%.60s: got %v, want 1235 naming the 64 MiB limit", sql, o.err)
		}
		if o.elapsed > 10*time.Second {
			t.Errorf("%.60s: refused after %v", sql, o.elapsed)
		}
	}
	var after float64
	if err := db.QueryRow("SELECT dp_remaining_epsilon()").Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("remaining epsilon %g after the refusals, %g before: a refusal when planned is free", after, before)
	}
	rows, err := db.Query("SELECT FLOOR(income/100)*100 AS a, COUNT(*) FROM pums GROUP BY FLOOR(income/100)*100")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
	}
	rows.Close()
	if err := rows.Err(); err != nil || n != 5001 {
		t.Errorf("the buckets alone: %d rows, %v; want 5001", n, err)
	}
}
