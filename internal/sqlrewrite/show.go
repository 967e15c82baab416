package sqlrewrite

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// show converts a SHOW statement. SHOW WARNINGS and SHOW ERRORS list the
// session's notes, SHOW GRANTS the analyst's one grant; every other SHOW is
// answered by the catalog engine from the configured schema (SHOW CREATE
// TABLE, SHOW FULL COLUMNS, SHOW INDEX, SHOW VARIABLES, ... in MySQL's shapes),
// unless a subquery in its WHERE would read a table.
func (p *Parser) show(s *ast.ShowStmt, sql string) (Statement, error) {
	switch s.Tp {
	case ast.ShowWarnings, ast.ShowErrors:
		return &ShowWarnings{Errors: s.Tp == ast.ShowErrors, Count: s.CountWarningsOrErrors}, nil
	case ast.ShowGrants:
		if s.User == nil || s.User.CurrentUser {
			return &ShowGrants{}, nil
		}
		return &ShowGrants{For: s.User.Username}, nil
	}
	r := p.collect(s)
	if r.subquery {
		return nil, refuse("subqueries in SHOW", "SHOW ... LIKE and WHERE filter the list")
	}
	if err := refuseCalls(r); err != nil {
		return nil, err
	}
	if q, ok, err := p.showAsSelect(s); err != nil || ok {
		return &Catalog{SQL: q}, err
	}
	return &Catalog{SQL: sql}, nil
}

// showWarningsLimitSyntax matches SHOW WARNINGS|ERRORS LIMIT [offset,] count
// and LIMIT count OFFSET offset, which MySQL accepts and the TiDB parser does not.
var showWarningsLimitSyntax = regexp.MustCompile(`(?i)^\s*SHOW\s+(WARNINGS|ERRORS)\s+LIMIT\s+(\d+)(?:\s*,\s*(\d+)|\s+OFFSET\s+(\d+))?\s*;?\s*$`)

// showWarningsLimit recognises SHOW WARNINGS LIMIT before the TiDB parser.
func showWarningsLimit(sql string) (*ShowWarnings, bool) {
	m := showWarningsLimitSyntax.FindStringSubmatch(sql)
	if m == nil {
		return nil, false
	}
	first, err := strconv.ParseUint(m[2], 10, 64)
	if err != nil {
		return nil, false
	}
	lim := &Limit{Count: first}
	switch {
	case m[3] != "": // LIMIT offset, count
		count, err := strconv.ParseUint(m[3], 10, 64)
		if err != nil {
			return nil, false
		}
		lim.Offset, lim.Count = first, count
	case m[4] != "": // LIMIT count OFFSET offset
		off, err := strconv.ParseUint(m[4], 10, 64)
		if err != nil {
			return nil, false
		}
		lim.Offset = off
	}
	return &ShowWarnings{Errors: strings.EqualFold(m[1], "errors"), Limit: lim}, true
}

// explain converts EXPLAIN of a private aggregate query or of a zero-row
// probe; a statement route refuses is refused here too.
func (p *Parser) explain(s *ast.ExplainStmt) (Statement, error) {
	const supported = "EXPLAIN takes a private aggregate SELECT, in the default format"
	switch {
	case s.Analyze:
		return nil, refuse("EXPLAIN ANALYZE", supported+" (it never runs the query)")
	case s.Explore || s.SQLDigest != "" || s.PlanDigest != "":
		return nil, refuse("EXPLAIN of a digest", supported)
	case !strings.EqualFold(s.Format, "row") && !strings.EqualFold(s.Format, "traditional"):
		return nil, refuse("EXPLAIN FORMAT="+s.Format, supported)
	}
	sel, ok := s.Stmt.(*ast.SelectStmt)
	if ok && sel.From == nil && hasSubquery(sel) && len(p.collect(sel).data) > 0 {
		// SELECT (SELECT COUNT(*) FROM pums): its subqueries' releases.
		q, err := p.fromLessScalars(sel)
		if err != nil {
			return nil, err
		}
		return &Explain{Query: q}, nil
	}
	if !ok || sel.From == nil {
		return nil, refuse("EXPLAIN of this statement", supported)
	}
	st, routed, err := p.route(sel, "")
	if err != nil {
		return nil, err
	}
	if c, isCatalog := st.(*Catalog); routed && isCatalog && c.ZeroRow != "" {
		return &Explain{ZeroRow: c.ZeroRow}, nil
	}
	q, err := p.privateSelect(sel)
	switch q := q.(type) {
	case *Select:
		return &Explain{Select: q}, nil
	case *Query:
		return &Explain{Query: q}, nil
	}
	return nil, err
}
