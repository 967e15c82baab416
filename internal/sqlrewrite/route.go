package sqlrewrite

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// This file is the one place that decides where a statement goes (README,
// "Design notes"):
//
//   - the catalog engine (*Catalog): statements over public metadata only —
//     information_schema and the other system schemas, the SHOW family,
//     DESCRIBE, FROM-less SELECTs of variables and session functions, SET
//     of system and user variables — and zero-row probes of a configured
//     table (LIMIT 0, a WHERE that is TRUE for no row, aggregates of NULL
//     only), whose answer is the same whatever the table holds. The
//     catalog engine holds the configured schema with zero rows.
//   - the private path (*Select, *Explain): aggregates over configured
//     tables, planned, charged and answered with noise; and (*Query of no
//     table, constantQuery) FROM-less SELECTs of constants only, which
//     post-processing evaluates as it does beside an aggregate, reading
//     no table and spending nothing.
//   - the session (*SetVariables of @dp_*, *ConstantSelect with dpproxy's
//     budget functions, *ShowWarnings, *ShowGrants, *Use, *Empty).
//   - refused: a statement that mixes catalog tables with configured
//     tables, file access (LOAD_FILE, INTO OUTFILE), and everything the
//     private path refuses.

// Catalog is a statement the catalog engine answers from public metadata.
type Catalog struct {
	TopLevel
	// SQL is the client's text of the one statement.
	SQL string
	// ZeroRow is the configured table of a zero-row probe (zeroRowProbe),
	// "" for other statements.
	ZeroRow string
}

// ShowGrants is SHOW GRANTS: the analyst may SELECT from dpproxy's database.
type ShowGrants struct {
	// For is the user name of SHOW GRANTS FOR name (its host is not kept:
	// every account is name@'%'); "" without FOR and for FOR CURRENT_USER.
	For string
}

func (*Catalog) statement()    {}
func (*ShowGrants) statement() {}

// CatalogDatabase is the read-only database of metadata a session may USE.
const CatalogDatabase = "information_schema"

// DataDatabase is the one database dpproxy shows its configured tables in; a
// configured table's name qualified by any other schema names no table.
const DataDatabase = "dpproxy"

// inDataDatabase reports whether a schema qualifier (lower case) may name a
// configured table: none, or dpproxy's own database.
func inDataDatabase(schema string) bool {
	return schema == "" || schema == DataDatabase
}

// systemSchemas are the schemas whose tables are metadata, answered by the
// catalog engine (those it does not have are unknown there).
var systemSchemas = map[string]bool{
	"information_schema": true, "mysql": true, "performance_schema": true, "sys": true,
}

// refusedFuncs touch the proxy's host rather than metadata (LOAD_FILE), or
// hold a connection and a goroutine for as long as the client asks
// (SLEEP, BENCHMARK, GET_LOCK): nothing a catalog query needs.
var refusedFuncs = map[string]bool{"load_file": true, "sleep": true, "benchmark": true, "get_lock": true}

// regexpFuncs, and REGEXP, RLIKE and NOT REGEXP, evaluate a regular
// expression: the catalog engine's matcher backtracks without a time
// limit and cannot be interrupted (package catalogdb's backstop), and
// post-processing has none, so every statement with one is refused,
// naming LIKE.
var regexpFuncs = map[string]bool{"regexp_like": true, "regexp_instr": true, "regexp_substr": true, "regexp_replace": true}

const supportedPattern = "LIKE matches text with the wildcards % and _ (WHERE TABLE_NAME LIKE 'a%', SHOW TABLES LIKE '%id')"

// refuseCalls refuses a statement that calls one of refusedFuncs or
// evaluates a regular expression (regexpFuncs).
func refuseCalls(r *tableRefs) error {
	regexp := r.regexp
	for f := range r.funcs {
		if refusedFuncs[f] {
			return refuseQuery("%s", strings.ToUpper(f))
		}
		regexp = regexp || regexpFuncs[f]
	}
	if regexp {
		return refuse("REGEXP, RLIKE and the REGEXP_ functions (dpproxy cannot stop a regular expression's match once it starts)", supportedPattern)
	}
	return nil
}

// dpFuncs and dpVariable mark statements the session answers itself:
// dpproxy's budget functions, and FOUND_ROWS(), the number of rows of the
// session's last result set (which the client has seen), which the
// catalog engine, not seeing the private answers, cannot know.
var dpFuncs = map[string]bool{"dp_remaining_epsilon": true, "dp_remaining_delta": true, "found_rows": true}

const supportedMix = "a statement reads either the catalog (information_schema, SHOW) or configured tables, not both"

// tableRefs are the tables a statement names, by kind.
type tableRefs struct {
	catalog, data, other []string
	// subquery is set when the statement has a subquery or a derived table.
	subquery bool
	// funcs are the lower-case names of the functions it calls.
	funcs map[string]bool
	// dpVariable is set when it reads or writes a @dp_* variable.
	dpVariable bool
	// regexp is set when it has REGEXP, RLIKE or NOT REGEXP.
	regexp bool
	// into is set for SELECT ... INTO.
	into bool
	// calcFoundRows is set for SELECT SQL_CALC_FOUND_ROWS.
	calcFoundRows bool
}

// collect walks a statement for the tables, functions and variables it names.
func (p *Parser) collect(n ast.Node) *tableRefs {
	r := &tableRefs{funcs: map[string]bool{}}
	n.Accept(&refCollector{p: p, refs: r})
	return r
}

