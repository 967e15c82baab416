package backend

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/lib/pq"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ColumnType returns the data type of column of table (a table or a view;
// schema-qualified, or unqualified) on PostgreSQL and MySQL/MariaDB, in
// lower case, for checks of the configuration at start; it reads the
// backend's catalog, never client SQL. The relation is the one the proxy's
// fetches read, whose names are quoted: on PostgreSQL an unqualified name
// is resolved along the search path (to_regclass of the quoted name), and
// the type is pg_attribute's, a domain's base type for a domain, named as
// information_schema names it (format_type), so that materialized views,
// which information_schema omits, are checked too; on MySQL it is
// information_schema's DATA_TYPE, in the current database. ok is false
// when there is no such column (a table created later) or on SQLite.
func (b *Backend) ColumnType(ctx context.Context, table, column string) (typ string, ok bool, err error) {
	var query string
	var args []any
	schema, name, qualified := strings.Cut(table, ".")
	switch b.dialect {
	case sqlrewrite.PostgreSQL:
		query = `SELECT format_type(CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE a.atttypid END, NULL)
		FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
		WHERE a.attrelid = to_regclass($1) AND a.attname = $2 AND a.attnum > 0 AND NOT a.attisdropped`
		quoted := `"` + table + `"`
		if qualified {
			quoted = `"` + schema + `"."` + name + `"`
		}
		args = []any{quoted, column}
	case sqlrewrite.MySQL:
		query = `SELECT DATA_TYPE FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = COALESCE(NULLIF(?, ''), DATABASE()) AND TABLE_NAME = ? AND COLUMN_NAME = ?`
		if !qualified {
			schema, name = "", table
		}
		args = []any{schema, name, column}
	default:
		return "", false, nil
	}
	err = b.db.QueryRowContext(ctx, query, args...).Scan(&typ)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("backend: reading the type of %s.%s: %w", table, column, err)
	}
	return strings.ToLower(typ), true, nil
}

// HasColumn reports whether table (a table or a view, schema-qualified
// or not) has column, reading the backend's catalog only, never the
// table's rows, so that the answer depends on the schema alone (an empty
// table has its columns): on PostgreSQL and MySQL/MariaDB as ColumnType
// finds it, on SQLite by pragma_table_info, which resolves an unqualified
// name as the fetches' queries do (temp, main, then attached databases)
// and compares names without case, as SQLite does. A name SQLite cannot
// resolve (a schema not attached; a view over a table dropped since)
// fails with SQLITE_ERROR, as the fetches would: it has no column, as
// MariaDB's information_schema and PostgreSQL's to_regclass find none.
func (b *Backend) HasColumn(ctx context.Context, table, column string) (bool, error) {
	if b.dialect != sqlrewrite.SQLite {
		_, ok, err := b.ColumnType(ctx, table, column)
		return ok, err
	}
	query, args := "SELECT 1 FROM pragma_table_info(?) WHERE name = ? COLLATE NOCASE", []any{table, column}
	if schema, name, qualified := strings.Cut(table, "."); qualified {
		query, args = "SELECT 1 FROM pragma_table_info(?, ?) WHERE name = ? COLLATE NOCASE", []any{name, schema, column}
	}
	var one int
	err := b.db.QueryRowContext(ctx, query, args...).Scan(&one)
	var sqliteErr *sqlite.Error
	switch {
	case errors.Is(err, sql.ErrNoRows), errors.As(err, &sqliteErr) && sqliteErr.Code() == sqlite3.SQLITE_ERROR:
		return false, nil
	case err != nil:
		return false, fmt.Errorf("backend: reading the columns of %s: %w", table, err)
	}
	return true, nil
}

// SetBooleans records the columns of the configured table (a
// catalog.Table.Name, which may share its backend table with others that
// declare the columns differently) that it declares integer and that
// PostgreSQL stores as boolean, as the caller just read their types
// (ColumnType), replacing what it recorded for the table before. Every
// later fetch that reads the table by those declarations
// (sqlrewrite.Fetch.Declared) reads them as
// numbers, 1 for true and 0 for false (sqlrewrite.Fetch.Booleans). A
// table altered since its types were read is rendered by the old record
// until the next call; the rendering of a boolean fails, whatever the
// rows, on a column of any other type, as a comparison of a boolean with
// a number does, so the outcome still depends on the types alone. Safe
// for concurrent use.
func (b *Backend) SetBooleans(table string, columns []string) {
	b.booleansMu.Lock()
	defer b.booleansMu.Unlock()
	if len(columns) == 0 {
		delete(b.booleans, table)
		return
	}
	if b.booleans == nil {
		b.booleans = map[string][]string{}
	}
	b.booleans[table] = slices.Clone(columns)
}

