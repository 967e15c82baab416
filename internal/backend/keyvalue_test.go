package backend

import (
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestKeyValueReadsExactly: hand-checked readings of a key column's value
// as the drivers send it. A value the filter column = key would not
// select by the key read is no key (ok false), so that a key's counts and
// its filtered fetches read the same rows.
func TestKeyValueReadsExactly(t *testing.T) {
	num := func(x float64) sqlrewrite.Value { return sqlrewrite.Value{Num: x} }
	text := func(s string) sqlrewrite.Value { return sqlrewrite.Value{Str: s, IsText: true} }
	for _, c := range []struct {
		raw     any
		numeric bool
		dialect sqlrewrite.Dialect
		want    sqlrewrite.Value
		ok      bool
	}{
		{int64(42), true, sqlrewrite.PostgreSQL, num(42), true},
		{int64(-9007199254740991), true, sqlrewrite.MySQL, num(-9007199254740991), true},
		{int64(9007199254740992), true, sqlrewrite.SQLite, sqlrewrite.Value{}, false}, // 2⁵³: 2⁵³+1 would read as it
		{int64(9007199254740993), true, sqlrewrite.MySQL, sqlrewrite.Value{}, false},
		{uint64(42), true, sqlrewrite.MySQL, num(42), true}, // BIGINT UNSIGNED
		{uint64(9007199254740991), true, sqlrewrite.MySQL, num(9007199254740991), true},
		{uint64(9007199254740992), true, sqlrewrite.MySQL, sqlrewrite.Value{}, false},
		{uint64(18446744073709551615), true, sqlrewrite.MySQL, sqlrewrite.Value{}, false},
		{float32(1234570), true, sqlrewrite.MySQL, sqlrewrite.Value{}, false}, // FLOAT: maybe 1234567 printed to 6 digits
		{float64(7), true, sqlrewrite.SQLite, num(7), true},
		{float64(7.5), true, sqlrewrite.SQLite, sqlrewrite.Value{}, false},
		{[]byte("12"), true, sqlrewrite.MySQL, num(12), true},
		{[]byte("1000000.0000000000"), true, sqlrewrite.MySQL, num(1e6), true}, // DECIMAL(30,10)
		{[]byte("1000000.0000000001"), true, sqlrewrite.MySQL, sqlrewrite.Value{}, false},
		{"-0", true, sqlrewrite.PostgreSQL, num(0), true},
		{"0.0001", true, sqlrewrite.PostgreSQL, sqlrewrite.Value{}, false},
		{"9007199254740993", true, sqlrewrite.PostgreSQL, sqlrewrite.Value{}, false},
		{"NaN", true, sqlrewrite.PostgreSQL, sqlrewrite.Value{}, false},
		{"Infinity", true, sqlrewrite.PostgreSQL, sqlrewrite.Value{}, false},
		{"abc", true, sqlrewrite.PostgreSQL, sqlrewrite.Value{}, false},
		{"5", true, sqlrewrite.SQLite, sqlrewrite.Value{}, false}, // text never equals 5 there
		{"abc", false, sqlrewrite.SQLite, text("abc"), true},
		{[]byte("abc"), false, sqlrewrite.MySQL, text("abc"), true},
		{[]byte("abc"), false, sqlrewrite.SQLite, sqlrewrite.Value{}, false}, // a blob
		{int64(5), false, sqlrewrite.SQLite, sqlrewrite.Value{}, false},      // an integer among text
		{nil, false, sqlrewrite.PostgreSQL, sqlrewrite.Value{}, false},
		{nil, true, sqlrewrite.PostgreSQL, sqlrewrite.Value{}, false},
	} {
		got, ok := keyValue(c.raw, c.numeric, c.dialect)
		if ok != c.ok || ok && got != c.want {
			t.Errorf("keyValue(%#v, numeric %v, %v) = %+v, %v; want %+v, %v", c.raw, c.numeric, c.dialect, got, ok, c.want, c.ok)
		}
	}
}
