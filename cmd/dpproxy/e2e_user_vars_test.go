package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// TestUserVariableBoundsThroughTheProxy: one connection holds at most 1024
// user variables of at most 4 MiB in all. Through the real proxy the 1025th
// variable and the 17th of 256 KiB are refused with 1235, the variables set
// before are intact, a refused statement assigns none of its variables, and
// SET @v = NULL makes room (an independent review grew the proxy by 465 MB
// with 60 variables of 256 KiB on one connection).
func TestUserVariableBoundsThroughTheProxy(t *testing.T) {
	p := startProxy(t, "", nil)
	ctx := context.Background()
	db := p.connect(t, "demo", "demo")
	refused := func(err error, q string) {
		t.Helper()
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1235 || !strings.Contains(me.Message, "at most 1024 user variables") || !strings.Contains(me.Message, "= NULL") {
			t.Fatalf("%.60s: got %v, want the user variables' bound (1235)", q, err)
		}
	}

	// The count.
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 0; i < 1024; i += 64 {
		var set []string
		for j := i; j < i+64; j++ {
			set = append(set, fmt.Sprintf("@vS_%d = %d", j, j))
		}
		if _, err := c.ExecContext(ctx, "SET "+strings.Join(set, ", ")); err != nil {
			t.Fatalf("variables %d to %d: %v", i, i+63, err)
		}
	}
	_, err = c.ExecContext(ctx, "SET @vS_1024 = 1024")
	refused(err, "SET @vS_1024 = 1024")
	var first, last int
	var extra any
	if err := c.QueryRowContext(ctx, "SELECT @vS_0, @vS_1023, @vS_1024").Scan(&first, &last, &extra); err != nil || first != 0 || last != 1023 || extra != nil {
		t.Fatalf("after the refusal: %d %d %v (%v)", first, last, extra, err)
	}
	if _, err := c.ExecContext(ctx, "SET @vS_0 = NULL"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ExecContext(ctx, "SET @vS_1024 = 1024"); err != nil {
		t.Fatalf("after SET @vS_0 = NULL: %v", err)
	}

	// The total, on another connection (its variables are its own).
	c2, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	big := "REPEAT('x', 262144)"
	for i := range 15 {
		if _, err := c2.ExecContext(ctx, fmt.Sprintf("SET @big%d = %s", i, big)); err != nil {
			t.Fatalf("variable %d of 256 KiB: %v", i, err)
		}
	}
	q := "SET @small = 'after', @big0 = NULL, @big0 = 'x', @big15 = " + big + ", @big16 = " + big
	_, err = c2.ExecContext(ctx, "SET @small = 'before'")
	if err == nil {
		_, err = c2.ExecContext(ctx, q)
	}
	refused(err, q)
	var small string
	var len0, len14 int
	var big15, vs1 any
	if err := c2.QueryRowContext(ctx, "SELECT @small, LENGTH(@big0), LENGTH(@big14), @big15, @vS_1").Scan(&small, &len0, &len14, &big15, &vs1); err != nil {
		t.Fatal(err)
	}
	if small != "before" || len0 != 262144 || len14 != 262144 || big15 != nil || vs1 != nil {
		t.Errorf("after the refused SET: @small %q, LENGTH(@big0) %d, LENGTH(@big14) %d, @big15 %v, @vS_1 %v", small, len0, len14, big15, vs1)
	}
	if _, err := c2.ExecContext(ctx, "SET @big0 = NULL, @big15 = "+big); err != nil {
		t.Fatalf("after freeing @big0: %v", err)
	}
	if strings.Contains(p.Logs(), "goroutine ") {
		t.Error("the proxy logged a stack trace")
	}
}
