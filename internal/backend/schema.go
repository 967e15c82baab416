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
