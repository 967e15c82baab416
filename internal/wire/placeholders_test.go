package wire

import (
	"reflect"
	"testing"
)

func TestPlaceholderOffsets(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  []int
	}{
		{"SELECT 1", nil},
		{"?", []int{0}},
		{"SELECT ? + ?", []int{7, 11}},
		{"SELECT '?', \"?\", `?`, ?", []int{22}},
		{`SELECT 'it\'s ?', ?`, []int{18}},
		{`SELECT 'it''s ?', ?`, []int{18}},
		{"SELECT `a``?`, ?", []int{15}},
		{`SELECT "a\"?", ?`, []int{15}},
		{"SELECT ? -- ?\n, ?", []int{7, 16}},
		{"SELECT ? --?", []int{7, 11}}, // "--" without a space is two minus signs
		{"SELECT 1--?", []int{10}},
		{"SELECT ? # ?\n, ?", []int{7, 15}},
		{"SELECT ? /* ? */ , ?", []int{7, 19}},
		{"SELECT /*! ? */ ?", []int{16}},
		{"SELECT ? /* ? ", []int{7}},   // unterminated comment
		{"SELECT ?, '?", []int{7}},     // unterminated string
		{"SELECT ?, 'a\\", []int{7}},   // a trailing backslash
		{"SELECT ? --", []int{7}},      // a comment at the very end
		{"SELECT x/?/?", []int{9, 11}}, // division is not a comment
	} {
		if got := placeholderOffsets(tc.query); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: got %v, want %v", tc.query, got, tc.want)
		}
	}
}
