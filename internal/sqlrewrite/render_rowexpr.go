package sqlrewrite

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// derivedAlias names the table with its derived columns in a fetch.
const derivedAlias = "dpproxy_x"

// source renders the table a fetch reads: the table itself, or with
// Derived columns
//
//	(SELECT *, e₁ AS n₁, … FROM t [WHERE inner] [fence]) AS dpproxy_x
//
// each eᵢ a row expression (rowExpr), so that every fetch shape reads nᵢ
// as a column: clamped, tested for readability (a NULL eᵢ is unreadable),
// ordered in windows. With a unit bound the alias is left to the bounding
// (unitFrom), which reads the nᵢ as columns of the table: every layer of
// it passes them on, and the bounded rows are ordered by them too. inner
// are the fetch's conditions that read stored columns only (from), which
// a fenced table applies before computing the nᵢ.
//
// The fence (derivedFence) keeps the backend from merging the derived
// table into the statement that reads it: merged, the backend writes eᵢ
// in place of every reference to nᵢ, and computes it at each (the clamp
// reads nᵢ up to eight times, a bucket ladder once per bucket, and the
// layers above the clamp multiply that again). A GROUP BY of 2,265
// buckets of a date difference then took PostgreSQL 29 s to plan and
// over 60 s to run on 30 rows, and a sum of month differences SQLite
// 35 s on 3,000 rows instead of 0.35; a GROUP BY of 2,601 buckets of a
// sum of two columns took MariaDB 58 s on 10^6 rows instead of 3.9: a
// statement timed out (3024) or answered by the number of rows and by
// the buckets their values fall in, a failure that depended on the data.
// Fenced, each eᵢ is computed once per row.
//
// MySQL and MariaDB materialize a fenced derived table: they write its
// rows to a temporary table before the statement reads them, where
// PostgreSQL and SQLite pass them on row by row. There the derived table
// selects only what the statement around it reads (narrow, from a first
// rendering: render), the stored columns it names and the nᵢ it reads,
// and a fetch that reads no nᵢ reads the table itself (derivedTable); a
// copy of every column (*) took MariaDB 2.3 s more per 10^6 rows of six
// columns, and more for wide rows. Each nᵢ is selected as CAST(eᵢ AS
// DOUBLE): the temporary column of an expression with a fixed number of
// decimals is DOUBLE(M, D), which rounds what is stored and caps it below
// 10^(M−D) (TRUNCATE(x, 0) is DOUBLE(17, 0): 3.5e20 was stored as 1e17),
// where the cast's column holds the double computed, as the merged
// expression reads it. A fetch that reads each nᵢ once per row
// (readsOnce) has the same derived table without the fence: merged, it
// computes each eᵢ once per row all the same, without writing the rows
// to a temporary table first.
func (r *renderer) source(f Fetch, inner []string) (string, error) {
	table, err := r.spec.table(f.Table)
	if err != nil || !r.derivedTable(f) {
		return table, err
	}
	cols := []string{"*"}
	if r.narrow != nil {
		cols = nil
		for _, name := range slices.Sorted(maps.Keys(r.narrow)) {
			if slices.ContainsFunc(f.Derived, func(d DerivedColumn) bool { return d.Name == name }) {
				continue
			}
			col, err := r.spec.ident(name)
			if err != nil {
				return "", err
			}
			cols = append(cols, col)
		}
	}
	for _, d := range f.Derived {
		if r.narrow != nil && !r.narrow[d.Name] {
			continue
		}
		name, err := r.spec.ident(d.Name)
		if err != nil {
			return "", err
		}
		e, err := r.inside(func() (string, error) { return r.rowExpr(d.Expr) })
		if err != nil {
			return "", err
		}
		if r.narrow != nil {
			e = "CAST(" + e + " AS " + r.spec.double + ")"
		}
		cols = append(cols, e+" AS "+name)
	}
	derived := "SELECT " + strings.Join(cols, ", ") + " FROM " + table
	if len(inner) > 0 {
		derived += " WHERE " + joinConditions(inner, " AND ")
	}
	derived = "(" + derived + r.derivedFence(f) + ")"
	if f.Unit != nil {
		return derived, nil
	}
	return derived + " AS " + derivedAlias, nil
}

