package backend

import (
	"context"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// equalCase is a column's declared values and the pair of them
// EqualValues must find equal (want[0] < want[1]), or none (nil).
type equalCase struct {
	column string
	values []string
	want   []int
}

// runEqualCases checks EqualValues on the table ev of b.
func runEqualCases(t *testing.T, b *Backend, cases []equalCase) {
	t.Helper()
	for _, c := range cases {
		i, j, in, err := b.EqualValues(context.Background(), "ev", c.column, c.values)
		switch {
		case err != nil:
			t.Errorf("%s %q: %v", c.column, c.values, err)
		case c.want == nil && in != "":
			t.Errorf("%s %q: %q and %q equal in %s, want none", c.column, c.values, c.values[i], c.values[j], in)
		case c.want != nil && (in == "" || i != c.want[0] || j != c.want[1]):
			t.Errorf("%s %q: %d, %d (%q), want %v", c.column, c.values, i, j, in, c.want)
		}
	}
}

// TestEqualValuesOnMariaDB: the declared values that a MariaDB column's
// collation compares equal: case and trailing spaces under the default
// utf8mb4_general_ci ('x', 'X', 'x '), trailing spaces under the PAD
// SPACE utf8mb4_bin, accents under latin1_swedish_ci; none in a
// VARBINARY column, a missing column, distinct values (the empty one
// included), or fewer than two values.
func TestEqualValuesOnMariaDB(t *testing.T) {
	db := testdb.MySQL(t)
	if _, err := db.Exec("CREATE TABLE ev (g VARCHAR(20) CHARACTER SET utf8mb4, b VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, l VARCHAR(20) CHARACTER SET latin1, vb VARBINARY(20))"); err != nil {
		t.Fatal(err)
	}
	runEqualCases(t, New(db, sqlrewrite.MySQL, nil), []equalCase{
		{"g", []string{"x", "X", "x "}, []int{0, 2}},
		{"g", []string{"a", "x", "y", "X"}, []int{1, 3}},
		{"g", []string{"Ábc", "abc"}, []int{0, 1}},
		{"g", []string{"", "a", "b", "it's", `\`}, nil},
		{"g", []string{"x"}, nil},
		{"b", []string{"x", "X"}, nil},
		{"b", []string{"x", "X", "x "}, []int{0, 2}},
		{"l", []string{"E", "é"}, []int{0, 1}},
		{"vb", []string{"x", "X", "x "}, nil},
		{"missing", []string{"x", "X"}, nil},
	})
}

// TestEqualValuesOnPostgres: the declared values that a PostgreSQL
// column's type and collation compare equal: case under a
// nondeterministic ICU collation (also through a domain), trailing spaces
// in char(n); none in a text column of the default collation, a missing
// column, or an integer column declared text.
func TestEqualValuesOnPostgres(t *testing.T) {
	db := testdb.Postgres(t)
	for _, s := range []string{
		"CREATE COLLATION IF NOT EXISTS dpproxy_test_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)",
		"CREATE DOMAIN ev_name AS TEXT COLLATE dpproxy_test_ci",
		"CREATE TABLE ev (t TEXT, ci VARCHAR(20) COLLATE dpproxy_test_ci, d ev_name, ch CHAR(5), n INTEGER)",
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	runEqualCases(t, New(db, sqlrewrite.PostgreSQL, nil), []equalCase{
		{"t", []string{"x", "X", "x "}, nil},
		{"ci", []string{"x", "X", "x "}, []int{0, 1}},
		{"ci", []string{"a", "much longer than twenty", "MUCH LONGER THAN TWENTY"}, []int{1, 2}},
		{"d", []string{"y", "x", "X"}, []int{1, 2}},
		{"ch", []string{"x", "X", "x "}, []int{0, 2}},
		{"n", []string{"1", "01"}, nil},
		{"missing", []string{"x", "X"}, nil},
	})
}
