package main

import (
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// introspection is a statement a BI tool or driver sends to browse the
// schema, as it sends it (the database is DATABASE(), so the same text runs
// on the proxy and on a real server).
type introspection struct {
	client, sql string
	// compare is how many leading columns must match MariaDB's (0: all of
	// them); the rest differ between MySQL 8, whose shapes the catalog engine
	// follows, and MariaDB, as noted.
	compare int
	note    string
	// nulls, when set, says why the columns' NOT NULL is not compared.
	nulls string
}

// Why NOT NULL differs where it is not compared.
const (
	variablesNullable = "MariaDB announces @@variables nullable"
	functionsNullable = "MariaDB announces CAST, TIMEDIFF and TIME_FORMAT of constants nullable"
	leftJoinNullable  = "go-mysql-server announces a LEFT JOIN's right columns as the table declares them"
)

var introspections = []introspection{
	{client: "Connector/J connect", sql: "SELECT @@max_allowed_packet, @@system_time_zone, @@time_zone, @@auto_increment_increment", nulls: variablesNullable},
	{client: "Connector/J connect", sql: "SHOW VARIABLES LIKE 'lower_case_table_names'"},
	{client: "Connector/J connect", sql: "SELECT @@session.autocommit", nulls: variablesNullable},
	{client: "Connector/J getTables", sql: "SELECT TABLE_SCHEMA TABLE_CAT, NULL TABLE_SCHEM, TABLE_NAME, IF(TABLE_TYPE='BASE TABLE', 'TABLE', TABLE_TYPE) as TABLE_TYPE, TABLE_COMMENT REMARKS, NULL TYPE_CAT, NULL TYPE_SCHEM, NULL TYPE_NAME, NULL SELF_REFERENCING_COL_NAME, NULL REF_GENERATION FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'pums' ORDER BY TABLE_TYPE, TABLE_SCHEMA, TABLE_NAME"},
	{client: "Connector/J getColumns", sql: "SELECT TABLE_SCHEMA TABLE_CAT, NULL TABLE_SCHEM, TABLE_NAME, COLUMN_NAME, DATA_TYPE, COLUMN_TYPE TYPE_NAME, NUMERIC_PRECISION, CHARACTER_MAXIMUM_LENGTH, NUMERIC_SCALE DECIMAL_DIGITS, IS_NULLABLE, COLUMN_COMMENT REMARKS, COLUMN_DEFAULT COLUMN_DEF, ORDINAL_POSITION, EXTRA FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'pums' ORDER BY TABLE_CAT, TABLE_NAME, ORDINAL_POSITION"},
	{client: "Connector/J getPrimaryKeys", sql: "SELECT A.TABLE_SCHEMA TABLE_CAT, NULL TABLE_SCHEM, A.TABLE_NAME, A.COLUMN_NAME, B.SEQ_IN_INDEX KEY_SEQ, B.INDEX_NAME PK_NAME FROM INFORMATION_SCHEMA.COLUMNS A, INFORMATION_SCHEMA.STATISTICS B WHERE A.COLUMN_KEY in ('PRI','pri') AND B.INDEX_NAME='PRIMARY' AND A.TABLE_SCHEMA = DATABASE() AND A.TABLE_NAME = 'pums' AND A.TABLE_SCHEMA = B.TABLE_SCHEMA AND A.TABLE_NAME = B.TABLE_NAME AND A.COLUMN_NAME = B.COLUMN_NAME ORDER BY A.COLUMN_NAME"},
	{client: "Connector/J getImportedKeys", sql: "SELECT KCU.REFERENCED_TABLE_SCHEMA PKTABLE_CAT, NULL PKTABLE_SCHEM, KCU.REFERENCED_TABLE_NAME PKTABLE_NAME, KCU.REFERENCED_COLUMN_NAME PKCOLUMN_NAME, KCU.TABLE_SCHEMA FKTABLE_CAT, KCU.TABLE_NAME FKTABLE_NAME, KCU.COLUMN_NAME FKCOLUMN_NAME, KCU.POSITION_IN_UNIQUE_CONSTRAINT KEY_SEQ, KCU.CONSTRAINT_NAME FK_NAME FROM INFORMATION_SCHEMA.KEY_COLUMN_USAGE KCU WHERE KCU.TABLE_SCHEMA = DATABASE() AND KCU.TABLE_NAME = 'pums' AND KCU.REFERENCED_TABLE_NAME IS NOT NULL ORDER BY PKTABLE_CAT, PKTABLE_NAME, KEY_SEQ"},
	{client: "Connector/J getIndexInfo", sql: "SELECT TABLE_SCHEMA TABLE_CAT, NULL TABLE_SCHEM, TABLE_NAME, NON_UNIQUE, INDEX_SCHEMA INDEX_QUALIFIER, INDEX_NAME, 3 TYPE, SEQ_IN_INDEX ORDINAL_POSITION, COLUMN_NAME, COLLATION ASC_OR_DESC, CARDINALITY, NULL PAGES, NULL FILTER_CONDITION FROM INFORMATION_SCHEMA.STATISTICS WHERE TABLE_NAME = 'pums' AND TABLE_SCHEMA = DATABASE() ORDER BY NON_UNIQUE, INDEX_NAME, SEQ_IN_INDEX"},
	{client: "Connector/J getCatalogs", sql: "SELECT SCHEMA_NAME TABLE_CAT FROM INFORMATION_SCHEMA.SCHEMATA ORDER BY 1"},
	{client: "Connector/J getProcedures", sql: "SELECT ROUTINE_SCHEMA PROCEDURE_CAT, NULL PROCEDURE_SCHEM, ROUTINE_NAME PROCEDURE_NAME, NULL RESERVED1, NULL RESERVED2, NULL RESERVED3, ROUTINE_COMMENT REMARKS, CASE ROUTINE_TYPE WHEN 'FUNCTION' THEN 2 WHEN 'PROCEDURE' THEN 1 ELSE 0 END PROCEDURE_TYPE, SPECIFIC_NAME FROM INFORMATION_SCHEMA.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_TYPE = 'PROCEDURE'"},
	{client: "Connector/J zero-row probe", sql: "SELECT * FROM pums WHERE 1 = 0"},
	{client: "SQLAlchemy connect", sql: "SELECT CAST('test plain returns' AS CHAR(60)) AS anon_1", nulls: functionsNullable},
	{client: "SQLAlchemy connect", sql: "SHOW VARIABLES LIKE 'sql_mode'"},
	{client: "SQLAlchemy connect", sql: "SELECT DATABASE()"},
	{client: "SQLAlchemy get_table_names", sql: "SHOW FULL TABLES"},
	{client: "SQLAlchemy has_table", sql: "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'pums'"},
	{client: "SQLAlchemy get_columns", sql: "SHOW CREATE TABLE pums"},
	{client: "SQLAlchemy get_view_names", sql: "SHOW FULL TABLES WHERE Table_type = 'VIEW'"},
	{client: "pandas read_sql_table", sql: "SELECT * FROM pums LIMIT 0"},
	{client: "Metabase connect", sql: "SELECT TIMEDIFF(NOW(), UTC_TIMESTAMP())", nulls: functionsNullable},
	{client: "Metabase time zone", sql: "SELECT time_format(timediff(now(), utc_timestamp()), '%H:%i') AS `offset`", nulls: functionsNullable},
	{client: "Metabase sync", sql: "SELECT TABLE_NAME, TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE IN ('BASE TABLE', 'VIEW') ORDER BY TABLE_NAME"},
	{client: "Metabase sync", sql: "SHOW FULL COLUMNS FROM pums"},
	{client: "Superset", sql: "SELECT table_name FROM information_schema.views WHERE table_schema = DATABASE()"},
	{client: "Superset", sql: "SHOW INDEX FROM pums"},
	{client: "DBeaver", sql: "SHOW ENGINES"},
	{client: "DBeaver", sql: "SHOW CHARACTER SET LIKE 'utf8mb4'"},
	{client: "Connector/J 8 collation mapping", sql: "SELECT c.COLLATION_NAME, c.CHARACTER_SET_NAME, c.ID, s.MAXLEN FROM INFORMATION_SCHEMA.COLLATIONS c LEFT JOIN INFORMATION_SCHEMA.CHARACTER_SETS s ON c.CHARACTER_SET_NAME = s.CHARACTER_SET_NAME", nulls: leftJoinNullable},
	{client: "mysql CLI", sql: "SELECT * FROM information_schema.CHARACTER_SETS"},
	{client: "DBeaver", sql: "SHOW COLLATION LIKE 'utf8mb4_general_ci'", compare: 6, note: "MySQL 8 adds Pad_attribute"},
	{client: "DBeaver", sql: "SHOW TABLE STATUS LIKE 'pums'", compare: 18, note: "MariaDB adds Max_index_length, Temporary"},
	{client: "DBeaver", sql: "SELECT * FROM information_schema.SCHEMATA", compare: 5, note: "MySQL 8 adds DEFAULT_ENCRYPTION, MariaDB SCHEMA_COMMENT"},
	{client: "DBeaver", sql: "SHOW KEYS FROM pums"},
	{client: "mariadb CLI", sql: "SHOW TABLES LIKE 'p%'"},
	{client: "mariadb CLI", sql: "SHOW DATABASES LIKE 'i%'"},
	{client: "DBeaver", sql: "SHOW FULL TABLES LIKE 'p%'"},
	{client: "DBeaver", sql: "SELECT * FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()", compare: 21, note: "MySQL 8 has no MAX_INDEX_LENGTH, TEMPORARY"},
	{client: "DBeaver", sql: "SELECT * FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'pums'", compare: 20, note: "MySQL 8 adds SRS_ID, MariaDB IS_GENERATED"},
	{client: "DataGrip", sql: "SELECT * FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE()", compare: 16, note: "MySQL 8 adds IS_VISIBLE, EXPRESSION; MariaDB IGNORED"},
	{client: "DataGrip", sql: "SELECT * FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE()", compare: 4},
	{client: "DataGrip", sql: "SELECT * FROM information_schema.VIEWS WHERE TABLE_SCHEMA = DATABASE()", compare: 10, note: "MariaDB adds ALGORITHM"},
	{client: "DBeaver", sql: "SELECT * FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = DATABASE()"},
	{client: "DataGrip", sql: "SHOW DATABASES"},
	{client: "DataGrip", sql: "SHOW PROCEDURE STATUS WHERE Db = DATABASE()"},
	{client: "DataGrip", sql: "SHOW FUNCTION STATUS WHERE Db = DATABASE()"},
	{client: "DataGrip", sql: "SHOW PRIVILEGES"},
	{client: "DataGrip", sql: "SHOW PROCESSLIST", compare: 8, note: "MariaDB adds Progress"},
	{client: "Tableau", sql: "SELECT TABLE_NAME, TABLE_COMMENT, IF(TABLE_TYPE='BASE TABLE', 'TABLE', TABLE_TYPE) AS TABLE_TYPE, TABLE_SCHEMA FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA LIKE DATABASE() AND (TABLE_TYPE='BASE TABLE' OR TABLE_TYPE='VIEW') ORDER BY TABLE_SCHEMA, TABLE_NAME"},
	{client: "Power BI", sql: "SELECT TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, IS_NULLABLE, DATA_TYPE, CHARACTER_MAXIMUM_LENGTH, NUMERIC_PRECISION, NUMERIC_SCALE FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME, ORDINAL_POSITION"},
	{client: "ODBC SQLTables", sql: "SELECT TABLE_SCHEMA AS TABLE_CAT, NULL AS TABLE_SCHEM, TABLE_NAME, IF(TABLE_TYPE='BASE TABLE', 'TABLE', TABLE_TYPE) AS TABLE_TYPE, TABLE_COMMENT AS REMARKS FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'pums'"},
	{client: "ODBC SQLColumns", sql: "SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, CHARACTER_OCTET_LENGTH, NUMERIC_PRECISION, NUMERIC_SCALE, IS_NULLABLE, COLUMN_DEFAULT, ORDINAL_POSITION FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'pums' ORDER BY ORDINAL_POSITION"},
	{client: "mycli completion", sql: "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = DATABASE() ORDER BY table_name, ordinal_position"},
	{client: "mycli completion", sql: "SELECT ROUTINE_NAME FROM INFORMATION_SCHEMA.ROUTINES WHERE ROUTINE_TYPE = 'FUNCTION' AND ROUTINE_SCHEMA = DATABASE()"},
	{client: "mycli status", sql: "SHOW SESSION STATUS LIKE 'Ssl_cipher'"},
	{client: "mariadb CLI", sql: "SELECT @@version_comment LIMIT 1", nulls: variablesNullable},
	{client: "mariadb CLI", sql: "DESCRIBE pums"},
	{client: "mariadb CLI", sql: "SHOW COLUMNS FROM pums"},
	{client: "DataGrip", sql: "SHOW PLUGINS"},
	{client: "DBeaver", sql: "SHOW TABLE STATUS WHERE Name = 'pums'", compare: 18, note: "MariaDB adds Max_index_length, Temporary"},
	{client: "DBeaver", sql: "SHOW GLOBAL VARIABLES LIKE 'version%'"},
	{client: "mysql CLI", sql: "SHOW VARIABLES"},
	{client: "HeidiSQL", sql: "SHOW GRANTS"},
	{client: "zero-row probe", sql: "SELECT age, income FROM pums WHERE 1 = 0 AND age > 3"},
}

// shape is a result's column names and type families, each with " not
// null" when the column is announced NOT NULL (DBeaver, SQLAlchemy and
// JDBC's isNullable read it).
type shape struct{ names, families []string }

func (s shape) String() string {
	var b strings.Builder
	for i := range s.names {
		fmt.Fprintf(&b, "%s:%s ", s.names[i], s.families[i])
	}
	return b.String()
}

// withoutNotNull is s without its " not null" marks.
func (s shape) withoutNotNull() shape {
	out := shape{names: s.names}
	for _, f := range s.families {
		out.families = append(out.families, strings.TrimSuffix(f, " not null"))
	}
	return out
}

// family groups MySQL type names that clients treat alike.
func family(dbType string) string {
	t := strings.TrimPrefix(dbType, "UNSIGNED ")
	switch t {
	case "TINYINT", "SMALLINT", "MEDIUMINT", "INT", "BIGINT", "YEAR", "BIT":
		return "integer"
	case "DECIMAL", "FLOAT", "DOUBLE":
		return "number"
	case "CHAR", "VARCHAR", "TEXT", "TINYTEXT", "MEDIUMTEXT", "LONGTEXT", "BLOB", "TINYBLOB", "MEDIUMBLOB", "LONGBLOB", "ENUM", "SET", "JSON", "BINARY", "VARBINARY":
		return "string"
	case "DATETIME", "TIMESTAMP": // MySQL 8 and MariaDB differ in information_schema
		return "datetime"
	case "DATE", "TIME":
		return strings.ToLower(t)
	case "NULL":
		return "null"
	}
	return "?" + dbType
}

// shapeOf runs q and returns its shape, with database renamed to "DB" in
// column names (SHOW TABLES' Tables_in_<database>).
// With prepared, q runs as a server-side prepared statement, its rows
// in the binary protocol.
func shapeOf(t *testing.T, db *sql.DB, q, database string, prepared bool) (shape, error) {
	t.Helper()
	var rows *sql.Rows
	var err error
	if prepared {
		stmt, perr := db.Prepare(q)
		if perr != nil {
			return shape{}, perr
		}
		defer stmt.Close()
		rows, err = stmt.Query()
	} else {
		rows, err = db.Query(q)
	}
	if err != nil {
		return shape{}, err
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		return shape{}, err
	}
	var s shape
	for _, c := range cts {
		name := strings.ReplaceAll(c.Name(), database, "DB")
		if strings.HasPrefix(name, "Grants for ") {
			name = "Grants for"
		}
		s.names = append(s.names, strings.ToLower(name))
		f := family(c.DatabaseTypeName())
		if nullable, ok := c.Nullable(); ok && !nullable {
			f += " not null"
		}
		s.families = append(s.families, f)
	}
	for rows.Next() {
	}
	return s, rows.Err()
}

// TestIntrospectionReplay sends the statements BI tools and drivers send to
// browse a schema through the real proxy; each must answer, and where
// DPPROXY_TEST_MYSQL_DSN is set, with the shape (column names, type
// families, NOT NULL) a real MariaDB gives for the same schema, in the
// text protocol and as prepared statements in the binary protocol.
func TestIntrospectionReplay(t *testing.T) {
	if len(introspections) < 40 {
		t.Fatalf("only %d statements", len(introspections))
	}
	p := startProxy(t, "", nil)
	proxyDB := p.connect(t, "demo", "demo")
	var real *sql.DB
	var realName string
	if os.Getenv(testdb.MySQLEnv) != "" {
		real = testdb.MySQL(t)
		if err := real.QueryRow("SELECT DATABASE()").Scan(&realName); err != nil {
			t.Fatal(err)
		}
		// The demo's schema as the proxy shows it: integer → BIGINT, real → DOUBLE, bounds as comments.
		if _, err := real.Exec("CREATE TABLE pums (age BIGINT COMMENT 'bounds [0, 100]', sex BIGINT COMMENT 'bounds [0, 1]', educ BIGINT COMMENT 'bounds [1, 16]', race BIGINT COMMENT 'bounds [1, 6]', income DOUBLE COMMENT 'bounds [0, 500000]', married BIGINT COMMENT 'bounds [0, 1]')"); err != nil {
			t.Fatal(err)
		}
	}
	for _, in := range introspections {
		for _, prepared := range []bool{false, true} {
			protocol := "text"
			if prepared {
				protocol = "binary"
			}
			got, err := shapeOf(t, proxyDB, in.sql, "dpproxy", prepared)
			if err != nil {
				t.Errorf("%s (%s): %s: %v", in.client, protocol, in.sql, err)
				continue
			}
			if real == nil {
				continue
			}
			want, err := shapeOf(t, real, in.sql, realName, prepared)
			if err != nil {
				t.Errorf("%s (%s): MariaDB refused %s: %v", in.client, protocol, in.sql, err)
				continue
			}
			n := in.compare
			if n == 0 {
				n = max(len(got.names), len(want.names))
			}
			if len(got.names) < n || len(want.names) < n {
				t.Errorf("%s (%s): %s:\n proxy   %v\n mariadb %v", in.client, protocol, in.sql, got, want)
				continue
			}
			g := shape{got.names[:n], got.families[:n]}
			w := shape{want.names[:n], want.families[:n]}
			if in.nulls != "" {
				g, w = g.withoutNotNull(), w.withoutNotNull()
			}
			if g.String() != w.String() {
				t.Errorf("%s (%s): %s:\n proxy   %v\n mariadb %v", in.client, protocol, in.sql, g, w)
			}
		}
	}
}
