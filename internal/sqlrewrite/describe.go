package sqlrewrite

import (
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// DescribeText returns the text whose parse describes the result columns
// of a prepared statement before its arguments are known: sql with each
// of its ? markers bound to a stand-in for the value it will hold. A
// marker in LIMIT stands for 1 and one in OFFSET for 0, which leave the
// answer its rows (a LIMIT that leaves none whatever the data, LIMIT 0
// say, is answered without a plan, its columns typed otherwise); one in
// a WHERE or HAVING stands for NULL: by three-valued
// logic it narrows no GROUP BY key to the values an argument would, so
// the keys keep their declared values; filtered reports that some
// marker is one of these, whose value may narrow a key at execution
// (the caller decides whether that could change a column's type).
//
// ok is false, and the statement is not to be described, unless sql is
// one SELECT whose markers are all in these places, and exactly markers
// many (as the protocol counts them): a marker in the select list,
// GROUP BY or ORDER BY may change a column's name or type with its value.
// It parses nothing else and never fails otherwise.
func (p *Parser) DescribeText(sql string, markers int) (text string, filtered, ok bool) {
	if checkNumberLengths(sql) != nil {
		return "", false, false
	}
	defer func() {
		if r := recover(); r != nil {
			p.sql = parser.New()
			text, filtered, ok = "", false, false
		}
	}()
	stmts, _, err := p.sql.Parse(sql, "", "")
	if err != nil || len(stmts) != 1 {
		return "", false, false
	}
	if _, isSelect := stmts[0].(*ast.SelectStmt); !isSelect {
		return "", false, false
	}
	var all markerList
	stmts[0].Accept(&all)
	if len(all) != markers {
		return "", false, false
	}
	if markers == 0 {
		return sql, false, true
	}
	places := markerPlaces{stand: map[int]string{}}
	stmts[0].Accept(&places)
	var b strings.Builder
	last := 0
	slices.Sort(all)
	for _, at := range all {
		stand, placed := places.stand[at]
		if !placed || at < last || at >= len(sql) || sql[at] != '?' {
			return "", false, false
		}
		filtered = filtered || stand == "NULL"
		b.WriteString(sql[last:at])
		b.WriteString(stand)
		last = at + 1
	}
	b.WriteString(sql[last:])
	return b.String(), filtered, true
}

// markerList collects the byte offsets of the ? markers of a statement.
type markerList []int

func (m *markerList) Enter(n ast.Node) (ast.Node, bool) {
	if pm, ok := n.(*test_driver.ParamMarkerExpr); ok {
		*m = append(*m, pm.Offset)
	}
	return n, false
}

func (m *markerList) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// markerPlaces gives the stand-in of DescribeText to each marker in a
// WHERE, a HAVING, a LIMIT or an OFFSET, by offset.
type markerPlaces struct{ stand map[int]string }

func (m *markerPlaces) Enter(n ast.Node) (ast.Node, bool) {
	var limit *ast.Limit
	switch s := n.(type) {
	case *ast.SelectStmt:
		var filters markerList
		if s.Where != nil {
			s.Where.Accept(&filters)
		}
		if s.Having != nil {
			s.Having.Accept(&filters)
		}
		for _, at := range filters {
			if _, placed := m.stand[at]; !placed {
				m.stand[at] = "NULL"
			}
		}
		limit = s.Limit
	case *ast.SetOprStmt:
		limit = s.Limit
	}
	if limit != nil {
		if pm, ok := limit.Count.(*test_driver.ParamMarkerExpr); ok {
			m.stand[pm.Offset] = "1"
		}
		if pm, ok := limit.Offset.(*test_driver.ParamMarkerExpr); ok {
			m.stand[pm.Offset] = "0"
		}
	}
	return n, false
}

func (m *markerPlaces) Leave(n ast.Node) (ast.Node, bool) { return n, true }