// rendered is a fetch's SQL: the text and bind arguments sent, and the
// text to log, which holds no number placed by the data (the ranks of a
// window are arguments, or on Vitess written as ?: sqlrewrite.Render,
// sqlrewrite.RenderVitess).
type rendered struct {
	text   string
	args   []any
	logged string
}

// render renders f in the backend's dialect, with the boolean columns of
// the configured table it reads (SetBooleans). On Vitess it is rendered
// for vtgate (sqlrewrite.RenderVitess): no bind arguments (go-sql-driver
// sends a query with arguments as a server-side prepared statement, whose
// binary results vtgate mislabels, so that grouped sums were read from
// the wrong bytes), and the keys vtgate merges (COUNT(DISTINCT), partition
// selection's text keys) hashed to short binary strings, which the shards
// sort as vtgate compares them.
func (b *Backend) render(f sqlrewrite.Fetch) (rendered, error) {
	b.booleansMu.Lock()
	f.Booleans = b.booleans[f.Declared]
	b.booleansMu.Unlock()
	if b.dialect == sqlrewrite.MySQL && b.knownVitess() {
		text, logged, err := sqlrewrite.RenderVitess(f, b.dialect)
		return rendered{text: text, logged: logged}, err
	}
	text, args, err := sqlrewrite.Render(f, b.dialect)
	return rendered{text: text, args: args, logged: text}, err
}

// ColumnCharset returns the character set text values of column of
// table are compared in, and its collation, for the check of text
// constants (catalog.Charset): on MySQL/MariaDB information_schema's
// CHARACTER_SET_NAME and COLLATION_NAME, "binary" and "" for a column of a
// type without one (VARBINARY, BLOB, a number), in the current database
// unless table is schema-qualified; on PostgreSQL the database's encoding
// as PostgreSQL names it (LATIN1, UTF8, SQL_ASCII), which every text bind
// argument is converted to, and "". ok is false when the MySQL column
// does not exist (a table created later) and on SQLite.
func (b *Backend) ColumnCharset(ctx context.Context, table, column string) (charset, collation string, ok bool, err error) {
	var row *sql.Row
	switch b.dialect {
	case sqlrewrite.PostgreSQL:
		row = b.db.QueryRowContext(ctx, "SELECT pg_encoding_to_char(encoding), '' FROM pg_database WHERE datname = current_database()")
	case sqlrewrite.MySQL:
		schema, name, qualified := strings.Cut(table, ".")
		if !qualified {
			schema, name = "", table
		}
		row = b.db.QueryRowContext(ctx, `SELECT COALESCE(CHARACTER_SET_NAME, 'binary'), COALESCE(COLLATION_NAME, '') FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = COALESCE(NULLIF(?, ''), DATABASE()) AND TABLE_NAME = ? AND COLUMN_NAME = ?`, schema, name, column)
	default:
		return "", "", false, nil
	}
	err = row.Scan(&charset, &collation)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", "", false, nil
	case err != nil:
		return "", "", false, fmt.Errorf("backend: reading the character set of %s.%s: %w", table, column, err)
	}
	return charset, collation, true, nil
}

