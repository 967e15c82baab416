package catalogdb

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// go-mysql-server's DATE_FORMAT, TIME_FORMAT and FROM_UNIXTIME(n, format)
// take time quadratic in the format's length and never read the
// statement's deadline: DATE_FORMAT('2020-01-01', REPEAT('%Y', 200000))
// held an engine slot for 107 s. A format longer than maxDateFormat bytes
// is refused with 1235 before anything is formatted, however it is
// computed; one of maxDateFormat bytes is formatted.
func TestLongDateFormatRefused(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	for _, q := range []string{
		"SELECT LENGTH(DATE_FORMAT('2020-01-01', REPEAT('%Y', 20000)))",
		"SELECT LENGTH(DATE_FORMAT('2020-01-01', REPEAT('%%', 513)))",
		"SELECT LENGTH(DATE_FORMAT(NOW(), CONCAT(REPEAT('a', 1024), '%Y')))",
		"SELECT LENGTH(FROM_UNIXTIME(0, REPEAT('%Y', 20000)))",
		"SELECT LENGTH(FROM_UNIXTIME(0, REPEAT('x', 1025)))",
		"SELECT LENGTH(TIME_FORMAT('10:00:00', REPEAT('%%a', 20000)))",
		"SELECT LENGTH(TIME_FORMAT('10:00:00', REPEAT('%H', 513)))",
		"SELECT DATE_FORMAT(d, f) FROM (SELECT '2020-01-01' AS d, REPEAT('%d', 600) AS f) x",
	} {
		start := time.Now()
		_, err := s.Query(context.Background(), q)
		var e *Error
		if !errors.As(err, &e) || e.Code != 1235 || e.State != "42000" || !strings.Contains(e.Msg, "at most 1024 bytes") {
			t.Errorf("%s: %v, want 1235 naming the bound of 1024 bytes", q, err)
		}
		if d := time.Since(start); d > 200*time.Millisecond {
			t.Errorf("%s: took %v", q, d)
		}
	}
	for q, want := range map[string]string{
		"SELECT LENGTH(DATE_FORMAT('2020-01-01', REPEAT('%Y', 512)))":    "2048",
		"SELECT LENGTH(FROM_UNIXTIME(0, REPEAT('%Y', 512)))":             "2048",
		"SELECT LENGTH(TIME_FORMAT('10:00:00', REPEAT('%H', 512)))":      "1024",
		"SELECT DATE_FORMAT('2020-01-02 03:04:05', '%Y-%m-%d %H:%i:%s')": "2020-01-02 03:04:05",
		"SELECT TIME_FORMAT('10:11:12', '%H.%i.%s')":                     "10.11.12",
		"SELECT DATE_FORMAT(NULL, REPEAT('%Y', 20000)) IS NULL":          "1",
	} {
		r := query(t, s, q)
		if got := r.Rows[0][0]; got != want {
			t.Errorf("%s = %v, want %s", q, got, want)
		}
	}
}
