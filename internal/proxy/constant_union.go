package proxy

import (
	"context"

	"github.com/dpproxy/dpproxy/internal/catalogdb"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// unionCollation is the session's default collation_connection, the one a
// ConstantUnion's answer is computed for, with the id its text columns
// announce (catalogdb.ClientCollation: utf8mb4_bin, 46, for its 309) and
// the most bytes a character of its character set takes.
const (
	unionCollation   = "utf8mb4_0900_bin"
	unionCollationID = 46
	unionMaxBytes    = 4
)

// MYSQL_TYPE_STRING (BINARY(0) for a column of NULLs) and NOT_NULL_FLAG;
// answer.go declares the other types and flags.
const (
	mysqlTypeString = 254
	notNullFlag     = 1
)

// constantUnion answers a UNION of literal rows (MariaDB ODBC's
// SQLGetTypeInfo) with the rows sqlrewrite computed, typed as MySQL types
// them. Under a collation_connection other than the default, whose
// comparisons dpproxy does not implement, the catalog engine answers it if
// it may (at most 8 SELECTs, none in parentheses); another is refused.
func (s *Session) constantUnion(ctx context.Context, u *sqlrewrite.ConstantUnion) (*Result, error) {
	coll, err := s.catalogValue(ctx, "@@collation_connection", nil)
	if err != nil {
		return nil, err
	}
	if coll != unionCollation {
		if u.CatalogMay {
			return s.catalogQuery(ctx, u.SQL, s.selectLimit(u))
		}
		return nil, dperr.New(dperr.Unsupported, "not supported: a UNION of more than 8 SELECTs, or with a parenthesized part, with collation_connection %v; SET collation_connection = '%s' (the default) first, or separate statements of at most 8 SELECTs without parentheses", coll, unionCollation)
	}
	cols := make([]catalogdb.Column, len(u.Columns))
	for j, c := range u.Columns {
		col := catalogdb.Column{Name: c.Name, Charset: binaryCollation, Flags: binaryFlag}
		switch c.Type {
		case sqlrewrite.UnionNull:
			col.Type = mysqlTypeString
		case sqlrewrite.UnionInt:
			col.Type, col.Length = mysqlTypeLongLong, uint32(c.Width)
		case sqlrewrite.UnionText:
			col.Type, col.Charset, col.Flags = mysqlTypeVarChar, unionCollationID, 0
			col.Length = uint32(c.Width * unionMaxBytes)
		}
		if !c.Nullable && c.Type != sqlrewrite.UnionNull {
			col.Flags |= notNullFlag
		}
		cols[j] = col
	}
	s.setWarnings(nil)
	return &Result{Typed: cols, Rows: u.Rows}, nil
}