type refCollector struct {
	p    *Parser
	refs *tableRefs
}

func (c *refCollector) Enter(n ast.Node) (ast.Node, bool) {
	r := c.refs
	switch n := n.(type) {
	case *ast.TableName:
		schema := n.Schema.L
		switch {
		case systemSchemas[schema], schema == "" && strings.EqualFold(c.p.database, CatalogDatabase):
			r.catalog = append(r.catalog, n.Name.O)
		case inDataDatabase(schema) && c.p.isConfigured(n.Name.O):
			r.data = append(r.data, n.Name.O)
		default:
			r.other = append(r.other, n.Name.O)
		}
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr:
		r.subquery = true
	case *ast.TableSource:
		if _, ok := n.Source.(*ast.TableName); !ok {
			r.subquery = true
		}
	case *ast.FuncCallExpr:
		r.funcs[n.FnName.L] = true
	case *ast.PatternRegexpExpr:
		r.regexp = true
	case *ast.VariableExpr:
		if !n.IsSystem && strings.HasPrefix(strings.ToLower(n.Name), "dp_") {
			r.dpVariable = true
		}
	case *ast.SelectStmt:
		if n.SelectIntoOpt != nil {
			r.into = true
		}
		if n.SelectStmtOpts != nil && n.SelectStmtOpts.CalcFoundRows {
			r.calcFoundRows = true
		}
	}
	return n, false
}

func (c *refCollector) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func (p *Parser) isConfigured(name string) bool {
	_, ok := p.cat.Table(name)
	return ok
}

// route decides a SELECT, set operation or SHOW (see the top of this file);
// ok false leaves the statement to the private path.
func (p *Parser) route(stmt ast.StmtNode, sql string) (st Statement, ok bool, err error) {
	r := p.collect(stmt)
	if r.into {
		return nil, false, refuseInto()
	}
	if r.calcFoundRows {
		return nil, false, refuseQuery("SQL_CALC_FOUND_ROWS (deprecated since MySQL 8.0.17): run the statement without it; FOUND_ROWS() then gives the number of rows it returned, and a second statement without LIMIT or with COUNT(*) the total")
	}
	if err := refuseCalls(r); err != nil {
		return nil, false, err
	}
	if len(r.catalog) > 0 && len(r.data) > 0 {
		return nil, false, refuse("reading catalog tables ("+r.catalog[0]+") together with configured tables ("+r.data[0]+")", supportedMix)
	}
	if len(r.data) > 0 {
		if sel, isSel := stmt.(*ast.SelectStmt); isSel && zeroRowProbe(sel, r) {
			return &Catalog{SQL: sql, ZeroRow: r.data[0]}, true, nil
		}
		return nil, false, nil
	}
	if len(r.catalog) > 0 {
		if sel, isSel := stmt.(*ast.SelectStmt); isSel {
			if q, inlined, err := inlineAssignments(sel); err != nil || inlined {
				return &Catalog{SQL: q}, err == nil, err
			}
		}
		return &Catalog{SQL: sql}, true, nil
	}
	if sel, isSel := stmt.(*ast.SelectStmt); isSel && sel.From == nil {
		for f := range r.funcs {
			if dpFuncs[f] {
				return nil, false, nil // dpproxy's budget functions: the session's ConstantSelect
			}
		}
		if r.dpVariable {
			return nil, false, nil
		}
		if q, ok := p.constantQuery(sel, sql); ok {
			return q, true, nil // post-processing's evaluator, as beside an aggregate
		}
		return &Catalog{SQL: sql}, true, nil
	}
	if len(r.other) > 0 {
		return nil, false, nil // unknown tables: the private path names them (1146)
	}
	return &Catalog{SQL: sql}, true, nil
}

// zeroRowProbe reports whether a SELECT of one configured table answers
// the same whatever the table holds, so that the catalog engine's copy of
// it, which holds no row, gives the backend's answer: one table, no
// subqueries, and LIMIT 0, a WHERE that is TRUE for no row (1 = 0, col =
// NULL, col BETWEEN NULL AND 5: rowTruth), or aggregates only of values
// NULL on every row (SUM(col = NULL): aggregatesOfNull). Tools send the
// first forms to learn a query's columns, and a NULL bound to a
// parameter makes the others (COUNT(*) ... WHERE col = ? is 0 and SUM(col
// = ?) NULL on every database). Such a statement reads no data and spends
// nothing. A statement with an aggregate the catalog engine does not know
// (ownAggregate: MEDIAN and the like) is none: the private path answers
// it, its planner reading such a WHERE as selecting no row and a LIMIT 0
// as leaving none, as free and exact.
func zeroRowProbe(sel *ast.SelectStmt, r *tableRefs) bool {
	if r.subquery || len(r.data) != 1 || len(r.other) > 0 || sel.With != nil || sel.From == nil {
		return false
	}
	if containsNode(sel, ownAggregate) {
		return false
	}
	if j := sel.From.TableRefs; j == nil || j.Right != nil {
		return false
	}
	if sel.Limit != nil && sel.Limit.Count != nil {
		if v, ok := literal(sel.Limit.Count); ok && !v.IsText && !v.Null && v.Num == 0 {
			return true
		}
	}
	if sel.Where != nil && rowTruth(sel.Where)&isTrue == 0 {
		return true
	}
	return aggregatesOfNull(sel)
}
