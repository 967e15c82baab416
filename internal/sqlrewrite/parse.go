package sqlrewrite

import (
	"errors"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/terror"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
)

// Parser turns the SQL text of one client connection into Statements.
//
// A Parser is not safe for concurrent use (the TiDB parser inside it keeps
// state and reuses its results between calls): create one per connection.
// Statements it returns share nothing with the parser and stay valid.
type Parser struct {
	cat *catalog.Config
	sql *parser.Parser
	// now is the clock of CURDATE() and NOW() (SetNow), read in
	// sessionZone (SetSessionTimeZone) when it is one.
	now         func() time.Time
	sessionZone string
	// collation is the session's collation_connection, which a Query
	// records (SetSessionCollation).
	collation string
	// zones are the backend's date and timestamp columns with a time
	// zone (SetColumnZones); nil knows none.
	zones *catalog.ColumnZones
	// database is the session's current database, which decides what an
	// unqualified table name is (SetDatabase).
	database string
	// charsets are the backend character sets of text columns
	// (SetCharsets); nil checks none.
	charsets *catalog.Charsets
	// selectLimitZero is set when the session's sql_select_limit is 0
	// (SetSelectLimitZero).
	selectLimitZero bool
}

// SetSessionCollation tells the parser the session's collation_connection
// as SET left it, which the Queries it parses record (Query.Collation).
func (p *Parser) SetSessionCollation(name string) { p.collation = name }

// SetDatabase tells the parser the session's current database (after USE):
// in CatalogDatabase, unqualified table names are catalog tables.
func (p *Parser) SetDatabase(name string) { p.database = name }

// NewParser returns a parser that resolves tables and columns in cat, which
// must be validated and is only read.
func NewParser(cat *catalog.Config) *Parser {
	return &Parser{cat: cat, sql: parser.New(), now: time.Now}
}

// keptParserBytes is the longest text after whose parse the TiDB parser
// is kept: it holds its last statement's tree and its stacks, grown to
// that statement, until the next parse (about 230 bytes per byte of a
// 78 KiB select list, so 60 MB or more per connection that last sent a
// 255 KiB statement), so after a longer text it is replaced.
const keptParserBytes = 16 << 10

// parseSQL is the TiDB parser's Parse of sql, after which a parser that
// parsed more than keptParserBytes is replaced by a fresh one.
func (p *Parser) parseSQL(sql string) ([]ast.StmtNode, error) {
	stmts, _, err := p.sql.Parse(sql, "", "")
	if len(sql) > keptParserBytes {
		p.sql = parser.New()
	}
	return stmts, err
}

// Parse parses one client statement. Text that is empty or only comments is
// *Empty. Errors are dperr errors: Parse (1064) for text that does not
// parse, or the code the parser names for it when MariaDB answers that one
// (parserCodes: 1367 for SELECT 1e400, 1210 for ESCAPE 'ab', ...),
// Unsupported (1235) for everything dpproxy does not answer (including more
// than one statement in the text, and SELECT ... INTO in the forms the
// parser does not take: selectInto), UnknownTable (1146) and UnknownColumn
// (1054) for names the catalog does not declare.
//
// No input makes Parse panic: numeric literals longer than the TiDB parser
// handles are refused first, and a panic inside the parser or the
// conversion is recovered as a Parse error wrapping the panic value (for
// the log; the client's message does not quote it). After a panic the
// parser is replaced, since its state is unknown.
func (p *Parser) Parse(sql string) (st Statement, err error) {
	return p.parse(sql, true)
}

// ParseDescribed parses the text DescribeText made of a prepared
// statement as Parse does, except that a zero-row probe is read as the
// private path reads it: a marker's NULL stand-in in the WHERE would make
// the statement one, whereas an execution with a value bound answers it
// privately, with the columns Describe is after. A zero-row probe's own
// text is read so too, for the columns its answer would have.
func (p *Parser) ParseDescribed(text string) (Statement, error) {
	return p.parse(text, false)
}

// parse is Parse; probes is whether zero-row probes go to the catalog
// engine.
func (p *Parser) parse(sql string, probes bool) (st Statement, err error) {
	if st, ok := showWarningsLimit(sql); ok {
		return st, nil
	}
	if err := checkNumberLengths(sql); err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			p.sql = parser.New()
			st, err = nil, parsePanic(r)
		}
	}()
	stmts, err := p.parseSQL(sql)
	if err != nil {
		if selectInto(sql) {
			return nil, refuseInto()
		}
		return nil, parseError(err)
	}
	switch len(stmts) {
	case 0:
		return &Empty{}, nil
	case 1:
		limited := selectLimited(stmts[0])
		st, err := p.statement(stmts[0], sql, probes)
		columnsOnly := false
		if err == nil && limited && p.selectLimitZero && private(st) {
			if zero := p.withLimitZero(sql, probes); zero != nil {
				st = zero
			} else {
				columnsOnly = true
			}
		}
		switch q := st.(type) {
		case *Query:
			p.recordSession(q)
		case *Explain:
			if q.Query != nil {
				p.recordSession(q.Query)
			}
		}
		if t, ok := st.(interface{ topLevel() *TopLevel }); ok && err == nil {
			t.topLevel().SelectLimited = limited
			t.topLevel().ColumnsOnly = columnsOnly
		}
		return st, err
	}
	return nil, refuseQuery("more than one statement in a query")
}

