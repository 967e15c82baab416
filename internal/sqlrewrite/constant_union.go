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
// result columns and LIMIT, and parenthesized parts with their own: the
// rows of a literal table. MariaDB
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
	TopLevel
	// SQL is the client's text of the statement.
	SQL string
	// CatalogMay is set when the statement has at most maxSetOprSelects
	// SELECTs and no parenthesized part, which the catalog engine may
	// answer (guardSetOpr).
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

// maxConstantUnionSelects, maxConstantUnionBytes and
// maxConstantUnionParts bound what a ConstantUnion may be: beyond them a
// statement is an ordinary set operation, refused past maxSetOprSelects
// or with parenthesized parts. Answering one takes time and memory linear
// in its text (a 1 MiB statement of 4,096 SELECTs answers in
// milliseconds) times one pass per parenthesized part, each of which may
// dedup, type and sort the rows within it.
const (
	maxConstantUnionSelects = 4096
	maxConstantUnionBytes   = 1 << 20
	maxConstantUnionParts   = 64
)

// cell is one literal of a ConstantUnion: NULL, an integer or a string.
type cell struct {
	null, isText bool
	num          int64
	text         string
}

// constantUnion recognises a ConstantUnion and answers it; ok is false for
// any other statement, which the caller routes as before. It descends only
// into the set operation's lists, the select lists and the unary signs of
// their numbers, which guardDepth has bounded.
//
// Parenthesized parts are answered as MariaDB answers them: each part
// ((SELECT …), (… UNION … ORDER BY … LIMIT …)) is computed on its own,
// its ORDER BY sorting by the types its own SELECTs give its columns and
// its LIMIT keeping that many of the sorted rows, and its rows then join
// the enclosing list's; an ORDER BY and LIMIT after the last part apply
// to the whole statement.
func constantUnion(s *ast.SetOprStmt, sql string) (u *ConstantUnion, ok bool) {
	list := s.SelectList
	if len(sql) > maxConstantUnionBytes || s.With != nil || list == nil || list.With != nil ||
		list.OrderBy != nil || list.Limit != nil {
		return nil, false
	}
	b := &unionBuilder{}
	rows, ok := b.part(list.Selects, false, s.OrderBy, s.Limit)
	if !ok || len(b.leaves) < 2 {
		return nil, false
	}
	u = &ConstantUnion{SQL: sql, CatalogMay: b.parts == 0 && len(b.leaves) <= maxSetOprSelects}
	for j, f := range b.fields[0] {
		u.Columns = append(u.Columns, unionColumn(unionName(f, b.leaves[0][j]), b.leaves, j))
	}
	u.Rows = make([][]any, len(rows))
	for i, r := range rows {
		u.Rows[i] = make([]any, len(r))
		for j, c := range r {
			if !c.null {
				u.Rows[i][j] = c.String()
			}
		}
	}
	return u, true
}

// unionBuilder gathers a ConstantUnion's SELECTs in the order they are
// written, each one row of cells (leaves) with its select fields.
type unionBuilder struct {
	leaves [][]cell
	fields [][]*ast.SelectField
	// parts counts the parenthesized parts (the catalog engine orders
	// such statements wrongly: it may not answer them).
	parts int
}

// part computes the rows of selects joined by UNION and UNION ALL, then
// sorted by by and cut by limit (either may be nil). A UNION (DISTINCT)
// removes duplicates from everything on its left, a later UNION ALL
// appends: the rows up to the last UNION are deduplicated once, keeping
// each first occurrence. braced says selects are one parenthesized part,
// where a lone SELECT may have its own ORDER BY and LIMIT.
func (b *unionBuilder) part(selects []ast.Node, braced bool, by *ast.OrderByClause, limit *ast.Limit) (rows [][]cell, ok bool) {
	first := len(b.leaves)
	distinct := 0 // rows[:distinct] are deduplicated
	for i, n := range selects {
		var op *ast.SetOprType
		switch x := n.(type) {
		case *ast.SelectStmt:
			op = x.AfterSetOperator
			sub, ok := b.leaf(x, braced && len(selects) == 1)
			if !ok {
				return nil, false
			}
			rows = append(rows, sub...)
		case *ast.SetOprSelectList:
			if x.With != nil {
				return nil, false
			}
			if b.parts++; b.parts > maxConstantUnionParts {
				return nil, false
			}
			op = x.AfterSetOperator
			sub, ok := b.part(x.Selects, true, x.OrderBy, x.Limit)
			if !ok {
				return nil, false
			}
			rows = append(rows, sub...)
		default:
			return nil, false
		}
		if len(b.leaves) > maxConstantUnionSelects || len(b.fields[len(b.fields)-1]) != len(b.fields[0]) {
			return nil, false
		}
		if i > 0 {
			switch {
			case op == nil:
				return nil, false
			case *op == ast.Union:
				distinct = len(rows)
			case *op != ast.UnionAll:
				return nil, false
			}
		}
	}
	rows = dedup(rows, distinct)
	return b.orderAndLimit(rows, first, by, limit)
}

