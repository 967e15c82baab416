package budget

import (
	"context"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestMariaDBLiterals: the literals of the compound statement
// (mariabatch.go) read back as exactly the values written: names and
// texts with quotes, backslashes, line breaks and any UTF-8, and doubles
// (random bit patterns, subnormals, the extremes, sums of tenths and the
// next doubles after them), compared by the server as the statement
// compares usage.
func TestMariaDBLiterals(t *testing.T) {
	db := testdb.MySQL(t)
	db.SetMaxOpenConns(1) // the temporary table's session
	if _, err := db.Exec("CREATE TEMPORARY TABLE lit (i INT PRIMARY KEY, name VARBINARY(255), memo TEXT, v DOUBLE) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"); err != nil {
		t.Fatal(err)
	}
	texts := []string{"user:a\"b", `table:c\d`, "x'y", "memo\nline", "", " space ", "NULL", "ünï", "0x41", "漢字", "\U0001F600", "a\\'b"}
	floats := []float64{0, 5e-324, 3 * 5e-324, 2.2250738585072014e-308, 2.225073858507201e-308, math.MaxFloat64, 0.1, 0.30000000000000004, 1e-300, 1e9, 1, 10}
	for k := 1; k < 64; k++ {
		s := 0.0
		for range k {
			s = addUp(s, 0.1)
		}
		floats = append(floats, s, math.Nextafter(s, 2*s), float64(k)*0.1)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	for len(floats) < 20000 {
		if v := math.Float64frombits(rnd.Uint64() &^ (1 << 63)); !math.IsInf(v, 0) && !math.IsNaN(v) {
			floats = append(floats, v)
		}
	}
	for start := 0; start < len(floats); start += 1000 {
		var rows []string
		for i := start; i < min(start+1000, len(floats)); i++ {
			text := texts[i%len(texts)]
			rows = append(rows, "("+strconv.Itoa(i)+", "+mariaDBName(text)+", "+mariaDBText(text)+", "+mariaDBDouble(floats[i])+")")
		}
		if _, err := db.Exec("INSERT INTO lit VALUES " + strings.Join(rows, ", ")); err != nil {
			t.Fatal(err)
		}
	}
	// Read back in the binary protocol (a statement with an argument),
	// whose doubles are the stored bits.
	rows, err := db.Query("SELECT i, name, memo, v FROM lit WHERE i >= ? ORDER BY i", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n, bad := 0, 0
	for rows.Next() {
		var i int
		var name, memo string
		var v float64
		if err := rows.Scan(&i, &name, &memo, &v); err != nil {
			t.Fatal(err)
		}
		if want := texts[i%len(texts)]; name != want || memo != want || v != floats[i] || math.Signbit(v) {
			if bad++; bad <= 10 {
				t.Errorf("row %d: read back %q, %q, %v; wrote %q and %v as %s", i, name, memo, v, want, floats[i], mariaDBDouble(floats[i]))
			}
		}
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(floats) {
		t.Errorf("read back %d rows, want %d", n, len(floats))
	}
	// The server compares a stored double with its literal as equal.
	var unequal int
	for start := 0; start < len(floats); start += 1000 {
		var cond []string
		for i := start; i < min(start+1000, len(floats)); i++ {
			cond = append(cond, "(i = "+strconv.Itoa(i)+" AND (name, v) IN (("+mariaDBName(texts[i%len(texts)])+", "+mariaDBDouble(floats[i])+")))")
		}
		var matched int
		if err := db.QueryRow("SELECT COUNT(*) FROM lit WHERE " + strings.Join(cond, " OR ")).Scan(&matched); err != nil {
			t.Fatal(err)
		}
		unequal += min(start+1000, len(floats)) - start - matched
	}
	if unequal != 0 {
		t.Errorf("%d stored values differ from their literals", unequal)
	}
}

// TestMariaDBWithoutCompoundStatements: on a server that refuses the
// compound statement (here a MariaDB session in sql_mode ORACLE, whose
// anonymous blocks are spelt otherwise; MySQL and Vitess refuse it too),
// Open finds out, and every batch takes the locked path, as before: the
// Reserves are charged, exactly, in more than one round trip each.
func TestMariaDBWithoutCompoundStatements(t *testing.T) {
	ctx := context.Background()
	cfg, err := mysql.ParseDSN(testdb.MySQLDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Params = map[string]string{"sql_mode": "'ORACLE'"}
	db, trips := testdb.MySQLCounting(t, cfg.FormatDSN())
	l, err := Open(ctx, db, MySQL)
	if err != nil {
		t.Fatal(err)
	}
	if l.mariaDBBlocks {
		t.Fatal("Open found compound statements in sql_mode ORACLE")
	}
	for i := range 4 {
		trips.Take()
		r, err := l.Reserve(ctx, proxyAccounts(10), Cost{Epsilon: 0.5}, "locked")
		if err != nil {
			t.Fatal(err)
		}
		if n := trips.Take(); i > 0 && n <= 1 {
			t.Errorf("Reserve %d: %d round trips, want the locked path's", i, n)
		}
		commit(t, r)
	}
	if got := usedBy(t, MySQL, db, "user:alice"); got != 2 {
		t.Errorf("used %v after four statements of 0.5, want 2", got)
	}
}
