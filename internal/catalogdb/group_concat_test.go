package catalogdb

import (
	"fmt"
	"testing"
)

// TestGroupConcatMaxLen: a session sets group_concat_max_len within [4,
// 1 MiB]; a whole number past either end is set to that end with MySQL's
// warning 1292, as MariaDB sets one past its own range, and GROUP_CONCAT's
// result is cut there. Before, any value up to 2⁶⁴ - 1 was set, and one
// under 4 refused.
func TestGroupConcatMaxLen(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	for _, c := range []struct{ set, value, warnings string }{
		{"SET group_concat_max_len = 4294967295", "1048576", "[{Warning 1292 Truncated incorrect group_concat_max_len value: '4294967295'}]"},
		{"SET SESSION group_concat_max_len = 1048576", "1048576", "[]"},
		{"SET @@group_concat_max_len = 1048577", "1048576", "[{Warning 1292 Truncated incorrect group_concat_max_len value: '1048577'}]"},
		{"SET group_concat_max_len = 1", "4", "[{Warning 1292 Truncated incorrect group_concat_max_len value: '1'}]"},
		{"SET group_concat_max_len = 2000", "2000", "[]"},
		{"SET group_concat_max_len = DEFAULT", "1024", "[]"},
	} {
		r := query(t, s, c.set)
		if got := fmt.Sprint(r.Warnings); got != c.warnings {
			t.Errorf("%s: warnings %s, want %s", c.set, got, c.warnings)
		}
		if got := fmt.Sprint(query(t, s, "SELECT @@group_concat_max_len").Rows); got != "[["+c.value+"]]" {
			t.Errorf("%s: @@group_concat_max_len %s, want %s", c.set, got, c.value)
		}
	}
	query(t, s, "SET group_concat_max_len = 5")
	r := query(t, s, "SELECT GROUP_CONCAT(COLUMN_NAME ORDER BY ORDINAL_POSITION) FROM information_schema.COLUMNS WHERE TABLE_NAME = 'visits'")
	if got := fmt.Sprint(r.Rows); got != "[[age,c]]" {
		t.Errorf("GROUP_CONCAT cut at 5: %s", got)
	}
	query(t, s, "SET group_concat_max_len = 2000000")
	r = query(t, s, "SELECT LENGTH(GROUP_CONCAT(REPEAT('x', 5000))) FROM information_schema.COLUMNS")
	if got := fmt.Sprint(r.Rows); got != "[[1048576]]" {
		t.Errorf("GROUP_CONCAT cut at 1 MiB: %s", got)
	}
}
