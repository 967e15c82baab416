package catalogdb

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer/analyzererrors"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/planbuilder"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// statementError is err, an error of the engine on query in this session,
// with MySQL's code and text where go-mysql-server's name its own
// (MariaDB 10.11's where MySQL 8's and MariaDB's differ, as columnError
// does), for the errors whose text needs the statement or the session:
//
//   - a table the statement names that is not there is 1146 "Table
//     'db.t' doesn't exist", db its qualifier or the current database;
//     1109 "Unknown table 't' in information_schema" there; and 1046 "No
//     database selected" without a current database (go-mysql-server:
//     "table not found: t");
//   - an ambiguous column is 1052 "Column 'x' in WHERE is ambiguous",
//     naming its clause as columnError does ("ambiguous column name");
//   - an unknown function is 1305 "FUNCTION db.f does not exist"
//     ("function: 'f' not found"), and a call with a wrong number of
//     arguments 1582 "Incorrect parameter count in the call to native
//     function 'f'" ("function 'f' expected 1 arguments, 2 received");
//   - a SET of one variable to a value its set of flags lacks (sql_mode =
//     'NOPE') is 1231 "Variable 'sql_mode' can't be set to the value of
//     'NOPE'" ("value NOPE was not found in the set").
//
// Names are as the statement writes them. Any other error is columnError's,
// and sqlError maps the errors whose text needs neither.
func (s *Session) statementError(query string, err error) error {
	err = columnError(query, err)
	if _, mapped := err.(*Error); mapped {
		return err
	}
	stmt, perr := sqlparser.Parse(sql.RemoveSpaceAndDelimiter(query, ';'))
	if perr != nil {
		return err
	}
	db := s.sess.GetCurrentDatabase()
	if show, isShow := stmt.(*sqlparser.Show); isShow && show.ShowTablesOpt != nil && show.ShowTablesOpt.DbName != "" {
		db = show.ShowTablesOpt.DbName // SHOW COLUMNS FROM t FROM db
	}
	text := err.Error()
	switch {
	case sql.ErrTableNotFound.Is(err):
		name := strings.TrimPrefix(text, "table not found: ")
		if t, ok := tableNamed(stmt, name); ok {
			return noSuchTable(t, db)
		}
	case sql.ErrAmbiguousColumnName.Is(err):
		var name string
		if _, serr := fmt.Sscanf(text, "ambiguous column name %q", &name); serr != nil {
			return err
		}
		f := &clauseFinder{match: func(c *sqlparser.ColName) bool { return c.Qualifier.IsEmpty() && c.Name.EqualString(name) }}
		f.statement(stmt)
		if f.clause == "" {
			return err
		}
		return &Error{Code: 1052, State: "23000", Msg: fmt.Sprintf("Column '%s' in %s is ambiguous", f.name, f.clause)}
	case sql.ErrFunctionNotFound.Is(err):
		name := strings.TrimSuffix(strings.TrimPrefix(text, "function: '"), "' not found")
		if db != "" {
			name = db + "." + name
		}
		return &Error{Code: 1305, State: "42000", Msg: fmt.Sprintf("FUNCTION %s does not exist", name)}
	case sql.ErrInvalidArgumentNumber.Is(err):
		name := strings.SplitN(strings.TrimPrefix(text, "function '"), "'", 2)[0]
		_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
			if f, isCall := n.(*sqlparser.FuncExpr); isCall && strings.EqualFold(f.Name.String(), name) {
				name = f.Name.String()
				return false, errFound
			}
			return true, nil
		}, stmt)
		return &Error{Code: 1582, State: "42000", Msg: fmt.Sprintf("Incorrect parameter count in the call to native function '%s'", name)}
	case sql.ErrInvalidSetValue.Is(err):
		set, ok := stmt.(*sqlparser.Set)
		if !ok || len(set.Exprs) != 1 {
			return err
		}
		value := strings.TrimSuffix(strings.TrimPrefix(text, "value "), " was not found in the set")
		return &Error{Code: 1231, State: "42000", Msg: fmt.Sprintf("Variable '%s' can't be set to the value of '%s'", set.Exprs[0].Name.Name.String(), value)}
	}
	return err
}