// EqualValues returns the first two of values, by index (i < j), that
// column of table (as ColumnCharset finds it) compares equal, for the
// check of a text column's declared domain: on MySQL/MariaDB in the
// column's character set and collation (its _ci defaults fold case and
// accents, and PAD SPACE ones ignore trailing spaces), on PostgreSQL as
// its type and collation compare (a nondeterministic ICU collation,
// citext, char(n)'s trailing spaces). Two such values would name one class
// of rows, which the first takes. The backend groups the values as
// constants: it reads the schema, never the table's rows. in names what
// equates them: the MySQL collation, or the PostgreSQL type and
// collation ("text COLLATE public.ci"); it is "" when no two are equal,
// and on a column without a collation (binary, numeric; the
// configuration's own check finds values equal byte for byte), a column
// not found, or SQLite. Every value must be representable in the
// column's character set (catalog.Representable).
func (b *Backend) EqualValues(ctx context.Context, table, column string, values []string) (i, j int, in string, err error) {
	if len(values) < 2 {
		return 0, 0, "", nil
	}
	var query string
	var args []any
	switch b.dialect {
	case sqlrewrite.PostgreSQL:
		quoted := `"` + table + `"`
		if schema, name, qualified := strings.Cut(table, "."); qualified {
			quoted = `"` + schema + `"."` + name + `"`
		}
		var typ, collation string
		err = b.db.QueryRowContext(ctx, `SELECT format_type(CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE a.atttypid END, NULL),
			quote_ident(n.nspname) || '.' || quote_ident(c.collname)
			FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
			JOIN pg_collation c ON c.oid = a.attcollation JOIN pg_namespace n ON n.oid = c.collnamespace
			WHERE a.attrelid = to_regclass($1) AND a.attname = $2 AND a.attnum > 0 AND NOT a.attisdropped`, quoted, column).Scan(&typ, &collation)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, 0, "", nil // not found, or of a type without a collation
		}
		if err != nil {
			return 0, 0, "", fmt.Errorf("backend: reading the collation of %s.%s: %w", table, column, err)
		}
		in = typ + " COLLATE " + collation
		// format_type and quote_ident quote what needs quoting.
		query = "SELECT MIN(i) - 1, MAX(i) - 1 FROM unnest(CAST($1 AS text[])) WITH ORDINALITY AS u(v, i) GROUP BY CAST(v AS " + typ + ") COLLATE " + collation +
			" HAVING COUNT(*) > 1 ORDER BY 1 LIMIT 1"
		args = []any{pq.Array(values)}
	case sqlrewrite.MySQL:
		charset, collation, ok, err := b.ColumnCharset(ctx, table, column)
		if err != nil || !ok || collation == "" {
			return 0, 0, "", err
		}
		in = collation
		if !collationName.MatchString(charset) || !collationName.MatchString(collation) {
			return 0, 0, "", fmt.Errorf("backend: unexpected character set %q or collation %q of %s.%s", charset, collation, table, column)
		}
		// Each value is written as its UTF-8 bytes in hex, converted:
		// no text of the configuration is spliced in, and no bind
		// arguments, which behind Vitess would make a prepared statement
		// (render).
		var sb strings.Builder
		for k, v := range values {
			if k > 0 {
				sb.WriteString(" UNION ALL ")
			}
			fmt.Fprintf(&sb, "SELECT %d AS i, CONVERT(_utf8mb4 X'%x' USING %s) COLLATE %s AS v", k, v, charset, collation)
		}
		query = "SELECT MIN(i), MAX(i) FROM (" + sb.String() + ") AS u GROUP BY v HAVING COUNT(*) > 1 ORDER BY 1 LIMIT 1"
	default:
		return 0, 0, "", nil
	}
	err = b.db.QueryRowContext(ctx, query, args...).Scan(&i, &j)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, 0, "", nil
	case err != nil:
		return 0, 0, "", fmt.Errorf("backend: comparing the values declared for %s.%s: %w", table, column, err)
	}
	return i, j, in, nil
}