// parserCodes are the MySQL error codes the TiDB parser raises that a
// client gets as themselves, as MariaDB answers the same text; the
// parser's other codes (1426 for CAST(x AS FLOAT(60)), which MariaDB
// answers 1064) are parse errors.
var parserCodes = map[int]dperr.Kind{
	mysql.ErrIllegalValueForType: dperr.IllegalValue,     // SELECT 1e400
	mysql.ErrWrongArguments:      dperr.WrongArguments,   // LIKE 'a' ESCAPE 'ab'
	mysql.ErrUnknownCharacterSet: dperr.UnknownCharset,   // CONVERT('a' USING nosuch)
	mysql.ErrUnknownCollation:    dperr.UnknownCollation, // 'a' COLLATE nosuch
	mysql.ErrWrongUsage:          dperr.WrongUsage,       // SELECT ALL DISTINCT
}

// parseError is the client's error for the TiDB parser's err: the
// parser's message without its "[class:code]" tag, under the code it
// names when parserCodes has it, else under 1064 with MySQL's "You have
// an error in your SQL syntax: " before it. err is kept as the cause.
func parseError(err error) error {
	var te *terror.Error
	if !errors.As(err, &te) {
		return dperr.Wrap(dperr.Parse, err, "You have an error in your SQL syntax: %s", strings.TrimSpace(err.Error()))
	}
	if kind, ok := parserCodes[int(te.Code())]; ok {
		return dperr.Wrap(kind, err, "%s", te.GetMsg())
	}
	return dperr.Wrap(dperr.Parse, err, "You have an error in your SQL syntax: %s", te.GetMsg())
}

// recordSession records on q the session's collation_connection and
// max_allowed_packet and, when q reads a table, the collation dpproxy
// declares for its text columns.
func (p *Parser) recordSession(q *Query) {
	q.Collation = p.collation
	if p.cat != nil {
		q.MaxAllowedPacket = p.cat.MaxAllowedPacket
	}
	if q.Base.Table != "" {
		q.ColumnCollation = p.cat.TextCollation()
	}
	for _, s := range q.Scalars {
		p.recordSession(s.Query)
	}
}

// SetSelectLimitZero tells the parser whether the session's
// sql_select_limit is 0. Then a private statement it cuts (a *Select or
// *Query without a LIMIT of its own) is parsed as with LIMIT 0, as MySQL
// reads the variable (an implicit LIMIT): it has no row whatever the
// data, so it is answered with its columns as that statement is, and
// reads nothing and spends nothing (planner.QueryPlan.Empty, or the
// catalog engine's zero-row probe), instead of being charged for a row
// the cut then drops. A statement whose LIMIT 0 form is refused (a
// derived table with a LIMIT of its own, say) keeps its own form, marked
// TopLevel.ColumnsOnly: its columns, no row, nothing read or spent.
func (p *Parser) SetSelectLimitZero(zero bool) { p.selectLimitZero = zero }

// private reports whether st is answered on the private path.
func private(st Statement) bool {
	switch st.(type) {
	case *Select, *Query:
		return true
	}
	return false
}

// withLimitZero parses sql, a SELECT without LIMIT, again, with LIMIT 0
// (SetSelectLimitZero); nil if that statement is not answered (its
// refusal: LIMIT on a histogram answered from a synopsis, or an outer
// LIMIT beside a derived table's own), which leaves the statement as it
// is, answered with its columns only (TopLevel.ColumnsOnly).
func (p *Parser) withLimitZero(sql string, probes bool) Statement {
	stmts, err := p.parseSQL(sql)
	if err != nil || len(stmts) != 1 {
		return nil
	}
	sel, ok := stmts[0].(*ast.SelectStmt)
	if !ok || sel.Limit != nil {
		return nil
	}
	sel.Limit = &ast.Limit{Count: ast.NewValueExpr(uint64(0), "", "")}
	st, err := p.statement(sel, sql, probes)
	if err != nil {
		return nil
	}
	return st
}

