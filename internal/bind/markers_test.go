package bind

import (
	"reflect"
	"testing"
)

func TestMarkers(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  []uint32
	}{
		{"SELECT 1", nil},
		{"?", []uint32{0}},
		{"SELECT ? + ?", []uint32{7, 11}},
		{"SELECT '?', \"?\", `?`, ?", []uint32{22}},
		{`SELECT 'it\'s ?', ?`, []uint32{18}},
		{`SELECT 'it''s ?', ?`, []uint32{18}},
		{"SELECT `a``?`, ?", []uint32{15}},
		{`SELECT "a\"?", ?`, []uint32{15}},
		{"SELECT ? -- ?\n, ?", []uint32{7, 16}},
		{"SELECT ? --?", []uint32{7, 11}}, // "--" without a space is two minus signs
		{"SELECT 1--?", []uint32{10}},
		{"SELECT ? # ?\n, ?", []uint32{7, 15}},
		{"SELECT ? /* ? */ , ?", []uint32{7, 19}},
		{"SELECT /*! ? */ ?", []uint32{16}},
		{"SELECT ? /* ? ", []uint32{7}},   // unterminated comment
		{"SELECT ?, '?", []uint32{7}},     // unterminated string
		{"SELECT ?, 'a\\", []uint32{7}},   // a trailing backslash
		{"SELECT ? --", []uint32{7}},      // a comment at the very end
		{"SELECT x/?/?", []uint32{9, 11}}, // division is not a comment
	} {
		if got := Markers(tc.query); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: got %v, want %v", tc.query, got, tc.want)
		}
	}
}
