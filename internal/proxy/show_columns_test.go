package proxy

import (
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// showColumnsHidden are conditions on columns SHOW COLUMNS does not show:
// SHOW FULL COLUMNS' Collation, Privileges and Comment, and the columns'
// position, which neither shows.
var showColumnsHidden = []string{"`Collation` IS NULL", "Privileges IS NULL", "Comment = ''", "position = 1", "ORDINAL_POSITION = 1"}

// TestShowColumnsWhereSeesShownColumnsOnly: the WHERE of SHOW COLUMNS
// reads the columns it shows and no other, as MariaDB's does (checked
// below on a MariaDB server when DPPROXY_TEST_MYSQL_DSN is set): a
// condition on a column of SHOW FULL COLUMNS only, or on the position, is
// 1054. They were all read (SHOW COLUMNS FROM pums WHERE Collation IS
// NULL listed every column; checked: this failed), and the position by
// SHOW FULL COLUMNS too.
func TestShowColumnsWhereSeesShownColumnsOnly(t *testing.T) {
	s := newTestSession(t)
	for _, w := range showColumnsHidden {
		wantKind(t, s, "SHOW COLUMNS FROM pums WHERE "+w, dperr.UnknownColumn)
	}
	wantKind(t, s, "SHOW FULL COLUMNS FROM pums WHERE position = 1", dperr.UnknownColumn)
	for sql, want := range map[string]string{
		"SHOW COLUMNS FROM pums WHERE Field IN ('sex', 'age')":                    "[[age bigint YES  <nil> ] [sex bigint YES  <nil> ]]",
		"SHOW COLUMNS FROM pums WHERE `Type` = 'double' OR Field = 'educ'":        "[[educ bigint YES  <nil> ] [income double YES  <nil> ]]",
		"SHOW FULL COLUMNS FROM pums WHERE Comment LIKE '%500000%'":               "[[income double <nil> YES  <nil>  select bounds [0, 500000]]]",
		"SHOW FULL COLUMNS FROM pums WHERE Collation IS NULL AND Field LIKE 'a%'": "[[age bigint <nil> YES  <nil>  select bounds [0, 100]]]",
	} {
		if got := fmt.Sprint(run(t, s, sql).Rows); got != want {
			t.Errorf("%s: got %s, want %s", sql, got, want)
		}
	}
	if got := fmt.Sprint(run(t, s, "SHOW COLUMNS FROM pums").Rows); got != "[[age bigint YES  <nil> ] [sex bigint YES  <nil> ] [educ bigint YES  <nil> ] [race bigint YES  <nil> ] [income double YES  <nil> ] [married bigint YES  <nil> ]]" {
		t.Errorf("SHOW COLUMNS FROM pums: %s, want the columns in their order", got)
	}

	// MariaDB's own answer, the reference.
	db := testdb.MySQL(t)
	if _, err := db.Exec("CREATE TABLE shown (a INT, b VARCHAR(10))"); err != nil {
		t.Fatal(err)
	}
	for _, w := range showColumnsHidden {
		rows, err := db.Query("SHOW COLUMNS FROM shown WHERE " + w)
		if err == nil {
			rows.Close()
		}
		if me, ok := err.(*mysql.MySQLError); !ok || me.Number != 1054 {
			t.Errorf("MariaDB: SHOW COLUMNS FROM shown WHERE %s: %v, want 1054", w, err)
		}
	}
}
