package catalogdb

import (
	"fmt"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/information_schema"
)

// What an analyst may do is what SHOW GRANTS tells (proxy's answer):
// GRANT SELECT ON `<database>`.* TO `<user>`@`%`, and nothing else. The
// catalog's privilege tables say the same, as MariaDB 10.11 says it for an
// account with that one grant: information_schema.COLUMNS.PRIVILEGES is
// 'select' for every column (of the configured tables and of
// information_schema's), SCHEMA_PRIVILEGES holds the grant on the
// database, USER_PRIVILEGES the account's global USAGE, and
// TABLE_PRIVILEGES and COLUMN_PRIVILEGES nothing. go-mysql-server read
// them from its own grant tables, which are empty here: PRIVILEGES was ''
// and both tables empty, so tools that offer only what the user may do
// (DBeaver, DataGrip) took every column for unreadable.

// columnPrivileges is COLUMNS.PRIVILEGES of every column.
const columnPrivileges = "select"

// selectPrivilege passes the rows of information_schema.COLUMNS with
// PRIVILEGES, the column at index at, set to columnPrivileges.
type selectPrivilege struct {
	sql.RowIter
	at int
}

func (p *selectPrivilege) Next(ctx *sql.Context) (sql.Row, error) {
	row, err := p.RowIter.Next(ctx)
	if err != nil || p.at < 0 || p.at >= len(row) {
		return row, err
	}
	row = row.Copy()
	row[p.at] = columnPrivileges
	return row, nil
}

// privilegesIndex is the position of PRIVILEGES in schema, or -1.
func privilegesIndex(schema sql.Schema) int {
	return schema.IndexOfColName("PRIVILEGES")
}

// grantee is the session user's account as information_schema names it:
// 'user'@'%' (every analyst may connect from any host).
func grantee(ctx *sql.Context) string {
	return fmt.Sprintf("'%s'@'%%'", ctx.Session.Client().User)
}

// sessionGrants makes e's SCHEMA_PRIVILEGES and USER_PRIVILEGES list the
// session user's grants on database.
func sessionGrants(e *sqle.Engine, database string) error {
	for name, rows := range map[string]func(*sql.Context) []sql.Row{
		information_schema.SchemaPrivilegesTableName: func(ctx *sql.Context) []sql.Row {
			return []sql.Row{{grantee(ctx), "def", database, "SELECT", "NO"}}
		},
		information_schema.UserPrivilegesTableName: func(ctx *sql.Context) []sql.Row {
			return []sql.Row{{grantee(ctx), "def", "USAGE", "NO"}}
		},
	} {
		t, ok, err := e.Analyzer.Catalog.InfoSchema.GetTableInsensitive(sql.NewEmptyContext(), name)
		is, isTable := t.(*information_schema.InformationSchemaTable)
		if err != nil || !ok || !isTable {
			return fmt.Errorf("catalogdb: go-mysql-server has no information_schema table %s (%v)", name, err)
		}
		is.Reader = func(ctx *sql.Context, _ sql.Catalog) (sql.RowIter, error) {
			return sql.RowsToRowIter(rows(ctx)...), nil
		}
	}
	return nil
}