// collationName matches the character set and collation names
// EqualValues writes into its query, as information_schema gives them.
var collationName = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// MySQLBaseEngines returns the storage engines of the base tables table
// reads on MySQL or MariaDB (schema-qualified, or in the current
// database), keyed by schema.name, for checks of the configuration at
// start: the table itself, or for a view every base table its definition
// names, through views of views. A view's definition in
// information_schema names tables `schema`.`name`; every such pair that
// is a table is taken, and pairs that are not (column references) match
// none. Nothing for a table that does not exist (created later) or on
// other backends.
func (b *Backend) MySQLBaseEngines(ctx context.Context, table string) (map[string]string, error) {
	if b.dialect != sqlrewrite.MySQL {
		return nil, nil
	}
	schema, name, qualified := strings.Cut(table, ".")
	if !qualified {
		if err := b.db.QueryRowContext(ctx, "SELECT COALESCE(DATABASE(), '')").Scan(&schema); err != nil {
			return nil, fmt.Errorf("backend: reading the current database: %w", err)
		}
		name = table
	}
	engines := map[string]string{}
	seen := map[[2]string]bool{}
	var visit func(schema, name string, depth int) error
	visit = func(schema, name string, depth int) error {
		key := [2]string{schema, name}
		if seen[key] {
			return nil
		}
		seen[key] = true
		if depth > maxViewDepth {
			return fmt.Errorf("backend: views nested deeper than %d under %s", maxViewDepth, table)
		}
		var kind string
		var engine, definition sql.NullString
		err := b.db.QueryRowContext(ctx, `SELECT t.TABLE_TYPE, t.ENGINE, v.VIEW_DEFINITION FROM information_schema.TABLES t
			LEFT JOIN information_schema.VIEWS v ON v.TABLE_SCHEMA = t.TABLE_SCHEMA AND v.TABLE_NAME = t.TABLE_NAME
			WHERE t.TABLE_SCHEMA = ? AND t.TABLE_NAME = ?`, schema, name).Scan(&kind, &engine, &definition)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return nil
		case err != nil:
			return fmt.Errorf("backend: reading the engine of %s.%s: %w", schema, name, err)
		case kind != "VIEW":
			engines[schema+"."+name] = engine.String
			return nil
		}
		for _, m := range qualifiedName.FindAllStringSubmatch(definition.String, -1) {
			unquote := func(s string) string { return strings.ReplaceAll(s, "``", "`") }
			if err := visit(unquote(m[1]), unquote(m[2]), depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return engines, visit(schema, name, 0)
}

// maxViewDepth bounds the nesting of views MySQLBaseEngines follows.
const maxViewDepth = 16

// qualifiedName matches `a`.`b` in a view definition (“ is a quoted `).
var qualifiedName = regexp.MustCompile("`((?:[^`]|``)+)`\\.`((?:[^`]|``)+)`")

// VitessOLAP reports whether the backend's vtgate serves this proxy's
// connections with workload OLAP (false on any other backend). Without it
// a vttablet refuses a shard's answer of more than 10,000 rows, so a
// statement whose fetch reads that many rows of one shard (a window, the
// regression's pairs, the counts of many keys) would fail on some data and
// answer on other.
func (b *Backend) VitessOLAP(ctx context.Context) (bool, error) {
	if !b.Vitess(ctx) {
		return false, nil
	}
	var workload string
	if err := b.db.QueryRowContext(ctx, "SELECT @@workload").Scan(&workload); err != nil {
		return false, fmt.Errorf("backend: reading vtgate's workload: %w", err)
	}
	return strings.EqualFold(workload, "olap"), nil
}

// PartitionsCover reports, on PostgreSQL, whether the relations partitions
// hold exactly the rows of the partitioned table table, each row in one of
// them: their leaf partitions (a listed relation that is itself
// partitioned counts by its leaves; one outside any partition tree counts
// as itself, and a name that finds no relation as none) are the table's
// leaf partitions, each once. Names are quoted as the proxy's fetches
// quote them. checked is false when table is not a partitioned table (or
// not found), which this cannot judge.
func (b *Backend) PartitionsCover(ctx context.Context, table string, partitions []string) (covers, checked bool, err error) {
	if b.dialect != sqlrewrite.PostgreSQL {
		return false, false, nil
	}
	quote := func(name string) string {
		if schema, rel, ok := strings.Cut(name, "."); ok {
			return `"` + schema + `"."` + rel + `"`
		}
		return `"` + name + `"`
	}
	quoted := make([]string, len(partitions))
	for i, p := range partitions {
		quoted[i] = quote(p)
	}
	var kind sql.NullString
	var leaves, listed, distinct, missing int64
	err = b.db.QueryRowContext(ctx, `WITH src AS (SELECT relid FROM pg_partition_tree(to_regclass($1)) WHERE isleaf),
		listed AS (SELECT COALESCE(t.relid, to_regclass(p.name)) AS relid FROM unnest(string_to_array($2, ',')) AS p(name)
			LEFT JOIN LATERAL pg_partition_tree(to_regclass(p.name)) AS t ON true WHERE t.relid IS NULL OR t.isleaf)
		SELECT (SELECT relkind::text FROM pg_class WHERE oid = to_regclass($1)),
			(SELECT COUNT(*) FROM src), (SELECT COUNT(*) FROM listed), (SELECT COUNT(DISTINCT relid) FROM listed),
			(SELECT COUNT(*) FROM src WHERE relid NOT IN (SELECT relid FROM listed))`,
		quote(table), strings.Join(quoted, ",")).Scan(&kind, &leaves, &listed, &distinct, &missing)
	if err != nil {
		return false, false, fmt.Errorf("backend: reading the partitions of %s: %w", table, err)
	}
	if kind.String != "p" {
		return false, false, nil
	}
	return leaves == listed && listed == distinct && missing == 0, true, nil
}
