package sqlrewrite

import (
	"database/sql"
	"fmt"
	"math"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestMySQLClampEqualsCase: on MySQL/MariaDB, the LEAST/GREATEST clamp
// (mysqlClamp) and its square (clampSquared) give every value that a
// column of each numeric type can hold the same result as the CASE clamp
// and its square that they replaced (the form SQLite and PostgreSQL keep,
// rendered with MySQL's quoting and types), the clamp also as ClampValue:
// NULL for NULL, else the same double bit for bit (the sign of a zero
// included), with and without the flush of tiny magnitudes, for integers
// and DECIMALs beyond 2^53 and values far beyond the bounds; and the result
// is a DOUBLE. ±Inf and NaN are tried as bound doubles (the binary
// protocol); a column that refuses them has no such values to clamp.
func TestMySQLClampEqualsCase(t *testing.T) {
	db := testdb.MySQL(t)
	m := catalog.MinBoundMagnitude
	bounds := [][2]float64{
		{0, 100}, {-catalog.MaxBoundMagnitude, catalog.MaxBoundMagnitude}, {0, catalog.MaxBoundMagnitude},
		{m, 2 * m}, {-1, -m}, {-m, m}, {-m, 1}, {1e-100, 1e100}, {-10, 10}, {18.5, 90}, {0.1, 0.3},
		{0, 0}, {-5, 0}, {1 << 53, 1 << 62}, {-(1 << 63), -(1 << 53)},
	}
	values := []string{"NULL", "0", "-0e0", "1e-200", "-1e-200", "5e-324", "-5e-324", "2.2250738585072014e-308",
		"3.8725919148493183e-121", "3.8e-121", "-3.8725919148493183e-121", "1e-30", "-1e-30", "1e300", "-1e300",
		"1.7976931348623157e308", "-1.7976931348623157e308", "9223372036854775807", "-9223372036854775808",
		"18446744073709551615", "9007199254740993", "-9007199254740993", "4611686018427387905", "50", "50.5", "0.1",
		"0.3", "0.30000000000000004", "-0.5", "18.5", "99.99", "100", "100.000000000000000000000000001", "-1", "1",
		"-10", "1e35", "-99999999999999999999999999999999999.999999999999999999999999999999"}
	caseClamp := &renderer{spec: dialects[MySQL]}
	caseClamp.spec.name = "mysql, the CASE form" // any name but mysql renders the CASE
	mysql := &renderer{spec: dialects[MySQL]}
	for i, typ := range []string{"DOUBLE", "FLOAT", "BIGINT", "BIGINT UNSIGNED", "INT", "TINYINT", "DECIMAL(65,30)", "DECIMAL(65,0)"} {
		table := fmt.Sprintf("dp_clamp%d", i)
		if _, err := db.Exec("CREATE TABLE " + table + " (c " + typ + ")"); err != nil {
			t.Fatal(err)
		}
		held := 0
		for _, v := range values {
			// A value the column cannot hold is refused (strict mode): skipped.
			if _, err := db.Exec("INSERT INTO " + table + " (c) VALUES (" + v + ")"); err == nil {
				held++
			}
		}
		for _, v := range []float64{math.Inf(1), math.Inf(-1), math.NaN()} {
			if _, err := db.Exec("INSERT INTO "+table+" (c) VALUES (?)", v); err == nil {
				t.Logf("%s accepts %v (as its conversion)", typ, v)
			}
		}
		if held < 10 {
			t.Fatalf("%s holds only %d of the values", typ, held)
		}
		for _, b := range bounds {
			lo, hi := b[0], b[1]
			oldExpr, err := caseClamp.clamp("`c`", lo, hi)
			if err != nil {
				t.Fatal(err)
			}
			newExpr, err := mysql.clamp("`c`", lo, hi)
			if err != nil {
				t.Fatal(err)
			}
			newSquared, err := mysql.clampSquared("`c`", lo, hi)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := db.Query("SELECT CAST(c AS CHAR), CAST(c AS DOUBLE), " + oldExpr + ", " + newExpr + ", " +
				oldExpr + " * " + oldExpr + ", " + newSquared + " FROM " + table)
			if err != nil {
				t.Fatalf("%s [%g, %g]: %v\n%s", typ, lo, hi, err, newExpr)
			}
			// A DOUBLE, so that arithmetic on it is in doubles (a DECIMAL
			// literal bound would make it a DECIMAL for an integer column).
			types, err := rows.ColumnTypes()
			if err != nil {
				t.Fatal(err)
			}
			for _, i := range []int{3, 5} {
				if got := types[i].DatabaseTypeName(); got != "DOUBLE" {
					t.Errorf("%s [%g, %g]: column %d is a %s, not a DOUBLE", typ, lo, hi, i, got)
				}
			}
			n := 0
			for rows.Next() {
				var text sql.NullString
				var raw, old, got, oldSquare, square sql.NullFloat64
				if err := rows.Scan(&text, &raw, &old, &got, &oldSquare, &square); err != nil {
					t.Fatal(err)
				}
				n++
				name := fmt.Sprintf("%s %s in [%g, %g]", typ, text.String, lo, hi)
				switch {
				case old.Valid != got.Valid || old.Valid && math.Float64bits(old.Float64) != math.Float64bits(got.Float64):
					t.Errorf("%s: CASE %v (valid %v), LEAST/GREATEST %v (valid %v)", name, old.Float64, old.Valid, got.Float64, got.Valid)
				case got.Valid != raw.Valid:
					t.Errorf("%s: clamp valid %v, value valid %v", name, got.Valid, raw.Valid)
				case raw.Valid && math.Float64bits(got.Float64) != math.Float64bits(ClampValue(raw.Float64, lo, hi)):
					t.Errorf("%s: clamp %v, ClampValue %v", name, got.Float64, ClampValue(raw.Float64, lo, hi))
				case oldSquare.Valid != square.Valid || square.Valid && math.Float64bits(oldSquare.Float64) != math.Float64bits(square.Float64):
					t.Errorf("%s: squared, CASE %v (valid %v), LEAST/GREATEST %v (valid %v)", name, oldSquare.Float64, oldSquare.Valid, square.Float64, square.Valid)
				}
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			rows.Close()
			if n < held {
				t.Fatalf("%s: %d rows read, %d inserted", typ, n, held)
			}
		}
	}
}
