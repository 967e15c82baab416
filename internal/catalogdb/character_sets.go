package catalogdb

import (
	"fmt"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/information_schema"
)

// allCharacterSets makes information_schema.CHARACTER_SETS list every
// character set go-mysql-server knows, those information_schema.COLLATIONS
// names (41), with MySQL 8's columns: CHARACTER_SET_NAME,
// DEFAULT_COLLATE_NAME, DESCRIPTION, MAXLEN. go-mysql-server's own reader
// lists utf8mb4 alone, so Connector/J 8's mapping of collations to
// character sets (COLLATIONS LEFT JOIN CHARACTER_SETS) read a NULL MAXLEN
// for latin1 (an independent review). SHOW CHARACTER SET reads this table,
// as in MySQL 8 (package sqlrewrite's showAsSelect).
func allCharacterSets(e *sqle.Engine) error {
	t, ok, err := e.Analyzer.Catalog.InfoSchema.GetTableInsensitive(sql.NewEmptyContext(), information_schema.CharacterSetsTableName)
	is, isTable := t.(*information_schema.InformationSchemaTable)
	if err != nil || !ok || !isTable {
		return fmt.Errorf("catalogdb: go-mysql-server has no information_schema table %s (%v)", information_schema.CharacterSetsTableName, err)
	}
	is.Reader = func(*sql.Context, sql.Catalog) (sql.RowIter, error) {
		var rows []sql.Row
		iter := sql.NewCharacterSetsIterator()
		for cs, ok := iter.Next(); ok; cs, ok = iter.Next() {
			rows = append(rows, sql.Row{cs.Name, cs.DefaultCollation.Name(), cs.Description, uint32(cs.MaxLength)})
		}
		return sql.RowsToRowIter(rows...), nil
	}
	return nil
}
