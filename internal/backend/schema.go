package backend

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// CheckTemporalColumns reads, on PostgreSQL, the type of every backend
// column the configuration declares a date or a timestamp, and refuses one
// that holds neither: the proxy reads such a column as CAST(c AS DATE) or
// CAST(c AS TIMESTAMP) (sqlrewrite's wall clock), which on text raises an
// error for a row that holds no date, an error that would depend on the
// data. A column it cannot find (a table created later) is not refused;
// elsewhere nothing is checked: MySQL's date functions read text that is
// no date as NULL, SQLite's reading rule likewise (sqlrewrite dateReadable).
// It reads the backend's catalog, never client SQL.
func (b *Backend) CheckTemporalColumns(ctx context.Context, tables []catalog.Table) error {
	if b.dialect != sqlrewrite.PostgreSQL {
		return nil
	}
	var bad []string
	for _, t := range tables {
		schema, table, qualified := strings.Cut(t.Source, ".")
		if !qualified {
			schema, table = "", t.Source
		}
		for _, c := range t.Columns {
			if !c.Temporal() {
				continue
			}
			var typ string
			err := b.db.QueryRowContext(ctx, `SELECT data_type FROM information_schema.columns
				WHERE table_schema = COALESCE(NULLIF($1, ''), current_schema()) AND table_name = $2 AND column_name = $3`,
				schema, table, c.Source).Scan(&typ)
			switch {
			case errors.Is(err, sql.ErrNoRows):
				continue
			case err != nil:
				return fmt.Errorf("backend: reading the type of %s.%s: %w", t.Source, c.Source, err)
			}
			switch typ {
			case "date", "timestamp without time zone", "timestamp with time zone":
			default:
				bad = append(bad, fmt.Sprintf("%s.%s (declared %s, a PostgreSQL %s)", t.Name, c.Name, c.Type, typ))
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("configuration: %s: a date or timestamp column must be of a date or timestamp type in PostgreSQL (read as text, a row holding no date would make statements fail, a failure that depends on the data)", strings.Join(bad, "; "))
	}
	return nil
}