// derivedFence is the clause that keeps the backend from merging a
// derived table into the statement that reads it (source): PostgreSQL
// pulls up no subquery with an OFFSET, SQLite flattens none and runs it
// as a co-routine, row by row, and MySQL and MariaDB merge no derived
// table with a LIMIT (of 2^64 − 1 rows, more than a table holds) and
// materialize it (narrows). Empty where the derived table is left to
// merge: on MySQL under a unit bound, whose first layer (ROW_NUMBER) the
// backend materializes anyway, computing each eᵢ once per row; where the
// statement around it reads each eᵢ once per row (readsOnce), so that
// merged it computes each once per row too; and behind Vitess (not
// measured there: vtgate applies the LIMIT of a derived table of a
// sharded table itself, above the shards, so the shards could no longer
// aggregate). The choice depends on the fetch alone, never on the rows.
func (r *renderer) derivedFence(f Fetch) string {
	switch {
	case r.spec.name == "postgres":
		return " OFFSET 0"
	case r.spec.name == "sqlite":
		return " LIMIT -1 OFFSET 0"
	case r.narrows(f) && !r.readsOnce(f):
		return " LIMIT 18446744073709551615"
	}
	return ""
}

// narrows reports whether the fetch's derived table selects only what the
// statement around it reads, each expression cast to DOUBLE (source): on
// MySQL and MariaDB, not behind Vitess, without a unit bound, where the
// backend materializes it when it is fenced (derivedFence).
func (r *renderer) narrows(f Fetch) bool {
	return r.spec.name == "mysql" && !r.vitess && f.Unit == nil && len(f.Derived) > 0
}

// readsOnce reports whether the statement around the fetch's narrowed
// derived table (narrows) reads each derived column at most once per row,
// so that MySQL, merging the table into it, computes each row expression
// once per row: the exact sums without squares (GridSums.SumOnly, no
// Ranks; AVG's and SUM's), grouped or not, of a derived column whose NULLs
// are its columns' (RowExpr.nullColumns: the grid index reads it once and
// its count reads the columns instead, gridIndexFrom), over a grid whose
// clamp reads it once (gridClampReadsOnce), with no dimension, filter or
// predicate reading a derived column. Every other fetch reads a derived
// column more than once, or may: a clamp that flushes tiny values reads
// it up to five times, a bucket key once per comparison, Σk² twice more.
func (r *renderer) readsOnce(f Fetch) bool {
	if !r.narrows(f) {
		return false
	}
	var g *GridSums
	var dims []CellDim
	switch {
	case f.GridSums != nil:
		g = f.GridSums
	case f.GroupedGrid != nil:
		g, dims = &f.GroupedGrid.Grid, f.GroupedGrid.Dims
	default:
		return false
	}
	if !g.SumOnly || g.Ranks != nil || !gridClampReadsOnce(g.Lower, g.Upper, g.Unit) {
		return false
	}
	derived := func(name string) *DerivedColumn {
		i := slices.IndexFunc(f.Derived, func(d DerivedColumn) bool { return d.Name == name })
		if i < 0 {
			return nil
		}
		return &f.Derived[i]
	}
	d := derived(g.Column)
	if d == nil || d.Expr == nil {
		return false
	}
	if _, ok := d.Expr.nullColumns(); !ok {
		return false
	}
	reads := slices.ContainsFunc(dims, func(c CellDim) bool { return derived(c.Column) != nil }) ||
		slices.ContainsFunc(f.Filter, func(c Condition) bool { return derived(c.Column) != nil })
	if f.Boolean != nil {
		reads = reads || slices.ContainsFunc(predicateLeaves(f.Boolean, nil), func(c Condition) bool { return derived(c.Column) != nil })
	}
	return !reads
}

// derivedTable reports whether the fetch reads its table through the
// derived table of source: whenever it has Derived columns, except a
// narrowed one (narrows) that reads none of them.
func (r *renderer) derivedTable(f Fetch) bool {
	if r.narrow == nil {
		return len(f.Derived) > 0
	}
	return slices.ContainsFunc(f.Derived, func(d DerivedColumn) bool { return r.narrow[d.Name] })
}

// qualifier is the name that qualifies the columns of the table a fetch
// reads (source), without rendering it.
func (r *renderer) qualifier(f Fetch) (string, error) {
	switch {
	case f.Unit != nil:
		return unitAlias, nil
	case r.derivedTable(f):
		return derivedAlias, nil
	}
	return r.spec.table(f.Table)
}