// errFound ends a walk once it has found what it looks for.
var errFound = errors.New("found")

// tableNamed is the first table of stmt (SHOW's included) named name,
// without case, as the statement writes it.
func tableNamed(stmt sqlparser.Statement, name string) (found sqlparser.TableName, ok bool) {
	_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
		if t, isTable := n.(sqlparser.TableName); isTable && strings.EqualFold(t.Name.String(), name) {
			found, ok = t, true
			return false, errFound
		}
		return true, nil
	}, stmt)
	return found, ok
}

// noSuchTable is MySQL's error for the table t, which is not there,
// unqualified names being in the database db (the current one).
func noSuchTable(t sqlparser.TableName, db string) *Error {
	if q := t.DbQualifier.String(); q != "" {
		db = q
	}
	switch {
	case db == "":
		return &Error{Code: 1046, State: "3D000", Msg: "No database selected"}
	case strings.EqualFold(db, sql.InformationSchemaDatabaseName):
		return &Error{Code: 1109, State: "42S02", Msg: fmt.Sprintf("Unknown table '%s' in information_schema", t.Name.String())}
	}
	return &Error{Code: 1146, State: "42S02", Msg: fmt.Sprintf("Table '%s.%s' doesn't exist", db, t.Name.String())}
}

// mysqlError is err with MySQL's code and text, for the errors of
// go-mysql-server whose text or code is its own and needs neither the
// statement nor the session (statementError maps those): "database not
// found: d" is 1049 "Unknown database 'd'", and so on; ok is false for any
// other error.
func mysqlError(err error) (e *Error, ok bool) {
	text := err.Error()
	switch {
	case sql.ErrInvalidSystemVariableValue.Is(err):
		return &Error{Code: 1231, State: "42000", Msg: text}, true // MySQL's text, which go-mysql-server sent as 1105
	case sql.ErrSystemVariableReadOnly.Is(err):
		return &Error{Code: 1238, State: "HY000", Msg: text}, true
	case sql.ErrDuplicateAliasOrTable.Is(err):
		return &Error{Code: 1066, State: "42000", Msg: fmt.Sprintf("Not unique table/alias: '%s'", strings.TrimPrefix(text, "Not unique table/alias: "))}, true
	case planbuilder.ErrUnionSchemasDifferentLength.Is(err):
		return &Error{Code: 1222, State: "21000", Msg: "The used SELECT statements have a different number of columns"}, true
	case sql.ErrExpectedSingleRow.Is(err):
		return &Error{Code: 1242, State: "21000", Msg: "Subquery returns more than 1 row"}, true
	case analyzererrors.ErrValidationGroupBy.Is(err):
		expr := strings.TrimSuffix(strings.TrimPrefix(text, "expression '"), "' doesn't appear in the group by expressions")
		return &Error{Code: 1055, State: "42000", Msg: fmt.Sprintf("'%s' isn't in GROUP BY", expr)}, true
	case sql.ErrDatabaseNotFound.Is(err):
		// MySQL's text, as USE answers it; MariaDB answers a SELECT
		// from a table of such a database with 1146 instead.
		return &Error{Code: 1049, State: "42000", Msg: fmt.Sprintf("Unknown database '%s'", strings.TrimPrefix(text, "database not found: "))}, true
	case sql.ErrNoDatabaseSelected.Is(err):
		return &Error{Code: 1046, State: "3D000", Msg: "No database selected"}, true
	case function.ErrTooHighPrecision.Is(err):
		// "Too-big precision 7 for 'now'. Maximum is 6." (the clock
		// functions raise errTooBigPrecision themselves).
		var fsp, most int
		var name string
		if _, serr := fmt.Sscanf(strings.ReplaceAll(text, "'", " "), "Too-big precision %d for %s . Maximum is %d.", &fsp, &name, &most); serr != nil {
			name = "now"
		}
		switch name {
		case "now":
			name = "current_timestamp"
		case "current_time":
			name = "curtime"
		}
		return errTooBigPrecision(name), true
	}
	return nil, false
}
