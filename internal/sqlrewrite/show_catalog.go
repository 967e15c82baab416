package sqlrewrite

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
)

// showAsSelect rewrites the SHOW statements whose shape go-mysql-server gets
// wrong into the SELECT over information_schema that MySQL 8 itself runs for
// them, with MySQL's column names and types (checked against a real server by
// cmd/dpproxy's TestIntrospectionReplay): SHOW TABLE STATUS (Version and
// Checksum are numbers, the last column is Comment), SHOW PLUGINS (Name,
// Status, Type, Library, License), SHOW CHARACTER SET (every character set
// information_schema.CHARACTER_SETS lists, where go-mysql-server's own
// listed 13 of the 41 that COLLATIONS names), SHOW COLLATION (Collation,
// Charset, Id, Default, Compiled, Sortlen, Pad_attribute, where
// go-mysql-server's were named collation, charset, ID, default, compiled,
// SORTLEN, PAD_ATTRIBUTE) and SHOW [FULL] COLUMNS and DESCRIBE of a
// configured table (showColumnsAsSelect); and the forms it cannot parse:
// DESCRIBE t col of another table, SHOW OPEN TABLES and SHOW PROFILES (both
// empty in MySQL's shape); and SHOW DATABASES (SCHEMAS) and SHOW [FULL]
// TABLES, in MariaDB's shape. ok is false for every other SHOW.
func (p *Parser) showAsSelect(s *ast.ShowStmt) (sql string, ok bool, err error) {
	// q is the SELECT, first its first column, which LIKE filters and
	// the rows are ordered by.
	q, first := "", "Name"
	switch s.Tp {
	case ast.ShowColumns:
		if s.Table == nil {
			return "", false, nil
		}
		if t, ok := p.showColumnsTable(s); ok {
			q, err := showColumnsAsSelect(s, t)
			return q, err == nil, err
		}
		if s.Column == nil {
			return "", false, nil
		}
		// DESCRIBE t col (go-mysql-server does not parse the column form):
		// SHOW COLUMNS FROM t LIKE 'col', which is what MySQL answers.
		full := ""
		if s.Full {
			full = "FULL "
		}
		table := quoteIdentifier(s.Table.Name.O)
		if s.Table.Schema.O != "" {
			table = quoteIdentifier(s.Table.Schema.O) + "." + table
		}
		return "SHOW " + full + "COLUMNS FROM " + table + " LIKE " + quoteString(s.Column.Name.O), true, nil
	case ast.ShowDatabases:
		// SHOW DATABASES and SHOW SCHEMAS, its synonym (which
		// go-mysql-server parses without LIKE or WHERE only), as MariaDB
		// answers them, over information_schema.SCHEMATA: the column
		// Database, or Database (<pattern>) with LIKE (go-mysql-server
		// named it Database), VARCHAR(64) NOT NULL (it was LONGTEXT).
		name, where := "Database", ""
		if s.Pattern != nil {
			pat, err := restoreSQL(s.Pattern.Pattern)
			if err != nil {
				return "", false, err
			}
			if v, ok := s.Pattern.Pattern.(ast.ValueExpr); ok {
				name += " (" + v.GetString() + ")"
			}
			where = " WHERE SCHEMA_NAME LIKE " + pat
		}
		return showOver("SELECT SCHEMA_NAME AS "+quoteIdentifier(name)+" FROM information_schema.SCHEMATA"+where, s.Where)
	case ast.ShowTables:
		// SHOW [FULL] TABLES as MariaDB answers it, over
		// information_schema.TABLES: the column Tables_in_<db>, or
		// Tables_in_<db> (<pattern>) with LIKE (go-mysql-server named it
		// Tables_in_<db> alone), its name VARCHAR(64) NOT NULL, and
		// information_schema's tables of type SYSTEM VIEW (go-mysql-server
		// listed them as BASE TABLE). Names resolve without case
		// (@@lower_case_table_names is 2), so LIKE matches them without
		// case (both sides in lower case), as information_schema.TABLES
		// matches TABLE_NAME; go-mysql-server's LIKE here did not (SHOW
		// TABLES LIKE 'orders%' missed Orders_Pub). WHERE filters the
		// columns shown.
		db := s.DBName
		if db == "" {
			db = p.database
		}
		if db == "" {
			return "", false, nil // 1046, no database selected
		}
		if !strings.EqualFold(db, DataDatabase) && !strings.EqualFold(db, CatalogDatabase) {
			return "", false, dperr.New(dperr.UnknownDatabase, "Unknown database '%s'", db)
		}
		name := "Tables_in_" + db
		cols := "TABLE_NAME AS " + quoteIdentifier(name)
		where := ""
		if s.Pattern != nil {
			pat, err := restoreSQL(s.Pattern.Pattern)
			if err != nil {
				return "", false, err
			}
			if v, ok := s.Pattern.Pattern.(ast.ValueExpr); ok {
				cols = "TABLE_NAME AS " + quoteIdentifier(name+" ("+v.GetString()+")")
			}
			where = " AND LOWER(TABLE_NAME) LIKE LOWER(" + pat + ")"
		}
		if s.Full {
			cols += ", TABLE_TYPE AS `Table_type`"
		}
		return showOver("SELECT "+cols+" FROM information_schema.TABLES WHERE TABLE_SCHEMA = "+quoteString(db)+where, s.Where)
	case ast.ShowIndex:
		// SHOW INDEX|INDEXES|KEYS of a configured table as MariaDB 10.11
		// answers it, over information_schema.STATISTICS (a configured
		// table has no index, so no row): MariaDB's 14 columns, names and
		// texts VARCHAR NOT NULL where MariaDB's are, Ignored last.
		// go-mysql-server's own had MySQL 8's Visible and Expression, and
		// every text column LONGTEXT.
		if s.Table == nil {
			return "", false, nil
		}
		t, ok := p.showColumnsTable(s)
		if !ok {
			return "", false, nil
		}
		q = "SELECT TABLE_NAME AS `Table`, NON_UNIQUE AS `Non_unique`, INDEX_NAME AS `Key_name`, SEQ_IN_INDEX AS `Seq_in_index`, " +
			"COLUMN_NAME AS `Column_name`, COLLATION AS `Collation`, CARDINALITY AS `Cardinality`, SUB_PART AS `Sub_part`, " +
			"PACKED AS `Packed`, NULLABLE AS `Null`, INDEX_TYPE AS `Index_type`, COMMENT AS `Comment`, " +
			"INDEX_COMMENT AS `Index_comment`, IF(IS_VISIBLE = 'NO', 'YES', 'NO') AS `Ignored` " +
			"FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = " + quoteString(DataDatabase) + " AND TABLE_NAME = " + quoteString(t.Name)
		q = "SELECT * FROM (" + q + ") AS `show`"
		if s.Where != nil {
			w, err := restoreSQL(s.Where)
			if err != nil {
				return "", false, err
			}
			q += " WHERE " + w
		}
		return q + " ORDER BY `Non_unique`, `Key_name`, `Seq_in_index`", true, nil
	case ast.ShowOpenTables:
		// No table is ever open in the catalog engine: MySQL's columns, no row.
		q = "SELECT TABLE_SCHEMA AS `Database`, TABLE_NAME AS `Table`, 0 AS `In_use`, 0 AS `Name_locked` " +
			"FROM information_schema.TABLES WHERE 1 = 0"
		return q, true, nil
	case ast.ShowProfiles:
		// Profiling is never on: MySQL's columns, no row.
		q = "SELECT 0 AS `Query_ID`, 0.0 AS `Duration`, '' AS `Query` FROM information_schema.TABLES WHERE 1 = 0"
		return q, true, nil
	case ast.ShowTableStatus:
		// Over information_schema.TABLES a database that does not exist
		// would list no table; MySQL and MariaDB answer 1049 for it, as
		// SHOW TABLES FROM does.
		schema := "DATABASE()"
		if s.DBName != "" {
			if !strings.EqualFold(s.DBName, DataDatabase) && !strings.EqualFold(s.DBName, CatalogDatabase) {
				return "", false, dperr.New(dperr.UnknownDatabase, "Unknown database '%s'", s.DBName)
			}
			schema = quoteString(s.DBName)
		}
		q = "SELECT TABLE_NAME AS `Name`, ENGINE AS `Engine`, VERSION AS `Version`, ROW_FORMAT AS `Row_format`, " +
			"TABLE_ROWS AS `Rows`, AVG_ROW_LENGTH AS `Avg_row_length`, DATA_LENGTH AS `Data_length`, " +
			"MAX_DATA_LENGTH AS `Max_data_length`, INDEX_LENGTH AS `Index_length`, DATA_FREE AS `Data_free`, " +
			"AUTO_INCREMENT AS `Auto_increment`, CREATE_TIME AS `Create_time`, UPDATE_TIME AS `Update_time`, " +
			"CHECK_TIME AS `Check_time`, TABLE_COLLATION AS `Collation`, CHECKSUM AS `Checksum`, " +
			"CREATE_OPTIONS AS `Create_options`, TABLE_COMMENT AS `Comment` " +
			"FROM information_schema.TABLES WHERE TABLE_SCHEMA = " + schema
	case ast.ShowPlugins:
		q = "SELECT PLUGIN_NAME AS `Name`, PLUGIN_STATUS AS `Status`, PLUGIN_TYPE AS `Type`, " +
			"PLUGIN_LIBRARY AS `Library`, PLUGIN_LICENSE AS `License` FROM information_schema.PLUGINS"
	case ast.ShowCollation:
		first = "Collation"
		q = "SELECT COLLATION_NAME AS `Collation`, CHARACTER_SET_NAME AS `Charset`, ID AS `Id`, IS_DEFAULT AS `Default`, " +
			"IS_COMPILED AS `Compiled`, SORTLEN AS `Sortlen`, PAD_ATTRIBUTE AS `Pad_attribute` FROM information_schema.COLLATIONS"
	case ast.ShowCharset:
		first = "Charset"
		q = "SELECT CHARACTER_SET_NAME AS `Charset`, DESCRIPTION AS `Description`, " +
			"DEFAULT_COLLATE_NAME AS `Default collation`, MAXLEN AS `Maxlen` FROM information_schema.CHARACTER_SETS"
	default:
		return "", false, nil
	}
	// LIKE applies to the first column, WHERE to the output columns.
	q = "SELECT * FROM (" + q + ") AS `show`"
	switch {
	case s.Pattern != nil:
		pat, err := restoreSQL(s.Pattern.Pattern)
		if err != nil {
			return "", false, err
		}
		q += " WHERE `" + first + "` LIKE " + pat
	case s.Where != nil:
		w, err := restoreSQL(s.Where)
		if err != nil {
			return "", false, err
		}
		q += " WHERE " + w
	}
	return q + " ORDER BY `" + first + "`", true, nil
}