// selectLimited reports whether sql_select_limit cuts the rows of stmt
// (TopLevel.SelectLimited): a SELECT or set operation without a LIMIT of
// its own, a SHOW, or DESCRIBE.
func selectLimited(stmt ast.StmtNode) bool {
	switch s := stmt.(type) {
	case *ast.SelectStmt:
		return s.Limit == nil
	case *ast.SetOprStmt:
		return s.Limit == nil
	case *ast.ShowStmt:
		return true
	case *ast.ExplainStmt:
		_, describe := s.Stmt.(*ast.ShowStmt)
		return describe
	}
	return false
}

// statement converts one parsed statement; it is deny-by-default. Without
// probes, a zero-row probe goes to the private path.
func (p *Parser) statement(stmt ast.StmtNode, sql string, probes bool) (Statement, error) {
	setOpr, err := guardDepth(stmt)
	if err != nil {
		return nil, err
	}
	bounds, err := guardSizes(stmt)
	if err != nil {
		return nil, err
	}
	if s, isSetOpr := stmt.(*ast.SetOprStmt); isSetOpr {
		if u, ok := constantUnion(s, sql); ok {
			return u, nil
		}
	}
	if err := guardSetOpr(setOpr); err != nil {
		return nil, err
	}
	switch s := stmt.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
		st, ok, err := p.route(s, sql)
		if c, isCatalog := st.(*Catalog); isCatalog && c.ZeroRow != "" && !probes {
			ok = false
		}
		if err != nil || ok {
			return st, err
		}
		if s, isSel := s.(*ast.SelectStmt); isSel {
			if s.From == nil && hasSubquery(s) {
				q, err := p.fromLessScalars(s)
				if err != nil {
					return nil, err
				}
				return q, nil
			}
			if s.From == nil {
				return constantSelect(s)
			}
			return p.privateSelect(s)
		}
	case *ast.ExplainStmt:
		if show, ok := s.Stmt.(*ast.ShowStmt); ok { // DESCRIBE t [col]
			if q, ok, err := p.showAsSelect(show); err != nil || ok {
				return &Catalog{SQL: q}, err
			}
			return &Catalog{SQL: sql}, nil
		}
		return p.explain(s)
	case *ast.SetStmt:
		r := p.collect(s)
		if len(r.data) > 0 || r.into {
			return nil, refuse("SET to a value read from configured tables", supportedSet)
		}
		if err := refuseCalls(r); err != nil {
			return nil, err
		}
		return setVariables(s, sql, bounds)
	case *ast.ShowStmt:
		return p.show(s, sql)
	case *ast.PrepareStmt:
		return prepare(s)
	case *ast.ExecuteStmt:
		return execute(s)
	case *ast.DeallocateStmt:
		return &Deallocate{Name: strings.ToLower(s.Name)}, nil
	case *ast.UseStmt:
		return &Use{Database: s.DBName}, nil
	case *ast.KillStmt:
		if s.Expr != nil {
			return nil, refuse("KILL of an expression", "KILL [QUERY | CONNECTION] <connection id> is supported (the id CONNECTION_ID() gives)")
		}
		return &Kill{ConnectionID: s.ConnectionID, Query: s.Query}, nil
	case *ast.BeginStmt, *ast.CommitStmt:
		return &Empty{}, nil
	case *ast.RollbackStmt:
		if s.SavepointName != "" {
			return nil, refuseQuery("ROLLBACK TO SAVEPOINT")
		}
		return &Empty{}, nil
	}
	return nil, refuseQuery("%s", statementKind(stmt))
}

// statementKind names a refused statement for the error message.
func statementKind(stmt ast.StmtNode) string {
	switch s := stmt.(type) {
	case *ast.SetOprStmt:
		return "UNION, INTERSECT and EXCEPT"
	case *ast.InsertStmt:
		if s.IsReplace {
			return "REPLACE"
		}
		return "INSERT"
	case *ast.UpdateStmt:
		return "UPDATE"
	case *ast.DeleteStmt:
		return "DELETE"
	case *ast.LoadDataStmt, *ast.ImportIntoStmt:
		return "loading data"
	case *ast.LockTablesStmt, *ast.UnlockTablesStmt:
		return "LOCK TABLES"
	case ast.DDLNode:
		return "DDL (CREATE, ALTER, DROP, TRUNCATE, RENAME)"
	case *ast.GrantStmt, *ast.RevokeStmt, *ast.GrantRoleStmt, *ast.CreateUserStmt, *ast.AlterUserStmt,
		*ast.DropUserStmt, *ast.SetPwdStmt, *ast.SetRoleStmt, *ast.SetDefaultRoleStmt:
		return "account management"
	case *ast.CallStmt:
		return "CALL"
	case *ast.DoStmt:
		return "DO"
	case *ast.FlushStmt:
		return "FLUSH"
	case *ast.AnalyzeTableStmt:
		return "ANALYZE TABLE"
	case *ast.SavepointStmt, *ast.ReleaseSavepointStmt:
		return "SAVEPOINT"
	}
	return "this statement"
}
