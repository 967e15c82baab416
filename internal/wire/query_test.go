package wire

import (
	"database/sql"
	"reflect"
	"strings"
	"testing"
)

// queryPrepared runs query as a prepared statement with args (binary rows).
func queryPrepared(db *sql.DB, query string, args ...any) ([]string, [][]any, error) {
	stmt, err := db.Prepare(query)
	if err != nil {
		return nil, nil, err
	}
	defer stmt.Close()
	return scanAll(stmt.Query(args...))
}

// TestResultsets reads the same typed result through COM_QUERY (text rows)
// and COM_STMT_EXECUTE (binary rows): names and values must survive both,
// including a NULL in the first row, and a result without rows keeps its
// column names.
func TestResultsets(t *testing.T) {
	ts := startServer(t, Config{})
	db := ts.open(t)
	wantText := [][]any{
		{nil, 1.5, []byte("x'y"), []byte{0, 1}, uint64(1 << 63)},
		{int64(-7), nil, nil, nil, uint64(1)},
		{int64(42), -0.25, []byte("ünï"), []byte{}, nil},
	}
	// go-sql-driver returns binary unsigned BIGINTs as int64 when they fit,
	// else as decimal text.
	wantBinary := [][]any{
		{nil, 1.5, []byte("x'y"), []byte{0, 1}, []byte("9223372036854775808")},
		{int64(-7), nil, nil, nil, int64(1)},
		{int64(42), -0.25, []byte("ünï"), []byte{}, nil},
	}
	for _, tc := range []struct {
		name     string
		run      func(query string) ([]string, [][]any, error)
		query    string
		wantCols []string
		wantRows [][]any
	}{
		{"text", func(q string) ([]string, [][]any, error) { return scanAll(db.Query(q)) }, qRows, rowsColumns, wantText},
		{"binary", func(q string) ([]string, [][]any, error) { return queryPrepared(db, q) }, qRows, rowsColumns, wantBinary},
		{"text, no rows", func(q string) ([]string, [][]any, error) { return scanAll(db.Query(q)) }, qEmpty, []string{"a", "b"}, nil},
		{"binary, no rows", func(q string) ([]string, [][]any, error) { return queryPrepared(db, q) }, qEmpty, []string{"a", "b"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cols, rows, err := tc.run(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cols, tc.wantCols) {
				t.Errorf("got columns %q, want %q", cols, tc.wantCols)
			}
			if !reflect.DeepEqual(rows, tc.wantRows) {
				t.Errorf("got rows %#v, want %#v", rows, tc.wantRows)
			}
		})
	}
}

// TestErrorMapping checks what the client sees for each kind of session
// error, through COM_QUERY and through a prepared statement.
func TestErrorMapping(t *testing.T) {
	ts := startServer(t, Config{})
	db := ts.open(t)
	for _, tc := range []struct {
		query     string
		wantCode  uint16
		wantState string
		wantMsg   string // prefix
	}{
		{qCoded, 1226, "42000", codedErr.msg},
		{qWrapped, 1226, "42000", codedErr.msg},
		{qPlain, 1105, "HY000", "internal error (ref "},
		{qBadRow, 1105, "HY000", "internal error (ref "},
	} {
		for _, mode := range []string{"text", "prepared"} {
			t.Run(tc.query+"/"+mode, func(t *testing.T) {
				var err error
				if mode == "text" {
					_, _, err = scanAll(db.Query(tc.query))
				} else {
					_, _, err = queryPrepared(db, tc.query)
				}
				me := mysqlError(t, err)
				if me.Number != tc.wantCode || string(me.SQLState[:]) != tc.wantState || !strings.HasPrefix(me.Message, tc.wantMsg) {
					t.Errorf("got %d (%s) %q, want %d (%s) %q...", me.Number, me.SQLState[:], me.Message, tc.wantCode, tc.wantState, tc.wantMsg)
				}
				if strings.Contains(me.Message, "salary") {
					t.Errorf("got message %q, want no trace of the session's error text", me.Message)
				}
			})
		}
	}
	if !strings.Contains(ts.logs.String(), plainSecret) {
		t.Errorf("the log lacks the internal error's text %q", plainSecret)
	}
	// The connection stays usable after errors.
	if _, rows, err := scanAll(db.Query("still alive")); err != nil || len(rows) != 1 {
		t.Errorf("got %v, %v after errors, want one row", rows, err)
	}
}

// TestPreparedArguments checks the text the session receives when
// go-sql-driver (without interpolateParams) executes a statement with
// arguments: each argument becomes a literal in place of its marker.
func TestPreparedArguments(t *testing.T) {
	ts := startServer(t, Config{})
	db := ts.open(t)
	for _, tc := range []struct {
		name  string
		query string
		args  []any
		want  string
	}{
		{"integers", "SELECT COUNT(*) FROM t WHERE a BETWEEN ? AND ?", []any{int64(-5), uint64(1 << 63)},
			"SELECT COUNT(*) FROM t WHERE a BETWEEN -5 AND 9223372036854775808"},
		{"floats", "SELECT AVG(x) FROM t WHERE x > ? AND y < ?", []any{0.25, 1e-7}, "SELECT AVG(x) FROM t WHERE x > 2.5e-01 AND y < 1e-07"},
		{"bool", "SELECT ?", []any{true}, "SELECT 1"},
		{"null", "SELECT ?", []any{nil}, "SELECT NULL"},
		{"string with quotes and backslashes", "SELECT COUNT(*) FROM t WHERE s = ?", []any{`it's \' -- ?`},
			`SELECT COUNT(*) FROM t WHERE s = 'it''s \\'' -- ?'`},
		{"bytes", "SELECT ?", []any{[]byte("a'b")}, "SELECT 'a''b'"},
		{"markers in literals and comments stay", "SELECT '?', `?`, ? /* ? */ -- ?\n", []any{int64(1)},
			"SELECT '?', `?`, 1 /* ? */ -- ?\n"},
		{"minus before a negative number", "SELECT 1 -?", []any{int64(-2)}, "SELECT 1 - -2"},
		{"adjacent markers", "SELECT ??", []any{"a", "b"}, "SELECT 'a' 'b'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, rows, err := scanAll(db.Query(tc.query, tc.args...))
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 1 || string(rows[0][0].([]byte)) != tc.want {
				t.Errorf("got %q, want %q", rows, tc.want)
			}
		})
	}
}
