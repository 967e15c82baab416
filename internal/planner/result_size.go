package planner

import (
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// The size of a result post-processing builds.
//
// PostProcess computes every output row of a private answer in the
// proxy's memory, and the whole result is held before it is sent. The
// size guard (package sqlrewrite) bounds the strings of one evaluation of
// a statement, not that times its rows: REPEAT('x', 1000000) three times
// beside FLOOR(income / 100) * 100 over 5,001 buckets built 15 GB and
// killed the proxy for every analyst (an independent review). So the
// cells post-processing keeps are bounded twice, at catalog.MaxResultBytes
// (64 MiB, as over the catalog):
//
//   - before anything is read or charged, by the statement's public bound
//     on its rows (resultRows: the groups of its declared keys and
//     buckets with WITH ROLLUP's totals, or partition selection's cap on
//     the rows it answers) times the most one row may keep (rowBound):
//     checkResultSize refuses with 1235 a statement whose product passes
//     the limit;
//   - while it runs, by counting every cell as it is kept (Warnings.hold):
//     past the limit the statement fails with dperr.ResultTooLarge (1105,
//     the catalog's error), so the memory stays bounded where the plan's
//     bound is loose (the values of a key chosen by partition selection,
//     whose lengths the data decides, are counted as the 255 characters
//     dpproxy declares text columns with).
//
// A cell counts cellBytes (its fixed part: a number, its digits included,
// or NULL) plus the bytes of its text. The cells counted are those
// PostProcess keeps for every row it computes: the output columns and
// ORDER BY values (project), the window functions' PARTITION BY, ORDER BY
// and argument values and their results (computeWindows), and an outer
// query's aggregate arguments, keys, aggregates, columns and ORDER BY
// values (postProcessOuter). Every row is computed before DISTINCT,
// ORDER BY and LIMIT choose among them, so LIMIT does not lower the
// bound: counting it would let a plan pass that the count then fails,
// charged.
//
// Privacy: the plan's check reads the statement, the configuration and
// the session's max_allowed_packet only. The count reads the cells
// post-processing computes from released values, public keys and
// constants, and the number of released rows, all of which the answer
// releases; so whether a statement fails at run time depends on the data
// only through what it releases. A failure at run time comes after the
// releases were made and is charged, as a 1690 of post-processing is.
const (
	// cellBytes is what a cell counts besides its text.
	cellBytes = 64
	// numberText is the longest text of a number post-processing
	// writes: a DOUBLE near its largest, 309 integer digits, with the
	// most decimals a type fixes, a sign and a point (a DECIMAL has at
	// most 81 digits).
	numberText = 1 + 309 + 1 + NotFixedDecimals - 1
	// temporalText is the longest text of a released date or timestamp
	// ('YYYY-MM-DD hh:mm:ss.ffffff').
	temporalText = 26
	// selectedKeyText is the assumed text of a value of a key chosen by
	// partition selection: 255 characters of up to 4 bytes, the VARCHAR
	// dpproxy announces (the count holds longer ones to the limit).
	selectedKeyText = defaultTextChars * 4
	// formatText is the longest text FORMAT writes of a number, before its
	// decimals: a sign, 309 digits, a separator for every two of them
	// (the Indian grouping's shortest), and a point.
	formatText = 1 + 309 + 309/2 + 1
)

// resultTooLarge is the run-time failure of a result past the limit.
func resultTooLarge() error {
	return dperr.New(dperr.ResultTooLarge,
		"the result passed %d bytes (64 MiB, the most the proxy holds of one statement's result) while it was computed from the released values; "+
			"its budget is spent; use fewer groups, fewer columns or shorter strings", catalog.MaxResultBytes)
}

// hold counts cells that post-processing keeps (see above), failing once
// the statement's cells pass catalog.MaxResultBytes.
func (w *Warnings) hold(cells ...Datum) error {
	for _, d := range cells {
		w.held += cellBytes + int64(len(d.Str))
	}
	if w.held > catalog.MaxResultBytes {
		return resultTooLarge()
	}
	return nil
}

// checkResultSize refuses, before anything is read or charged, a plan
// whose result may pass catalog.MaxResultBytes: its public bound on rows
// times the most one row keeps. A SELECT without FROM is one row, which
// the size guard bounds.
func (qp *QueryPlan) checkResultSize() error {
	q := qp.Query
	if q.FromLess != "" {
		return nil
	}
	rows := max(qp.resultRows(), 1)
	per := rowBound(q)
	if per <= catalog.MaxResultBytes/rows {
		return nil
	}
	return dperr.New(dperr.Unsupported,
		"not supported: a result of up to %d rows of up to %d bytes each (post-processing holds a statement's whole result in the proxy's memory, at most %d bytes, 64 MiB); "+
			"the nearest supported form asks for fewer groups (wider buckets, fewer keys or declared values), fewer columns or shorter strings (smaller REPEAT, LPAD and RPAD counts)",
		rows, per, catalog.MaxResultBytes)
}

// ResultBound is the most the cells of qp's result may count (see above):
// its public bound on rows times the most one row keeps, at most
// catalog.MaxResultBytes for a plan PlanQuery returned. It reads the
// statement and the configuration only, never the data, so the proxy may
// reserve it (as memory it holds until the answer is written) before
// anything is read or charged.
func (qp *QueryPlan) ResultBound() int64 {
	return satMul(max(qp.resultRows(), 1), rowBound(qp.Query))
}

// resultRows is the public bound on the rows post-processing starts from:
// none when the plan is Empty, the keys chosen by partition selection it
// answers (SelectedLimit) times the declared groups beside them, else
// every group with WITH ROLLUP's totals (outputRows).
func (qp *QueryPlan) resultRows() int64 {
	switch {
	case qp.Empty:
		return 0
	case qp.Selection != nil:
		return int64(qp.SelectedLimit()) * int64(len(qp.Groups))
	}
	return int64(qp.outputRows())
}

// rowBound is the most the cells one row keeps may count: those of its
// output columns, ORDER BY values and window functions, and of an outer
// query's aggregate arguments (one per inner row) and of its row (an
// outer query has at most as many rows as the inner one, or one).
func rowBound(q *sqlrewrite.Query) int64 {
	env := newSizeEnv(q)
	var n int64
	cells := func(es ...*sqlrewrite.Expr) {
		for _, e := range es {
			n = sat(n + cellBytes + env.of(e).held)
		}
	}
	for _, c := range q.Columns {
		cells(c.Expr)
	}
	for _, o := range q.OrderBy {
		cells(o.Expr)
	}
	for i, w := range q.Windows {
		cells(w.PartitionBy...)
		for _, o := range w.OrderBy {
			cells(o.Expr)
		}
		if w.Arg != nil {
			cells(w.Arg)
		}
		n = sat(n + cellBytes + env.windows[i].held)
	}
	o := q.Outer
	if o == nil {
		return n
	}
	n = sat(n + env.outer(q))
	for _, c := range o.Columns {
		cells(c.Expr)
	}
	for _, k := range o.OrderBy {
		cells(k.Expr)
	}
	return n
}

// outer sets the sizes of what q's outer query reads (the inner
// columns, its keys and aggregates) and returns the bytes its keys' and
// aggregates' cells, and its aggregates' arguments, keep.
func (env *sizeEnv) outer(q *sqlrewrite.Query) int64 {
	o := q.Outer
	var n int64
	for _, c := range q.Columns {
		env.cols = append(env.cols, env.of(c.Expr))
	}
	for _, k := range o.Keys {
		s := env.at(env.cols, k)
		env.outerKeys = append(env.outerKeys, s)
		n = sat(n + cellBytes + s.held)
	}
	for _, a := range o.Aggs {
		s := aNumber
		if a.Arg != nil {
			n = sat(n + cellBytes + env.of(a.Arg).held)
			if a.Func == "min" || a.Func == "max" {
				s = env.of(a.Arg)
			}
		}
		env.outerAggs = append(env.outerAggs, s)
		n = sat(n + cellBytes + s.held)
	}
	return n
}

// scalarSize bounds the value of the scalar subquery q: its one output
// column, its outer query's where it has one.
func scalarSize(q *sqlrewrite.Query) textSize {
	env := newSizeEnv(q)
	columns := q.Columns
	if q.Outer != nil {
		env.outer(q)
		columns = q.Outer.Columns
	}
	if len(columns) != 1 {
		return textOf(env.packet)
	}
	return env.of(columns[0].Expr)
}

// textSize bounds a value: held, the bytes of text its cell holds (0 for
// a number or NULL); text, the bytes of its text where a function makes
// text of it (a number's numberText).
type textSize struct{ held, text int64 }

var aNumber = textSize{0, numberText}

func textOf(n int64) textSize { return textSize{n, n} }

func larger(a, b textSize) textSize { return textSize{max(a.held, b.held), max(a.text, b.text)} }

// sat and satMul keep a bound from overflowing: past 2^52 every bound
// is refused anyway.
func sat(n int64) int64 { return min(n, 1<<52) }

func satMul(a, b int64) int64 {
	if b != 0 && a > (1<<52)/b {
		return 1 << 52
	}
	return a * b
}

// sizeEnv holds the sizes of what a query's expressions read.
type sizeEnv struct {
	packet                     int64
	keys, windows, scalars     []textSize
	cols, outerKeys, outerAggs []textSize
}

func newSizeEnv(q *sqlrewrite.Query) *sizeEnv {
	env := &sizeEnv{packet: (&Warnings{packet: q.MaxAllowedPacket}).maxPacket()}
	for _, k := range q.Keys {
		s := textSize{}
		if k.Private {
			s = larger(textOf(selectedKeyText), aNumber)
		}
		for _, v := range k.Values {
			s = larger(s, valueSize(v))
		}
		env.keys = append(env.keys, s)
	}
	for _, sc := range q.Scalars {
		env.scalars = append(env.scalars, scalarSize(sc.Query))
	}
	for _, w := range q.Windows {
		s := aNumber
		if w.Arg != nil && (w.Func == "min" || w.Func == "max") {
			s = env.of(w.Arg)
		}
		env.windows = append(env.windows, s)
	}
	return env
}

func valueSize(v sqlrewrite.Value) textSize {
	switch {
	case v.Null:
		return textSize{}
	case v.IsText:
		return textOf(int64(len(v.Str)))
	}
	return aNumber
}

// at is sizes[i], or the longest text a function may make where i is
// outside them.
func (env *sizeEnv) at(sizes []textSize, i int) textSize {
	if i < 0 || i >= len(sizes) {
		return textOf(env.packet)
	}
	return sizes[i]
}

// of bounds the value Eval computes for e.
func (env *sizeEnv) of(e *sqlrewrite.Expr) textSize {
	switch e.Kind {
	case sqlrewrite.ExprConst, sqlrewrite.ExprNoRow, sqlrewrite.ExprConstAgg:
		return valueSize(e.Value)
	case sqlrewrite.ExprAgg:
		return textSize{temporalText, numberText} // a number, or a date's text
	case sqlrewrite.ExprKey:
		return env.at(env.keys, e.Index)
	case sqlrewrite.ExprWindow:
		return env.at(env.windows, e.Index)
	case sqlrewrite.ExprScalar:
		return env.at(env.scalars, e.Index)
	case sqlrewrite.ExprColumn:
		return env.at(env.cols, e.Index)
	case sqlrewrite.ExprOuterKey:
		return env.at(env.outerKeys, e.Index)
	case sqlrewrite.ExprOuterAgg:
		return env.at(env.outerAggs, e.Index)
	case sqlrewrite.ExprCase:
		var s textSize
		for i, a := range e.Args {
			if i%2 == 1 || e.HasElse && i == len(e.Args)-1 { // a THEN or the ELSE
				s = larger(s, env.of(a))
			}
		}
		return s
	case sqlrewrite.ExprOp:
		return aNumber // arithmetic, comparisons and predicates
	case sqlrewrite.ExprFunc:
		return env.function(e)
	}
	return textOf(env.packet)
}

// function bounds a function's value (Eval, evalFunc, evalString):
// numbers; a value one of its arguments gives; text that joins its
// arguments; text a count or MariaDB's max_allowed_packet bounds (the
// functions that check the packet return NULL beyond it).
func (env *sizeEnv) function(e *sqlrewrite.Expr) textSize {
	arg := func(i int) textSize {
		if i >= len(e.Args) {
			return textSize{}
		}
		return env.of(e.Args[i])
	}
	count := func(i int) (int64, bool) {
		if i >= len(e.Args) {
			return 0, false
		}
		n, null, ok := constantInt(e.Args[i])
		if null {
			n = 0
		}
		return max(n, 0), ok
	}
	packet := func(n int64, counted bool) textSize {
		if !counted {
			return textOf(env.packet)
		}
		return textOf(min(n, env.packet))
	}
	switch e.Op {
	case "round", "truncate", "floor", "ceil", "abs", "sign", "power", "sqrt", "exp", "ln", "log", "log10", "log2",
		"datediff", "timestampdiff", "dp_interval_low", "dp_interval_high", "length", "char_length",
		"cast-int", "cast-unsigned", "cast-decimal", "cast-real", "cast-float":
		return aNumber
	case "coalesce", "ifnull", "greatest", "least":
		var s textSize
		for i := range e.Args {
			s = larger(s, arg(i))
		}
		return s
	case "nullif":
		return arg(0)
	case "if":
		return larger(arg(1), arg(2))
	case "cast-char": // CHAR(n) cuts it to n
		n := arg(0).text
		if c, _ := count(1); len(e.Args) > 1 {
			n = min(n, c)
		}
		return textOf(n)
	case "concat":
		var n int64
		for i := range e.Args {
			n = sat(n + arg(i).text)
		}
		return textOf(n)
	case "concat_ws":
		n := satMul(arg(0).text, int64(max(len(e.Args)-2, 0)))
		for i := 1; i < len(e.Args); i++ {
			n = sat(n + arg(i).text)
		}
		return textOf(n)
	case "format":
		dec, ok := count(1)
		if !ok {
			dec = maxFormatDecimals
		}
		return textOf(formatText + min(dec, maxFormatDecimals))
	case "lpad", "rpad":
		n, ok := count(1)
		return packet(satMul(n, 4), ok) // n characters of up to 4 bytes
	case "repeat":
		n, ok := count(1)
		return packet(satMul(arg(0).text, n), ok)
	case "replace":
		return packet(satMul(arg(0).text, max(arg(2).text, 1)), true)
	case "upper", "lower":
		// A byte that is no UTF-8 becomes U+FFFD, three bytes.
		return textOf(satMul(arg(0).text, 3))
	case "left", "right", "substring", "trim", "ltrim", "rtrim":
		return textOf(arg(0).text)
	}
	var n int64
	for i := range e.Args {
		n = sat(n + arg(i).text)
	}
	return textOf(sat(satMul(n, 4) + cellBytes))
}
