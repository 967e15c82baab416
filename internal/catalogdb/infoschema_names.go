package catalogdb

import (
	"fmt"
	"strings"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/information_schema"
)

// MySQL 8 and MariaDB name information_schema's tables in upper case
// (COLUMNS, TABLES, ...): SHOW TABLES FROM information_schema lists them
// so, and so do the TABLE_NAME columns of information_schema.TABLES and
// COLUMNS for them. go-mysql-server names them in lower case, so that
// SHOW TABLES FROM information_schema LIKE 'COL%' listed nothing (an
// independent review). The functions below rename them where they are
// listed; a statement still finds them under any case, as before.

// upperCaseColumnsTable makes every information_schema.COLUMNS table the
// engine creates (information_schema.NewColumnsTable, a variable the
// package offers for this) list information_schema's tables in upper
// case. It runs once for the process, before any engine answers.
func upperCaseColumnsTable() {
	newColumns := information_schema.NewColumnsTable
	information_schema.NewColumnsTable = func() *information_schema.ColumnsTable {
		c := newColumns()
		read := c.RowIter
		c.RowIter = func(ctx *sql.Context, cat sql.Catalog, all sql.Schema) (sql.RowIter, error) {
			rows, err := read(ctx, cat, all)
			if err != nil {
				return nil, err
			}
			// Every column may be read (privileges.go).
			return &upperCaseNames{RowIter: &selectPrivilege{RowIter: rows, at: privilegesIndex(c.TableSchema)}}, nil
		}
		return c
	}
}

// upperCaseInformationSchema makes e's information_schema list its tables
// in upper case in SHOW TABLES (upperCaseTableNames) and in
// information_schema.TABLES.
func upperCaseInformationSchema(e *sqle.Engine) error {
	cat := e.Analyzer.Catalog
	cat.InfoSchema = upperCaseTableNames{cat.InfoSchema}
	t, ok, err := cat.InfoSchema.GetTableInsensitive(sql.NewEmptyContext(), information_schema.TablesTableName)
	tables, isTable := t.(*information_schema.InformationSchemaTable)
	if err != nil || !ok || !isTable {
		return fmt.Errorf("catalogdb: information_schema.TABLES is a %T (%v)", t, err)
	}
	read := tables.Reader
	tables.Reader = func(ctx *sql.Context, cat sql.Catalog) (sql.RowIter, error) {
		rows, err := read(ctx, cat)
		if err != nil {
			return nil, err
		}
		return &upperCaseNames{RowIter: rows}, nil
	}
	return nil
}

// upperCaseTableNames is information_schema with its table names in upper
// case; finding a table by name is case-insensitive there already.
type upperCaseTableNames struct{ sql.Database }

func (d upperCaseTableNames) GetTableNames(ctx *sql.Context) ([]string, error) {
	names, err := d.Database.GetTableNames(ctx)
	if err != nil {
		return nil, err
	}
	upper := make([]string, len(names))
	for i, n := range names {
		upper[i] = strings.ToUpper(n)
	}
	return upper, nil
}

// upperCaseNames passes the rows of information_schema.TABLES or COLUMNS
// (TABLE_CATALOG, TABLE_SCHEMA, TABLE_NAME, ...) with the TABLE_NAME of
// information_schema's own tables in upper case.
type upperCaseNames struct{ sql.RowIter }

func (u *upperCaseNames) Next(ctx *sql.Context) (sql.Row, error) {
	row, err := u.RowIter.Next(ctx)
	if err != nil || len(row) < 3 {
		return row, err
	}
	schema, _ := row[1].(string)
	name, isText := row[2].(string)
	if !isText || !strings.EqualFold(schema, sql.InformationSchemaDatabaseName) {
		return row, nil
	}
	row = row.Copy()
	row[2] = strings.ToUpper(name)
	return row, nil
}
