package backend

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// PostgresColumnType returns the data type PostgreSQL's information_schema
// gives column of table (schema-qualified, or in the current schema), for
// checks of the configuration at start; it reads the backend's catalog,
// never client SQL. ok is false when there is no such column (a table
// created later) or the backend is not PostgreSQL.
func (b *Backend) PostgresColumnType(ctx context.Context, table, column string) (typ string, ok bool, err error) {
	if b.dialect != sqlrewrite.PostgreSQL {
		return "", false, nil
	}
	schema, name, qualified := strings.Cut(table, ".")
	if !qualified {
		schema, name = "", table
	}
	err = b.db.QueryRowContext(ctx, `SELECT data_type FROM information_schema.columns
		WHERE table_schema = COALESCE(NULLIF($1, ''), current_schema()) AND table_name = $2 AND column_name = $3`,
		schema, name, column).Scan(&typ)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("backend: reading the type of %s.%s: %w", table, column, err)
	}
	return typ, true, nil
}

// MySQLTableEngine returns the storage engine MySQL's or MariaDB's
// information_schema gives table (schema-qualified, or in the current
// database), for checks of the configuration at start. ok is false when
// there is no such base table (a view, a table created later) or the
// backend is not MySQL.
func (b *Backend) MySQLTableEngine(ctx context.Context, table string) (engine string, ok bool, err error) {
	if b.dialect != sqlrewrite.MySQL {
		return "", false, nil
	}
	schema, name, qualified := strings.Cut(table, ".")
	if !qualified {
		schema, name = "", table
	}
	var e sql.NullString
	err = b.db.QueryRowContext(ctx, `SELECT ENGINE FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = COALESCE(NULLIF(?, ''), DATABASE()) AND TABLE_NAME = ? AND TABLE_TYPE = 'BASE TABLE'`,
		schema, name).Scan(&e)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("backend: reading the engine of %s: %w", table, err)
	}
	return e.String, e.Valid, nil
}
