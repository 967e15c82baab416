package sqlrewrite

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// ConstantUnion is a UNION or UNION ALL of FROM-less SELECTs whose every
// value is a literal string, integer or NULL, with an optional ORDER BY of
// result columns and LIMIT: the rows of a literal table. MariaDB
// Connector/ODBC's SQLGetTypeInfo(SQL_ALL_TYPES) sends 43 such SELECTs,
// which the catalog engine plans in time that doubles with each SELECT;
// dpproxy answers them itself, in time linear in the statement, at parse.
// It reads nothing but the statement's text.
//
// The answer is MySQL's for the session's default collation_connection,
// utf8mb4_0900_bin (byte order, no padding): under another collation the
// session hands SQL to the catalog engine if CatalogMay, and refuses it
// otherwise.
type ConstantUnion struct {
	// SQL is the client's text of the statement.
	SQL string
	// CatalogMay is set when the statement has at most maxSetOprSelects
	// SELECTs, which the catalog engine may answer.
	CatalogMay bool
	// Columns are the result columns, named as the first SELECT names
	// them and typed as MySQL unifies a UNION's columns.
	Columns []UnionColumn
	// Rows are the answer: each value nil (NULL) or its text.
	Rows [][]any
}

func (*ConstantUnion) statement() {}

// UnionType is the MySQL type of a ConstantUnion column.
type UnionType int

const (
	// UnionNull is a column of NULLs only: MySQL sends BINARY(0).
	UnionNull UnionType = iota
	// UnionInt is a column of integers (and NULLs): BIGINT.
	UnionInt
	// UnionText is a column with a string: VARCHAR in the connection's
	// character set, integers in it as their decimal text.
	UnionText
)

// UnionColumn is a ConstantUnion result column.
type UnionColumn struct {
	Name string
	Type UnionType
	// Nullable is set when some row holds NULL in the column.
	Nullable bool
	// Width is MySQL's display width: a BIGINT's digits plus its sign, a
	// VARCHAR's characters (its length in bytes is Width times the
	// character set's maximum bytes per character).
	Width int
}

// maxConstantUnionSelects and maxConstantUnionBytes bound what a
// ConstantUnion may be: beyond them a statement is an ordinary set
// operation, refused past maxSetOprSelects. Answering one takes time and
// memory linear in its text (a 1 MiB statement of 4,096 SELECTs answers
// in milliseconds).
const (
	maxConstantUnionSelects = 4096
	maxConstantUnionBytes   = 1 << 20
)

// cell is one literal of a ConstantUnion: NULL, an integer or a string.
type cell struct {
	null, isText bool
	num          int64
	text         string
}

// constantUnion recognises a ConstantUnion and answers it; ok is false for
// any other statement, which the caller routes as before. It descends only
// into the select lists and the unary signs of their numbers, which
// guardDepth has bounded.
func constantUnion(s *ast.SetOprStmt, sql string) (u *ConstantUnion, ok bool) {
	list := s.SelectList
	if len(sql) > maxConstantUnionBytes || s.With != nil || list == nil || list.With != nil ||
		list.OrderBy != nil || list.Limit != nil || len(list.Selects) < 2 || len(list.Selects) > maxConstantUnionSelects {
		return nil, false
	}
	rows := make([][]cell, len(list.Selects))
	distinct := 0 // the leading SELECTs whose rows a UNION DISTINCT dedups
	var first []*ast.SelectField
	for i, n := range list.Selects {
		sel, isSel := n.(*ast.SelectStmt)
		if !isSel || !literalRowSelect(sel) {
			return nil, false
		}
		fields := sel.Fields.Fields
		if i == 0 {
			first = fields
		} else {
			if len(fields) != len(first) || sel.AfterSetOperator == nil {
				return nil, false
			}
			switch *sel.AfterSetOperator {
			case ast.Union:
				distinct = i + 1
			case ast.UnionAll:
			default:
				return nil, false
			}
		}
		rows[i] = make([]cell, len(fields))
		for j, f := range fields {
			if rows[i][j], ok = literalCell(f); !ok {
				return nil, false
			}
		}
	}
	u = &ConstantUnion{SQL: sql, CatalogMay: len(list.Selects) <= maxSetOprSelects}
	for j, f := range first {
		u.Columns = append(u.Columns, unionColumn(unionName(f, rows[0][j]), rows, j))
	}
	u.Rows = u.values(rows, distinct)
	order, ok := u.orderKeys(s.OrderBy)
	if !ok {
		return nil, false
	}
	u.sort(order)
	if s.Limit != nil {
		if u.Rows, ok = limitRows(u.Rows, s.Limit); !ok {
			return nil, false
		}
	}
	return u, true
}

