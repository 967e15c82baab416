package sqlrewrite

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/dpproxy/dpproxy/internal/dperr"
)

const supportedShow = "dpproxy answers SHOW DATABASES, SHOW [FULL] TABLES, SHOW [FULL] COLUMNS FROM t, DESCRIBE t, SHOW VARIABLES, SHOW STATUS, SHOW WARNINGS and SHOW ERRORS, each with an optional LIKE"

// otherShows are the SHOW statements of client metadata browsing that
// dpproxy answers with an empty or constant list (Show.Name); every other
// SHOW (SHOW CREATE TABLE, SHOW GRANTS, the TiDB extensions) is refused.
var otherShows = map[ast.ShowStmtType]string{
	ast.ShowEngines:         "engines",
	ast.ShowCharset:         "charset",
	ast.ShowCollation:       "collation",
	ast.ShowPlugins:         "plugins",
	ast.ShowTableStatus:     "table status",
	ast.ShowIndex:           "index",
	ast.ShowTriggers:        "triggers",
	ast.ShowProcedureStatus: "procedure status",
	ast.ShowFunctionStatus:  "function status",
	ast.ShowEvents:          "events",
	ast.ShowOpenTables:      "open tables",
	ast.ShowProcessList:     "processlist",
	ast.ShowPrivileges:      "privileges",
	ast.ShowProfiles:        "profiles",
}

// show converts a SHOW statement, or DESCRIBE t (which the parser makes a
// SHOW COLUMNS). The database of SHOW TABLES FROM db and SHOW COLUMNS FROM t
// FROM db is ignored, as in a query's db.table.
func (p *Parser) show(s *ast.ShowStmt) (Statement, error) {
	if s.Where != nil {
		return nil, refuse("SHOW ... WHERE", supportedShow+" (use LIKE)")
	}
	like, err := showLike(s.Pattern)
	if err != nil {
		return nil, err
	}
	if s.Column != nil {
		like = s.Column.Name.O // DESCRIBE t col: col is a LIKE pattern
	}
	switch s.Tp {
	case ast.ShowWarnings, ast.ShowErrors:
		if s.CountWarningsOrErrors {
			return nil, refuse("SHOW COUNT(*) WARNINGS", supportedShow)
		}
		return &ShowWarnings{Errors: s.Tp == ast.ShowErrors}, nil
	case ast.ShowDatabases:
		return &Show{Kind: ShowDatabases, Like: like}, nil
	case ast.ShowTables:
		return &Show{Kind: ShowTables, Like: like, Full: s.Full}, nil
	case ast.ShowColumns:
		t, ok := p.cat.Table(s.Table.Name.O)
		if !ok {
			return nil, dperr.New(dperr.UnknownTable, "Table '%s' doesn't exist", s.Table.Name.O)
		}
		return &Show{Kind: ShowColumns, Table: t.Name, Like: like, Full: s.Full}, nil
	case ast.ShowVariables:
		return &Show{Kind: ShowVariables, Like: like}, nil
	case ast.ShowStatus:
		return &Show{Kind: ShowStatus, Like: like}, nil
	}
	name, ok := otherShows[s.Tp]
	if !ok {
		return nil, refuse("this SHOW statement", supportedShow)
	}
	sh := &Show{Kind: ShowOther, Name: name, Like: like, Full: s.Full}
	if s.Table != nil {
		t, ok := p.cat.Table(s.Table.Name.O)
		if !ok {
			return nil, dperr.New(dperr.UnknownTable, "Table '%s' doesn't exist", s.Table.Name.O)
		}
		sh.Table = t.Name
	}
	return sh, nil
}

// showLike reads the LIKE 'pattern' of a SHOW statement.
func showLike(pat *ast.PatternLikeOrIlikeExpr) (string, error) {
	if pat == nil {
		return "", nil
	}
	v, ok := literal(pat.Pattern)
	if !pat.IsLike || pat.Not || !ok || !v.IsText {
		return "", refuse("this SHOW pattern", supportedShow+" (LIKE takes a string)")
	}
	return v.Str, nil
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

// explain converts EXPLAIN of a private aggregate query, and DESCRIBE t.
func (p *Parser) explain(s *ast.ExplainStmt) (Statement, error) {
	if sh, ok := s.Stmt.(*ast.ShowStmt); ok {
		return p.show(sh)
	}
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
	if !ok || sel.From == nil {
		return nil, refuse("EXPLAIN of this statement", supported)
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