// leaf reads one SELECT of literals as the rows it gives: its one row, or
// none under a LIMIT 0 when it has its own ORDER BY and LIMIT (ordered
// says it is alone in parentheses, where it may).
func (b *unionBuilder) leaf(sel *ast.SelectStmt, ordered bool) ([][]cell, bool) {
	if !literalRowSelect(sel, ordered) {
		return nil, false
	}
	row := make([]cell, len(sel.Fields.Fields))
	for j, f := range sel.Fields.Fields {
		var ok bool
		if row[j], ok = literalCell(f); !ok {
			return nil, false
		}
	}
	b.leaves = append(b.leaves, row)
	b.fields = append(b.fields, sel.Fields.Fields)
	return b.orderAndLimit([][]cell{row}, len(b.leaves)-1, sel.OrderBy, sel.Limit)
}

// orderAndLimit sorts rows by by, each column compared as the SELECTs
// from leaf first on type it (unionColumn), and names resolved against
// the first of them, then applies limit.
func (b *unionBuilder) orderAndLimit(rows [][]cell, first int, by *ast.OrderByClause, limit *ast.Limit) ([][]cell, bool) {
	if by != nil {
		fields := b.fields[first]
		cols := make([]UnionColumn, len(fields))
		for j, f := range fields {
			cols[j] = unionColumn(unionName(f, b.leaves[first][j]), b.leaves[first:], j)
		}
		keys, ok := orderKeys(cols, by)
		if !ok {
			return nil, false
		}
		sortRows(rows, cols, keys)
	}
	if limit != nil {
		return limitRows(rows, limit)
	}
	return rows, true
}

// literalRowSelect reports whether sel is SELECT of a list of values and
// nothing else: no FROM, WHERE, GROUP BY, HAVING, window, DISTINCT, INTO,
// locking, hints or SQL_CALC_FOUND_ROWS, and no ORDER BY or LIMIT unless
// ordered (a SELECT alone in parentheses).
func literalRowSelect(sel *ast.SelectStmt, ordered bool) bool {
	if o := sel.SelectStmtOpts; o != nil && (o.Distinct || o.CalcFoundRows || len(o.TableHints) > 0) {
		return false
	}
	return sel.Kind == ast.SelectStmtKindSelect && sel.From == nil && sel.Where == nil && sel.GroupBy == nil &&
		sel.Having == nil && len(sel.WindowSpecs) == 0 && (ordered || sel.OrderBy == nil && sel.Limit == nil) &&
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
	return literalLabel(fieldText(f), Value{Null: c.null, IsText: c.isText, Str: c.text})
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

// String is the cell's text: a string itself, an integer in decimal
// (NULL has none).
func (c cell) String() string {
	if c.isText {
		return c.text
	}
	return strconv.FormatInt(c.num, 10)
}

// dedup removes the duplicates among rows[:distinct], keeping each first
// occurrence, and keeps the rows after them. Rows are equal when their
// values' texts are (integers in a VARCHAR column compare as their text,
// strings byte by byte, utf8mb4_0900_bin; an integer's text equals
// another's only when they are equal) and NULL equals NULL.
func dedup(rows [][]cell, distinct int) [][]cell {
	if distinct < 2 {
		return rows
	}
	out := make([][]cell, 0, len(rows))
	seen := make(map[string]bool)
	var key strings.Builder
	for i, r := range rows {
		if i < distinct {
			key.Reset()
			for _, c := range r {
				if c.null {
					key.WriteString("N")
					continue
				}
				s := c.String()
				key.WriteString(strconv.Itoa(len(s)))
				key.WriteString(":")
				key.WriteString(s)
			}
			if seen[key.String()] {
				continue
			}
			seen[key.String()] = true
		}
		out = append(out, r)
	}
	return out
}

// orderKey is one ORDER BY item: a result column and its direction.
type orderKey struct {
	col  int
	desc bool
}

// orderKeys resolves an ORDER BY of a UNION (or of one parenthesized
// SELECT) with result columns cols: each item a column's name or
// position. ok is false for anything else (an expression, a name two
// columns share or none has). An item naming a column an earlier item
// named is dropped: rows it could tell apart were already ordered by the
// earlier one. So there are at most as many keys as columns, and sorting
// costs the rows' comparisons times the columns however long the ORDER BY
// (a hostile one repeating a column 100,000 times took seconds of CPU).
func orderKeys(cols []UnionColumn, by *ast.OrderByClause) (keys []orderKey, ok bool) {
	named := make(map[string]int, len(cols)) // lower-cased name → column, -1 when shared
	for j, c := range cols {
		name := strings.ToLower(c.Name)
		if _, dup := named[name]; dup {
			j = -1
		}
		named[name] = j
	}
	used := make([]bool, len(cols))
	for _, it := range by.Items {
		col := -1
		switch e := it.Expr.(type) {
		case *ast.PositionExpr:
			if e.P != nil || e.N < 1 || e.N > len(cols) {
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

// sortRows orders rows by keys, as MySQL does: NULL first in ascending
// order, integers in a BIGINT column by value, other values by their text
// byte by byte; ties keep their order.
func sortRows(rows [][]cell, cols []UnionColumn, keys []orderKey) {
	slices.SortStableFunc(rows, func(a, b []cell) int {
		for _, k := range keys {
			c := compareCells(cols[k.col].Type, a[k.col], b[k.col])
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

// compareCells compares two values of a column of type t.
func compareCells(t UnionType, a, b cell) int {
	switch {
	case a.null && b.null:
		return 0
	case a.null:
		return -1
	case b.null:
		return 1
	case t == UnionInt:
		return cmpInt(a.num, b.num)
	}
	return strings.Compare(a.String(), b.String())
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
func limitRows(rows [][]cell, l *ast.Limit) ([][]cell, bool) {
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
