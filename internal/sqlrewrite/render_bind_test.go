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
		query, args, err := r.bind("b = " + b + " AND a = " + a + " AND b = " + b)
		if err != nil || query != c.query || !reflect.DeepEqual(args, c.args) {
			t.Errorf("%v: %q %q %v, want %q %q", c.d, query, args, err, c.query, c.args)
		}
		if _, _, err := r.bind("a = " + a); err == nil {
			t.Errorf("%v: an argument left out of the text was bound", c.d)
		}
		for _, bad := range []string{argMark, argMark + "x" + argMark, argMark + "7" + argMark, argMark + "01" + argMark} {
			if _, _, err := r.bind(a + b + bad); err == nil {
				t.Errorf("%v: mark %q accepted", c.d, bad)
			}
		}
	}
}