// rowExpr renders a row expression in double precision, by the rule of
// Render: each column clamped to its declared bounds (NULL when
// unreadable, so that the expression is NULL), each constant cast to
// double, + - * / on doubles, and CASE with each WHEN condition an AND of
// conditions, a condition on a numeric column holding only for readable
// values (on SQLite a text is unreadable, not greater than every number).
// RowExpr.Bounds keeps every intermediate value within double precision's
// range, so no row makes the fetch fail.
func (r *renderer) rowExpr(e *RowExpr) (string, error) {
	if e == nil {
		return "CAST(NULL AS " + r.spec.double + ")", nil
	}
	switch e.Kind {
	case RowColumn:
		col, err := r.column(e.Column)
		if err != nil {
			return "", err
		}
		return r.clamp(col, e.Lower, e.Upper)
	case RowTemporal:
		return r.temporalValue(e)
	case RowConst:
		if !usable(e.Num) {
			return "", fmt.Errorf("sqlrewrite: row expression constant %g is not 0 or of magnitude in [2^-400, 2^430]", e.Num)
		}
		return "CAST(" + realLiteral(e.Num) + " AS " + r.spec.double + ")", nil
	case RowOp:
		if len(e.Args) != 2 || !strings.ContainsRune("+-*/LG", rune(e.Op)) {
			return "", fmt.Errorf("sqlrewrite: bad row expression operation %q", e.Op)
		}
		a, err := r.rowExpr(e.Args[0])
		if err != nil {
			return "", err
		}
		b, err := r.rowExpr(e.Args[1])
		if err != nil {
			return "", err
		}
		if f, ok := extremeNames[e.Op]; ok {
			return r.extreme(f, a, b), nil
		}
		if e.nullableDivisor() {
			// NULL for 0 as in MySQL, and for a stray fraction below 1 in
			// magnitude, so that Bounds holds (and PostgreSQL never divides
			// by zero).
			b = "(CASE WHEN ABS(" + b + ") >= 1 THEN " + b + " END)"
		}
		return "(" + a + " " + string(e.Op) + " " + b + ")", nil
	case RowIntDiv:
		if len(e.Args) != 1 || !(e.Num >= 1 && e.Num == math.Trunc(e.Num) && e.Num <= 1<<30) || e.Op != 't' && e.Op != 'f' {
			return "", fmt.Errorf("sqlrewrite: bad integer division %s", e)
		}
		a, err := r.rowExpr(e.Args[0])
		if err != nil {
			return "", err
		}
		q := "(" + a + " / CAST(" + realLiteral(e.Num) + " AS " + r.spec.double + "))"
		round := map[byte]string{'t': "TRUNC(", 'f': "FLOOR("}[e.Op]
		if e.Op == 't' && r.spec.name == "mysql" {
			return "TRUNCATE(" + q + ", 0)", nil
		}
		return "CAST(" + round + q + ") AS " + r.spec.double + ")", nil
	case RowMonthDiff:
		return r.monthDiff(e)
	case RowSecondDiff:
		return r.secondDiff(e)
	case RowFunc:
		return r.rowFunc(e)
	case RowCase:
		if len(e.When) == 0 || len(e.Args) != len(e.When)+1 {
			return "", errors.New("sqlrewrite: a row CASE needs WHEN clauses and one result each, and an ELSE")
		}
		var sb strings.Builder
		sb.WriteString("CASE")
		for i, w := range e.When {
			if len(w) == 0 {
				return "", errors.New("sqlrewrite: a row CASE WHEN needs a condition")
			}
			conds := make([]string, len(w))
			for j, c := range w {
				s, err := r.condition(c)
				if err != nil {
					return "", err
				}
				// A date range reads its own values (dateRange), which
				// readable, a number's rule, would all refuse on SQLite.
				if numeric := c.Temporal == "" && (c.Range != nil || len(c.In) > 0 && !c.In[0].IsText); numeric && !c.IsNull && !c.Complement {
					col, err := r.column(c.Column)
					if err != nil {
						return "", err
					}
					s = r.readable(col) + " AND " + s
				}
				conds[j] = "(" + s + ")"
			}
			res, err := r.rowExpr(e.Args[i])
			if err != nil {
				return "", err
			}
			sb.WriteString(" WHEN " + strings.Join(conds, " AND ") + " THEN " + res)
		}
		if last := e.Args[len(e.When)]; last != nil {
			res, err := r.rowExpr(last)
			if err != nil {
				return "", err
			}
			sb.WriteString(" ELSE " + res)
		}
		sb.WriteString(" END")
		return sb.String(), nil
	}
	return "", fmt.Errorf("sqlrewrite: unknown row expression kind %d", int(e.Kind))
}

// extreme renders LEAST or GREATEST (f) of a and b, NULL when either is:
// MySQL's LEAST and GREATEST and SQLite's MIN and MAX of two arguments
// are, PostgreSQL's ignore a NULL argument, so there the NULL case is
// written out (each operand twice; RowExpr.size counts it so).
func (r *renderer) extreme(f, a, b string) string {
	switch r.spec.name {
	case "sqlite":
		return map[string]string{"LEAST": "MIN", "GREATEST": "MAX"}[f] + "(" + a + ", " + b + ")"
	case "postgres":
		return "CASE WHEN " + a + " IS NULL OR " + b + " IS NULL THEN NULL ELSE " + f + "(" + a + ", " + b + ") END"
	}
	return f + "(" + a + ", " + b + ")"
}
