package catalogdb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// wantCap asserts that q fails with the user variables' bound.
func wantCap(t *testing.T, s *Session, q string) {
	t.Helper()
	_, err := s.Query(context.Background(), q)
	var e *Error
	if !errors.As(err, &e) || e.Code != 1235 || !strings.Contains(e.Msg, "at most 1024 user variables") || !strings.Contains(e.Msg, "= NULL") {
		t.Fatalf("%.80s: %v, want the user variables' bound (1235)", q, err)
	}
}

// A session holds at most maxUserVariables user variables of at most
// maxUserVariableBytes in all; a statement past either bound changes
// nothing, and NULL frees a variable.
func TestUserVariableBounds(t *testing.T) {
	e := testEngine(t)
	s := e.Open("a", 1, nil)
	bg := context.Background()

	// The count: 1024 variables, in statements of 64 assignments each.
	for i := 0; i < maxUserVariables; i += 64 {
		var set []string
		for j := i; j < i+64; j++ {
			set = append(set, fmt.Sprintf("@n%d = %d", j, j))
		}
		query(t, s, "SET "+strings.Join(set, ", "))
	}
	if n, _ := s.sess.usage(); n != maxUserVariables {
		t.Fatalf("%d variables, want %d", n, maxUserVariables)
	}
	wantCap(t, s, "SET @one_more = 1")
	// Reassigning a held variable is no new one.
	query(t, s, "SET @n0 = 'zero'")
	// NULL frees a slot.
	query(t, s, "SET @n1 = NULL")
	query(t, s, "SET @one_more = 1")
	wantCap(t, s, "SET @two_more = 2")
	if got := fmt.Sprint(query(t, s, "SELECT @n0, @n1, @n1023, @one_more, @two_more").Rows); got != "[[zero <nil> 1023 1 <nil>]]" {
		t.Errorf("after the refusals: %s", got)
	}

	// The total: 4 MiB is 16 variables of 256 KiB less their names.
	s = e.Open("a", 2, nil)
	big := "REPEAT('x', 262144)"
	for i := 0; i < 15; i++ {
		query(t, s, fmt.Sprintf("SET @b%d = %s", i, big))
	}
	wantCap(t, s, "SET @b15 = "+big)
	_, bytes := s.sess.usage()
	if want := int64(15*262144 + 2*10 + 3*5); bytes != want {
		t.Errorf("%d bytes held, want %d", bytes, want)
	}
	// Atomic: a statement whose last assignment is refused leaves the
	// variables it assigned before, a changed one, a new one and a freed
	// one, as they were.
	query(t, s, "SET @small = 'before'")
	wantCap(t, s, "SET @small = 'after', @fresh = 1, @b1 = NULL, @b1 = 'y', @b1 = "+big+", @b15 = "+big)
	if got := fmt.Sprint(query(t, s, "SELECT @small, @fresh, LENGTH(@b1), @b15").Rows); got != "[[before <nil> 262144 <nil>]]" {
		t.Errorf("a refused SET changed variables: %s", got)
	}
	if _, b := s.sess.usage(); b != bytes+int64(len("small")+len("before")) {
		t.Errorf("%d bytes held after the refusal, want %d", b, bytes+int64(len("small")+len("before")))
	}
	// SELECT ... INTO is bounded the same way, and undone with its
	// statement (go-mysql-server has no := in a SELECT).
	wantCap(t, s, "SELECT 'during', "+big+" INTO @small, @b15")
	if got := fmt.Sprint(query(t, s, "SELECT @small, @b15").Rows); got != "[[before <nil>]]" {
		t.Errorf("a refused SELECT INTO changed variables: %s", got)
	}
	// A statement that fails for another reason assigns nothing either.
	if _, err := s.Query(bg, "SET @small = 'after', @bad = no_such_function()"); err == nil {
		t.Fatal("an unknown function was accepted")
	}
	if got := fmt.Sprint(query(t, s, "SELECT @small").Rows); got != "[[before]]" {
		t.Errorf("a failed SET changed @small: %s", got)
	}
	// NULL frees the space.
	query(t, s, "SET @b0 = NULL, @b1 = NULL")
	query(t, s, "SET @b15 = "+big+", @b16 = "+big)
	if got := fmt.Sprint(query(t, s, "SELECT @b0, LENGTH(@b15), LENGTH(@b16)").Rows); got != "[[<nil> 262144 262144]]" {
		t.Errorf("after freeing: %s", got)
	}
	// Another session's variables are its own.
	if n, b := e.Open("a", 3, nil).sess.usage(); n != 0 || b != 0 {
		t.Errorf("a new session holds %d variables, %d bytes", n, b)
	}
}
