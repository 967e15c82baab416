package catalogdb

import (
	"context"
	"errors"
	"testing"

	"github.com/dolthub/go-mysql-server/sql/expression/function"
)

// TestEngineErrorsInMySQLWords: the engine's errors reach the client with
// MySQL's codes and texts (MariaDB 10.11's, checked against it, where the
// two differ), naming the tables, columns and functions as the statement
// writes them. They were go-mysql-server's own ("table not found: t",
// "database not found: mysql", "ambiguous column name ...", "function:
// 'f' not found"), some with its codes (1105 for a bad SET value).
func TestEngineErrorsInMySQLWords(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	s.SetDatabase("dpproxy")
	for _, c := range []struct {
		query string
		code  uint16
		msg   string
	}{
		{"SELECT * FROM mysql.user", 1049, "Unknown database 'mysql'"},
		{"SELECT * FROM Secret_tbl", 1146, "Table 'dpproxy.Secret_tbl' doesn't exist"},
		{"SHOW COLUMNS FROM secret_tbl", 1146, "Table 'dpproxy.secret_tbl' doesn't exist"},
		{"SHOW COLUMNS FROM secret_tbl FROM dpproxy", 1146, "Table 'dpproxy.secret_tbl' doesn't exist"},
		{"SHOW CREATE TABLE nodb.secret_tbl", 1049, "Unknown database 'nodb'"},
		{"SHOW TABLES FROM nodb", 1049, "Unknown database 'nodb'"},
		{"SELECT * FROM information_schema.nosuch", 1109, "Unknown table 'nosuch' in information_schema"},
		{"SELECT c.TABLE_NAME FROM information_schema.COLUMNS c, information_schema.TABLES t WHERE TABLE_NAME = 'x'", 1052, "Column 'TABLE_NAME' in WHERE is ambiguous"},
		{"SELECT nosuchfunc(1)", 1305, "FUNCTION dpproxy.nosuchfunc does not exist"},
		{"SELECT Abs(1, 2)", 1582, "Incorrect parameter count in the call to native function 'Abs'"},
		{"SET autocommit = 5", 1231, "Variable 'autocommit' can't be set to the value of '5'"},
		{"SET sql_mode = 'NOPE'", 1231, "Variable 'sql_mode' can't be set to the value of 'NOPE'"},
		{"SET @@version = 'x'", 1238, "Variable 'version' is a read only variable"},
		{"SELECT * FROM information_schema.TABLES t JOIN information_schema.COLUMNS t", 1066, "Not unique table/alias: 't'"},
		{"SELECT 1 UNION SELECT 1, 2", 1222, "The used SELECT statements have a different number of columns"},
		{"SELECT (SELECT TABLE_NAME FROM information_schema.TABLES)", 1242, "Subquery returns more than 1 row"},
		{"SELECT TABLE_NAME FROM information_schema.TABLES GROUP BY TABLE_SCHEMA", 1055, "'tables.TABLE_NAME' isn't in GROUP BY"},
	} {
		_, err := s.Query(context.Background(), c.query)
		var e *Error
		if !errors.As(err, &e) || e.Code != c.code || e.Msg != c.msg {
			t.Errorf("%s: %v (%+v), want %d %q", c.query, err, e, c.code, c.msg)
		}
	}
	// In information_schema, an unqualified table is one of its tables;
	// without a current database, there is none.
	s.SetDatabase("information_schema")
	for q, want := range map[string]string{"SELECT COUNT(*) FROM pums": "Unknown table 'pums' in information_schema", "SHOW COLUMNS FROM pums": "Unknown table 'pums' in information_schema"} {
		if _, err := s.Query(context.Background(), q); err == nil || err.Error() != want {
			t.Errorf("in information_schema, %s: %v, want %q", q, err, want)
		}
	}
	s.SetDatabase("")
	var e *Error
	if _, err := s.Query(context.Background(), "SELECT * FROM visits"); !errors.As(err, &e) || e.Code != 1046 || e.Msg != "No database selected" {
		t.Errorf("without a database, SELECT * FROM visits: %v, want 1046 No database selected", err)
	}
}

// go-mysql-server's ErrTooHighPrecision, raised where the clock functions
// do not raise MariaDB's 1426 themselves, is that 1426, naming the
// function as MariaDB does (it was 1105 "Too-big precision 7 for 'now'").
func TestTooHighPrecisionMapped(t *testing.T) {
	for name, want := range map[string]string{"now": "current_timestamp", "current_time": "curtime", "sysdate": "sysdate"} {
		err := sqlError(function.ErrTooHighPrecision.New(7, name, 6))
		if e, ok := err.(*Error); !ok || *e != (Error{Code: 1426, State: "42000", Msg: "Too big precision specified for '" + want + "'. Maximum is 6"}) {
			t.Errorf("ErrTooHighPrecision for %s: %#v", name, err)
		}
	}
}