// showColumnsTable is the configured table whose columns s shows: s names
// one in dpproxy's database (qualified, with FROM db, or unqualified in a
// session using it).
func (p *Parser) showColumnsTable(s *ast.ShowStmt) (*catalog.Table, bool) {
	schema := s.Table.Schema.O
	if s.DBName != "" {
		schema = s.DBName
	}
	if schema == "" {
		schema = p.database
	}
	if !strings.EqualFold(schema, DataDatabase) {
		return nil, false
	}
	return p.cat.Table(s.Table.Name.O)
}

// showColumnsAsSelect is SHOW [FULL] COLUMNS of the configured table t
// (and DESCRIBE t [col], which is SHOW COLUMNS FROM t LIKE 'col') as the
// SELECT over information_schema.COLUMNS that MySQL 8 runs for it.
// go-mysql-server's own shows every text column's Collation as its default
// utf8mb4_0900_bin, and its Type with a COLLATE clause when the column's
// collation is another, so on a MySQL backend (utf8mb4_general_ci,
// catalog.Config.TextCollation) it contradicted information_schema and
// SHOW CREATE TABLE. LIKE filters Field, WHERE the columns shown and no
// other, as in MariaDB (SHOW COLUMNS FROM t WHERE Collation IS NULL is
// 1054, Unknown column: Collation, Privileges and Comment are SHOW FULL
// COLUMNS' only, and the columns' position is neither's): the filter runs
// over a derived table of those columns alone, and a join on Field then
// puts the rows in the columns' order.
func showColumnsAsSelect(s *ast.ShowStmt, t *catalog.Table) (string, error) {
	cols := "COLUMN_NAME AS `Field`, COLUMN_TYPE AS `Type`, IS_NULLABLE AS `Null`, COLUMN_KEY AS `Key`, COLUMN_DEFAULT AS `Default`, EXTRA AS `Extra`"
	if s.Full {
		cols = "COLUMN_NAME AS `Field`, COLUMN_TYPE AS `Type`, COLLATION_NAME AS `Collation`, " +
			"IS_NULLABLE AS `Null`, COLUMN_KEY AS `Key`, COLUMN_DEFAULT AS `Default`, EXTRA AS `Extra`, " +
			"PRIVILEGES AS `Privileges`, COLUMN_COMMENT AS `Comment`"
	}
	of := func(alias string) string {
		return alias + "TABLE_SCHEMA = " + quoteString(DataDatabase) + " AND " + alias + "TABLE_NAME = " + quoteString(t.Name)
	}
	shown := "SELECT * FROM (SELECT " + cols + " FROM information_schema.COLUMNS WHERE " + of("") + ") AS `show`"
	switch {
	case s.Column != nil:
		shown += " WHERE `Field` LIKE " + quoteString(s.Column.Name.O)
	case s.Pattern != nil:
		pat, err := restoreSQL(s.Pattern.Pattern)
		if err != nil {
			return "", err
		}
		shown += " WHERE `Field` LIKE " + pat
	case s.Where != nil:
		w, err := restoreSQL(s.Where)
		if err != nil {
			return "", err
		}
		shown += " WHERE " + w
	}
	return "SELECT `show`.* FROM (" + shown + ") AS `show` JOIN information_schema.COLUMNS AS `position` ON " + of("`position`.") +
		" AND `position`.COLUMN_NAME = `show`.`Field` ORDER BY `position`.ORDINAL_POSITION", nil
}

