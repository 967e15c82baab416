package sqlrewrite

import (
	"reflect"
	"testing"
)

// TestBindPlacesArgumentsByText: bind binds each argument where its mark
// is in the text, not in the order arg took them, repeats a repeated mark
// (a ? per occurrence, one $n), and refuses an argument left out of the
// text and a malformed mark.
func TestBindPlacesArgumentsByText(t *testing.T) {
	for _, c := range []struct {
		d     Dialect
		query string
		args  []any
	}{
		{MySQL, "b = ? AND a = ? AND b = ?", []any{"b", "a", "b"}},
		{SQLite, "b = ? AND a = ? AND b = ?", []any{"b", "a", "b"}},
		{PostgreSQL, "b = $1 AND a = $2 AND b = $1", []any{"b", "a"}},
	} {
		r := &renderer{spec: dialects[c.d], dialect: c.d}
		a, b := r.arg("a"), r.arg("b")
		query, logged, args, err := r.bind("b = " + b + " AND a = " + a + " AND b = " + b)
		if err != nil || query != c.query || logged != query || !reflect.DeepEqual(args, c.args) {
			t.Errorf("%v: %q (logged %q) %q %v, want %q %q", c.d, query, logged, args, err, c.query, c.args)
		}
		if _, _, _, err := r.bind("a = " + a); err == nil {
			t.Errorf("%v: an argument left out of the text was bound", c.d)
		}
		for _, bad := range []string{argMark, argMark + "x" + argMark, argMark + "7" + argMark, argMark + "01" + argMark} {
			if _, _, _, err := r.bind(a + b + bad); err == nil {
				t.Errorf("%v: mark %q accepted", c.d, bad)
			}
		}
	}
}

// TestBindRanks: a rank bound (a window's LIMIT or OFFSET, placed by the
// exact count) is a bind argument, an int64, and never in the text; for
// Vitess, which takes no arguments, it is an integer in the query and ?
// in the text to log, where a string is a literal in both.
func TestBindRanks(t *testing.T) {
	for _, c := range []struct {
		d     Dialect
		query string
		args  []any
	}{
		{MySQL, "s = ? LIMIT ? OFFSET ?", []any{"x", int64(7919), int64(3959)}},
		{SQLite, "s = ? LIMIT ? OFFSET ?", []any{"x", int64(7919), int64(3959)}},
		{PostgreSQL, "s = $1 LIMIT $2 OFFSET $3", []any{"x", int64(7919), int64(3959)}},
	} {
		r := &renderer{spec: dialects[c.d], dialect: c.d}
		query, logged, args, err := r.bind("s = " + r.arg("x") + " LIMIT " + r.rank(7919) + " OFFSET " + r.rank(3959))
		if err != nil || query != c.query || logged != query || !reflect.DeepEqual(args, c.args) {
			t.Errorf("%v: %q (logged %q) %#v %v, want %q %#v", c.d, query, logged, args, err, c.query, c.args)
		}
	}
	r := &renderer{spec: dialects[MySQL], dialect: MySQL, vitess: true}
	query, logged, args, err := r.bind("s = " + r.arg("x") + " LIMIT " + r.rank(7919) + " OFFSET " + r.rank(3959))
	if err != nil || query != "s = 'x' LIMIT 7919 OFFSET 3959" || logged != "s = 'x' LIMIT ? OFFSET ?" || args != nil {
		t.Errorf("vitess: %q (logged %q) %#v %v", query, logged, args, err)
	}
}