// literalRowSelect reports whether sel is SELECT of a list of values and
// nothing else: no FROM, WHERE, GROUP BY, HAVING, window, ORDER BY,
// LIMIT, DISTINCT, INTO, locking, hints or SQL_CALC_FOUND_ROWS.
func literalRowSelect(sel *ast.SelectStmt) bool {
	if o := sel.SelectStmtOpts; o != nil && (o.Distinct || o.CalcFoundRows || len(o.TableHints) > 0) {
		return false
	}
	return sel.Kind == ast.SelectStmtKindSelect && sel.From == nil && sel.Where == nil && sel.GroupBy == nil &&
		sel.Having == nil && len(sel.WindowSpecs) == 0 && sel.OrderBy == nil && sel.Limit == nil &&
		sel.LockInfo == nil && len(sel.TableHints) == 0 && sel.SelectIntoOpt == nil && sel.With == nil &&
		!sel.Distinct && sel.Fields != nil && len(sel.Fields.Fields) > 0
}

// literalCell reads a select field that is a literal: NULL, a string
// written in quotes (no introducer such as _binary or N, which change its
// character set), valid UTF-8, or an integer in BIGINT's range with any
// unary signs (TRUE and FALSE are 1 and 0). Anything else, decimals and
// floats included, is not one.
func literalCell(f *ast.SelectField) (cell, bool) {
	if f.WildCard != nil {
		return cell{}, false
	}
	negative := false
	e := f.Expr
	for {
		u, isUnary := e.(*ast.UnaryOperationExpr)
		if !isUnary {
			break
		}
		if u.Op != opcode.Minus && u.Op != opcode.Plus {
			return cell{}, false
		}
		negative = negative != (u.Op == opcode.Minus)
		e = u.V
	}
	v, isValue := e.(ast.ValueExpr)
	if !isValue {
		return cell{}, false
	}
	switch x := v.GetValue().(type) {
	case nil:
		return cell{null: true}, e == f.Expr
	case string:
		quoted := strings.HasPrefix(f.Text(), "'") || strings.HasPrefix(f.Text(), `"`)
		return cell{isText: true, text: x}, e == f.Expr && quoted && utf8.ValidString(x)
	case int64:
		if negative {
			x = -x
		}
		return cell{num: x}, true
	case uint64:
		switch {
		case x <= math.MaxInt64 && negative:
			return cell{num: -int64(x)}, true
		case x <= math.MaxInt64:
			return cell{num: int64(x)}, true
		case x == 1<<63 && negative:
			return cell{num: math.MinInt64}, true
		}
	}
	return cell{}, false
}

// unionName is the name MySQL gives a column of the first SELECT.
func unionName(f *ast.SelectField, c cell) string {
	if f.AsName.O != "" {
		return f.AsName.O
	}
	return literalLabel(f.Text(), Value{Null: c.null, IsText: c.isText, Str: c.text})
}

// unionColumn types column j as MySQL types a UNION's column: VARCHAR if
// a row holds a string there, else BIGINT if one holds an integer, else
// BINARY(0) (NULL only). A BIGINT's width is its widest value's digits
// plus a sign; a VARCHAR's its longest value's characters, integers
// counted as their text.
func unionColumn(name string, rows [][]cell, j int) UnionColumn {
	col := UnionColumn{Name: name, Type: UnionNull}
	digits, chars := 0, 0
	for _, r := range rows {
		c := r[j]
		switch {
		case c.null:
			col.Nullable = true
		case c.isText:
			col.Type = UnionText
			chars = max(chars, utf8.RuneCountInString(c.text))
		default:
			col.Type = max(col.Type, UnionInt)
			text := strconv.FormatInt(c.num, 10)
			chars = max(chars, len(text))
			digits = max(digits, len(strings.TrimPrefix(text, "-")))
		}
	}
	switch col.Type {
	case UnionInt:
		col.Width = digits + 1
	case UnionText:
		col.Width = chars
	}
	return col
}

