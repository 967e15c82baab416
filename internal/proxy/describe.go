package proxy

import (
	"context"
	"errors"
	"math"

	"github.com/dpproxy/dpproxy/internal/catalogdb"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// Describe returns the result columns a prepared statement's execution
// will send, for the protocol's COM_STMT_PREPARE answer: query is its text
// with markers ? markers, each standing for a value not yet known
// (sqlrewrite.Parser.DescribeText).
//
// A private SELECT's columns are those of its answer (answerColumn:
// names, types, lengths and flags), from the statement's parse and plan
// under the session's settings, which fix them whatever the data and the
// noise; so are those of a FROM-less SELECT of constants, which
// post-processing's evaluator answers. A SELECT the catalog engine
// answers (information_schema, @@variables, NOW()) is described by the engine's analysis of the statement
// it would run (catalogdb.Session.Describe), which runs nothing, assigns
// no variable and reads no row; a zero-row probe's columns are
// probeColumns', as its execution announces them, and so are those of a
// statement that is one whatever its markers hold
// (sqlrewrite.Parser.ProbeForEveryValue: SELECT * FROM t WHERE a > ?
// LIMIT 0, ... WHERE a = ? AND 1 = 0). Describing reads no data and
// reserves nothing.
//
// It returns nil, for the statement to announce no columns, whenever it
// cannot tell them for sure: a statement that is not a SELECT (SHOW,
// settings, EXPLAIN), one that would be refused, one with a marker whose
// value could name or type a column (in the select list, or in a WHERE
// that could narrow a GROUP BY key to values of another type), and on
// any panic. An execution whose session state changed meanwhile (USE,
// @dp_ settings, a user variable's value) sends its own column
// definitions, as it always does. A statement longer than
// largeStatementBytes is not described, and a statement's parses run
// behind the parse gate (large_parse.go), which a prepare must not bypass
// (several concurrent prepares of 4 MiB statements took gigabytes at
// once; found by an independent review): one whose wait for it ends is
// not described.
func (s *Session) Describe(ctx context.Context, query string, markers int) (cols []catalogdb.Column) {
	if len(query) > largeStatementBytes {
		return nil
	}
	release, err := s.engine.parses.enter(ctx, s.user, int64(len(query)))
	if err != nil {
		return nil
	}
	defer release()
	defer func() {
		if r := recover(); r != nil {
			cols = nil
		}
	}()
	text, filtered, ok := s.parser.DescribeText(query, markers)
	if !ok {
		return nil
	}
	var stmt sqlrewrite.Statement
	if filtered {
		s.parser.SetSessionTimeZone(s.catalog.TimeZone()) // as parse does
		s.parser.SetSessionCollation(s.catalog.CollationConnection())
		s.parser.SetSelectLimitZero(s.catalog.SelectLimit() == 0)
	}
	if filtered && !s.parser.ProbeForEveryValue(query, markers) {
		// A NULL stand-in may make it a zero-row probe; a value will not.
		stmt, err = s.parser.ParseDescribed(text)
	} else {
		// Every execution is a zero-row probe (LIMIT 0, a WHERE TRUE
		// for no row whatever the markers hold), and so is text.
		stmt, err = s.parseText(text)
	}
	if err != nil {
		return nil
	}
	if c, isCatalog := stmt.(*sqlrewrite.Catalog); isCatalog {
		described, err := s.catalog.Describe(ctx, c.SQL)
		if err != nil {
			return nil
		}
		if c.ZeroRow != "" {
			return s.probeColumns(c.SQL, described, filtered)
		}
		return described
	}
	return s.plannedColumns(stmt, filtered)
}

// plannedColumns are the columns of stmt's private answer, from its plan
// under the session's settings, or nil if it is no private SELECT, would
// be refused, or (filtered: a WHERE's marker stands for NULL) its key
// columns' types could depend on the WHERE's values.
func (s *Session) plannedColumns(stmt sqlrewrite.Statement, filtered bool) []catalogdb.Column {
	cols, err := s.planColumns(stmt, filtered)
	if err != nil {
		return nil
	}
	return cols
}

// errKeysMayNarrow is planColumns' answer for a statement whose key
// columns' types could depend on its WHERE's values.
var errKeysMayNarrow = errors.New("a WHERE's values may narrow the keys to values of another type")

// planColumns is plannedColumns with the planner's refusal, or
// errKeysMayNarrow; nil without error where plannedColumns gives nil for
// another reason.
func (s *Session) planColumns(stmt sqlrewrite.Statement, filtered bool) (cols []catalogdb.Column, err error) {
	var names []string
	var types []planner.ResultType
	switch st := stmt.(type) {
	case *sqlrewrite.Select:
		if filtered && st.GroupBy != nil {
			return nil, errKeysMayNarrow // the WHERE's range picks the buckets, whose keys type the key column
		}
		plan, err := s.engine.planner.Plan(st, s.settings())
		if err != nil {
			return nil, err
		}
		for _, o := range plan.Outputs {
			names = append(names, o.Label)
		}
		types = plan.ColumnTypes()
	case *sqlrewrite.Query:
		if filtered && !keysTypedAlike(st.Keys) {
			return nil, errKeysMayNarrow
		}
		qp, err := s.engine.planner.PlanQuery(st, s.settings())
		if err != nil {
			return nil, err
		}
		columns := st.Columns
		if st.Outer != nil {
			columns = st.Outer.Columns
		}
		for _, c := range columns {
			names = append(names, c.Label)
		}
		types = qp.ColumnTypes()
	default:
		return nil, nil
	}
	if len(names) == 0 || len(names) != len(types) {
		return nil, nil
	}
	for j, name := range names {
		cols = append(cols, answerColumn(name, types[j]))
	}
	return cols, nil
}

// probeColumns are the column definitions a zero-row probe (a
// sqlrewrite.Catalog with ZeroRow) announces, engine being the catalog
// engine's for it, so that a probe tools send to learn a statement's
// columns (LIMIT 0, WHERE 1 = 0, a WHERE's ? bound to NULL) gets those
// its answer has: where the private path would answer the statement (its
// reading of the probe plans), the answer's types (answerColumn) under
// the engine's names; otherwise the engine's, with its TEXT columns
// (a configured text column is TEXT there) VARCHAR as in answers. The
// values the engine returns (none, or NULL and 0 for aggregates over no
// row) are valid in either. A statement longer than largeStatementBytes
// is not parsed again for the private reading. filtered is for sql, a
// prepared statement's text, whose WHERE's markers stand for NULL
// (Describe): where the private reading's key columns' types could depend
// on their values, its columns are nil, not to be described.
func (s *Session) probeColumns(sql string, engine []catalogdb.Column, filtered bool) (cols []catalogdb.Column) {
	defer func() {
		if r := recover(); r != nil {
			cols = textAsVarchar(engine)
		}
	}()
	if len(sql) <= largeStatementBytes {
		if stmt, err := s.parser.ParseDescribed(sql); err == nil {
			planned, err := s.planColumns(stmt, filtered)
			if errors.Is(err, errKeysMayNarrow) {
				return nil
			}
			if planned != nil && len(planned) == len(engine) {
				for j := range planned {
					planned[j].Name = engine[j].Name
				}
				return planned
			}
		}
	}
	return textAsVarchar(engine)
}

// textAsVarchar is engine's columns with each TEXT one (MySQL's type BLOB
// with a character set) as a VARCHAR answer column of the same name.
func textAsVarchar(engine []catalogdb.Column) []catalogdb.Column {
	var cols []catalogdb.Column
	for _, c := range engine {
		if c.Type == mysqlTypeBlob && c.Charset != binaryCollation {
			c = answerColumn(c.Name, planner.ResultText)
		}
		cols = append(cols, c)
	}
	return cols
}

// keysTypedAlike reports whether every GROUP BY key's type is the same
// over any non-empty part of its values, which a WHERE may narrow them
// to: each key's values are all of one kind (text, integers, other
// numbers, dates or timestamps), with no NULL group among them.
func keysTypedAlike(keys []sqlrewrite.GroupKey) bool {
	for _, k := range keys {
		kinds := map[string]bool{}
		for _, v := range k.Values {
			kinds[valueKind(v)] = true
		}
		if len(kinds) > 1 {
			return false
		}
	}
	return true
}

// valueKind is the class of a key value whose type keysTypedAlike
// compares.
func valueKind(v sqlrewrite.Value) string {
	switch {
	case v.Null:
		return "null"
	case v.IsText && v.Temporal != "":
		return "temporal " + string(v.Temporal)
	case v.IsText:
		return "text"
	case v.Num == math.Trunc(v.Num) && math.Abs(v.Num) < 1<<53:
		return "integer"
	}
	return "number"
}