// restoreSQL prints an expression back as MySQL SQL for the catalog engine.
func restoreSQL(e ast.ExprNode) (string, error) {
	text, err := catalogSQL(e)
	if err != nil {
		return "", refuse("this SHOW condition", "SHOW ... LIKE 'pattern' or WHERE on its columns")
	}
	return text, nil
}

// catalogRestoreFlags print a node back as SQL the catalog engine reads as
// the same tree whatever its sql_mode: string literals in single quotes,
// a quote doubled and a backslash escaped (without
// RestoreStringEscapeBackslash, 'x\\' printed as 'x\', which the engine
// reads as an escaped quote: text that was a string literal to every
// check became code, SLEEP and an unbounded REPEAT included (an
// independent review)), identifiers in backquotes.
const catalogRestoreFlags = format.DefaultRestoreFlags | format.RestoreStringEscapeBackslash

// catalogSQL prints n back as SQL for the catalog engine
// (catalogRestoreFlags).
func catalogSQL(n ast.Node) (string, error) {
	var b strings.Builder
	if err := n.Restore(format.NewRestoreCtx(catalogRestoreFlags, &b)); err != nil {
		return "", err
	}
	return b.String(), nil
}

// quoteIdentifier is a MySQL quoted identifier.
func quoteIdentifier(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// quoteString is a MySQL string literal.
func quoteString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s) + "'"
}

// showOver is a SHOW statement answered as the SELECT inner, whose
// columns are the SHOW's, filtered by the SHOW's WHERE (nil for none) and
// ordered by its first column; the bool is rewriteShow's "rewritten".
func showOver(inner string, where ast.ExprNode) (string, bool, error) {
	q := "SELECT * FROM (" + inner + ") AS `show`"
	if where != nil {
		w, err := restoreSQL(where)
		if err != nil {
			return "", false, err
		}
		q += " WHERE " + w
	}
	return q + " ORDER BY 1", true, nil
}