// values converts the rows to the answer's text values, without the
// duplicates among the first distinct rows: a UNION (DISTINCT) removes
// duplicates from everything on its left, a later UNION ALL appends.
// Values compare as the column's type holds them: integers in a VARCHAR
// column as their text, strings byte by byte (utf8mb4_0900_bin).
func (u *ConstantUnion) values(rows [][]cell, distinct int) [][]any {
	out := make([][]any, 0, len(rows))
	seen := make(map[string]bool)
	var key strings.Builder
	for i, r := range rows {
		row := make([]any, len(r))
		key.Reset()
		for j, c := range r {
			switch {
			case c.null:
				key.WriteString("N")
				continue
			case c.isText:
				row[j] = c.text
			default:
				row[j] = strconv.FormatInt(c.num, 10)
			}
			s := row[j].(string)
			key.WriteString(strconv.Itoa(len(s)))
			key.WriteString(":")
			key.WriteString(s)
		}
		if i < distinct {
			if seen[key.String()] {
				continue
			}
			seen[key.String()] = true
		}
		out = append(out, row)
	}
	return out
}

// orderKey is one ORDER BY item: a result column and its direction.
type orderKey struct {
	col  int
	desc bool
}

// orderKeys resolves a UNION's ORDER BY: each item a result column's name
// or position. ok is false for anything else (an expression, a name two
// columns share or none has). An item naming a column an earlier item
// named is dropped: rows it could tell apart were already ordered by the
// earlier one. So there are at most as many keys as columns, and sorting
// costs the rows' comparisons times the columns however long the ORDER BY
// (a hostile one repeating a column 100,000 times took seconds of CPU).
func (u *ConstantUnion) orderKeys(by *ast.OrderByClause) (keys []orderKey, ok bool) {
	if by == nil {
		return nil, true
	}
	named := make(map[string]int, len(u.Columns)) // lower-cased name → column, -1 when shared
	for j, c := range u.Columns {
		name := strings.ToLower(c.Name)
		if _, dup := named[name]; dup {
			j = -1
		}
		named[name] = j
	}
	used := make([]bool, len(u.Columns))
	for _, it := range by.Items {
		col := -1
		switch e := it.Expr.(type) {
		case *ast.PositionExpr:
			if e.P != nil || e.N < 1 || e.N > len(u.Columns) {
				return nil, false
			}
			col = e.N - 1
		case *ast.ColumnNameExpr:
			if e.Name.Table.L != "" || e.Name.Schema.L != "" {
				return nil, false
			}
			j, found := named[strings.ToLower(e.Name.Name.O)]
			if !found {
				return nil, false
			}
			col = j
		}
		if col < 0 {
			return nil, false
		}
		if !used[col] {
			used[col] = true
			keys = append(keys, orderKey{col: col, desc: it.Desc})
		}
	}
	return keys, true
}

// sort orders the rows by keys, as MySQL does: NULL first in ascending
// order, integers by value, strings byte by byte; ties keep their order.
func (u *ConstantUnion) sort(keys []orderKey) {
	if len(keys) == 0 {
		return
	}
	slices.SortStableFunc(u.Rows, func(a, b []any) int {
		for _, k := range keys {
			c := u.compare(k.col, a[k.col], b[k.col])
			if k.desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
}

func (u *ConstantUnion) compare(col int, a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	if u.Columns[col].Type == UnionInt {
		x, _ := strconv.ParseInt(a.(string), 10, 64)
		y, _ := strconv.ParseInt(b.(string), 10, 64)
		return cmpInt(x, y)
	}
	return strings.Compare(a.(string), b.(string))
}

func cmpInt(x, y int64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// limitRows applies LIMIT [offset,] count with integer literals.
func limitRows(rows [][]any, l *ast.Limit) ([][]any, bool) {
	count, ok := limitValue(l.Count)
	if !ok {
		return nil, false
	}
	offset := uint64(0)
	if l.Offset != nil {
		if offset, ok = limitValue(l.Offset); !ok {
			return nil, false
		}
	}
	n := uint64(len(rows))
	start := min(offset, n)
	end := n
	if count < n-start {
		end = start + count
	}
	return rows[start:end], true
}

// limitValue reads a LIMIT or OFFSET literal.
func limitValue(e ast.ExprNode) (uint64, bool) {
	v, isValue := e.(ast.ValueExpr)
	if !isValue {
		return 0, false
	}
	switch x := v.GetValue().(type) {
	case int64:
		return uint64(x), x >= 0
	case uint64:
		return x, true
	}
	return 0, false
}
