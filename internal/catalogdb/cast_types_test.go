package catalogdb

import (
	"context"
	"errors"
	"testing"
)

// A CAST or CONVERT to a DATETIME or TIME of more than 6 digits of a
// second, or to a DECIMAL past 65 digits or 38 after the point, is
// MariaDB's 1426 or 1425 naming the expression (precision first), and to
// a DECIMAL(M, D) of M < D its 1427 (the engine answered 1.5), as a
// statement and as a
// prepared one: the engine panicked on DATETIME(7) (a generic 1105) and
// answered TIME(7) and DECIMAL(70).
func TestCastPrecisionPastItsLimit(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	for _, c := range []struct {
		query string
		want  Error
	}{
		{"SELECT CAST('2020-01-01' AS DATETIME(7))", Error{Code: 1426, State: "42000", Msg: "Too big precision specified for '2020-01-01'. Maximum is 6"}},
		{"SELECT CONVERT('2020-01-01', DATETIME(9))", Error{Code: 1426, State: "42000", Msg: "Too big precision specified for '2020-01-01'. Maximum is 6"}},
		{"SELECT CAST('10:00' AS TIME(7))", Error{Code: 1426, State: "42000", Msg: "Too big precision specified for '10:00'. Maximum is 6"}},
		{"SELECT CAST(1 AS DECIMAL(70))", Error{Code: 1426, State: "42000", Msg: "Too big precision specified for '1'. Maximum is 65"}},
		{"SELECT CAST(1 AS DECIMAL(10, 40))", Error{Code: 1425, State: "42000", Msg: "Too big scale specified for '1'. Maximum is 38"}},
		{"SELECT CAST(1.5 AS DECIMAL(65, 39))", Error{Code: 1425, State: "42000", Msg: "Too big scale specified for '1.5'. Maximum is 38"}},
		{"SELECT CAST(1.5 AS DECIMAL(66, 67))", Error{Code: 1426, State: "42000", Msg: "Too big precision specified for '1.5'. Maximum is 65"}},
		{"SELECT CAST(1.5 AS DECIMAL(5, 6))", Error{Code: 1427, State: "42000", Msg: "For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column '')"}},
		{"SELECT CONVERT('x', DECIMAL(2, 3))", Error{Code: 1427, State: "42000", Msg: "For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column '')"}},
		{"SELECT CAST(1.5 AS DECIMAL(31, 32))", Error{Code: 1427, State: "42000", Msg: "For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column '')"}},
		{"SELECT CAST(1.5 AS DECIMAL(40, 31))", Error{Code: 1235, State: "42000", Msg: "not supported over the catalog: CAST to DECIMAL with 31 digits after the point; the catalog engine computes at most 30: write DECIMAL(M, 30)"}},
		{"SELECT 1 FROM dual WHERE CAST(1 + 2 AS DATETIME(7)) IS NULL", Error{Code: 1426, State: "42000", Msg: "Too big precision specified for '1 + 2'. Maximum is 6"}},
	} {
		_, err := s.Query(context.Background(), c.query)
		var e *Error
		if !errors.As(err, &e) || *e != c.want {
			t.Errorf("%s: %v, want %v", c.query, err, c.want)
		}
		if _, err := s.Describe(context.Background(), c.query); !errors.As(err, &e) || e.Code != c.want.Code {
			t.Errorf("%s described: %v, want %d", c.query, err, c.want.Code)
		}
	}
	r := query(t, s, "SELECT CAST('2020-01-01 10:00:00.123456' AS DATETIME(6)), CAST(1.5 AS DECIMAL(65, 30))")
	if got := r.Rows[0]; got[0] != "2020-01-01 10:00:00.123456" || got[1] != "1.500000000000000000000000000000" {
		t.Errorf("at the limits: %q", got)
	}
}
