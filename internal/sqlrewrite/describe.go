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
	return p.describeText(sql, markers, "NULL")
}

// anyValue is the stand-in of a WHERE or HAVING marker for
// ProbeForEveryValue: a call whose value the checks know nothing of
// (rowTruth reads a comparison with it as possibly TRUE, FALSE or
// UNKNOWN), so that a condition with it is TRUE for no row only if it is
// so whatever value the marker holds.
const anyValue = "RAND()"

// ProbeForEveryValue reports whether every execution of the prepared
// statement sql (with markers ? markers, as DescribeText takes them) is
// a zero-row probe, which Parse routes to the catalog engine whatever
// values are bound: LIMIT 0, or a WHERE that is TRUE for no row whatever
// its markers hold (age = ? AND 1 = 0). Then DescribeText's text, its
// markers NULL, is one too, and describes the columns of each execution.
// A LIMIT or OFFSET marker stands as in DescribeText: a LIMIT ? makes a
// probe only when bound to 0, so it makes none here.
func (p *Parser) ProbeForEveryValue(sql string, markers int) bool {
	text, _, ok := p.describeText(sql, markers, anyValue)
	if !ok {
		return false
	}
	st, err := p.Parse(text)
	c, isCatalog := st.(*Catalog)
	return err == nil && isCatalog && c.ZeroRow != ""
}

// describeText is DescribeText with filter the stand-in of a WHERE or
// HAVING marker; filtered reports whether some marker is one of those.
func (p *Parser) describeText(sql string, markers int, filter string) (text string, filtered, ok bool) {
	if checkNumberLengths(sql) != nil {
		return "", false, false
	}
	defer func() {
		if r := recover(); r != nil {
			p.sql = parser.New()
			text, filtered, ok = "", false, false
		}
	}()
	stmts, err := p.parseSQL(sql)
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
	places := markerPlaces{stand: map[int]string{}, filter: filter, filters: map[int]bool{}}
	stmts[0].Accept(&places)
	var b strings.Builder
	last := 0
	slices.Sort(all)
	for _, at := range all {
		stand, placed := places.stand[at]
		if !placed || at < last || at >= len(sql) || sql[at] != '?' {
			return "", false, false
		}
		filtered = filtered || places.filters[at]
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
// WHERE, a HAVING, a LIMIT or an OFFSET, by offset: filter to those of
// a WHERE or HAVING, which filters holds.
type markerPlaces struct {
	stand   map[int]string
	filter  string
	filters map[int]bool
}

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
				m.stand[at], m.filters[at] = m.filter, true
			}
		}
		limit = s.Limit
	case *ast.SetOprStmt:
		limit = s.Limit
	}
	if limit != nil {
		if pm, ok := limit.Count.(*test_driver.ParamMarkerExpr); ok {
			m.stand[pm.Offset], m.filters[pm.Offset] = "1", false
		}
		if pm, ok := limit.Offset.(*test_driver.ParamMarkerExpr); ok {
			m.stand[pm.Offset], m.filters[pm.Offset] = "0", false
		}
	}
	return n, false
}

func (m *markerPlaces) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// MarkerLabels returns, for a prepared statement's text sql, the column
// name of each select-list item of its one SELECT that holds a ? marker
// and has no alias: the item as the client wrote it ("1 + ?", "?"), which
// MySQL and MariaDB name the column whatever the values bound ("" for
// every other item). An execution's text, with the values in place of
// the markers, would name them after the values ("1 + 5", "5"). It
// returns nil when sql is not one SELECT, lists * (whose columns its text
// does not tell) or has no such item.
func (p *Parser) MarkerLabels(sql string) (labels []string) {
	defer func() {
		if r := recover(); r != nil {
			p.sql = parser.New()
			labels = nil
		}
	}()
	stmts, err := p.parseSQL(sql)
	if err != nil || len(stmts) != 1 {
		return nil
	}
	sel, isSelect := stmts[0].(*ast.SelectStmt)
	if !isSelect || sel.Fields == nil {
		return nil
	}
	labels = make([]string, len(sel.Fields.Fields))
	marked := false
	for i, f := range sel.Fields.Fields {
		if f.WildCard != nil {
			return nil
		}
		var markers markerList
		f.Expr.Accept(&markers)
		if len(markers) > 0 && f.AsName.O == "" {
			labels[i], marked = fieldText(f), true
		}
	}
	if !marked {
		return nil
	}
	return labels
}
