package sqlrewrite

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

// Render returns the SQL text and bind arguments of a fetch in dialect d.
//
// Identifiers are quoted for the dialect (schema-qualified tables part by
// part) and names that could break out of the quotes are refused. Numbers
// (bounds, filter constants) are written by the proxy as literals that
// read back as the exact float64; dates and timestamps (date keys and
// conditions, dates.go) are written by the proxy from day or second
// numbers as literals of the fixed shape 'YYYY-MM-DD[ HH:MM:SS]'; strings
// and the ranks a window keeps (its LIMIT and OFFSET, rank) are always
// bind arguments, each bound where its placeholder ends up in the text,
// whatever order the text was assembled in (bind), except for Vitess
// (RenderVitess).
//
// The text is therefore a function of the statement, the configuration,
// values released with noise (partition selection's keys) and a unit
// bound's random salt alone, never of the data: the ranks, the only
// numbers of a fetch that the exact count places (a median's window is
// centred on rank ⌊(n−1)/2⌋+1, a whole column's is LIMIT n), are
// arguments. The backend logs the text and not the arguments, so its log
// holds no exact count.
//
// Totality (DESIGN.md §2: whether a statement answers, errors or returns NULL
// never depends on private data except through a released noisy value).
// Every rendered fetch runs without error on every value the backend column
// can hold: NULL, NaN, ±Inf, subnormals, values far outside the bounds, the
// largest integers, and on SQLite text and blobs in a numeric column. Each
// row's value is first read by a fixed, data-independent rule (clamp, below),
// and only then enters arithmetic, which the bounds' limits
// (catalog.UsableBound) keep free of overflow and underflow:
//
//   - unreadable (NULL; on SQLite any storage class but INTEGER and REAL):
//     NULL, skipped by every aggregate and excluded from windows, pairs,
//     histograms and cells (readable);
//   - below lo (-Inf included): lo; above hi (+Inf included, and PostgreSQL's
//     NaN, which it orders above every number): hi; the comparisons are on
//     the column's own type, so no out-of-range cast (a huge NUMERIC) happens
//     (on MySQL on the value's double, a conversion that cannot fail there);
//   - magnitude below catalog.MinBoundMagnitude (subnormals, 1e-200): 0, so
//     a square cannot underflow (PostgreSQL raises an error on underflow);
//   - else the value cast to double precision.
//
// With every bound 0 or of magnitude in [2^-400, 2^400], a clamped value's
// square lies in {0} ∪ [2^-800, 2^800] and a sum of 2^63 of them is finite;
// the histogram's bin arithmetic is shown safe in histogram. The three
// dialects compute the same float64 arithmetic.
//
// The shapes, for filter F (the Filter conditions and the Boolean predicate
// joined by AND; the predicate is rendered with every node in parentheses,
// its strings as bind arguments too):
//
//	Summary:   SELECT COUNT(*), COUNT(c), COUNT(readable c), COALESCE(SUM(clamp(c)), 0),
//	           COALESCE(SUM(clamp(c) * clamp(c)), 0) FROM t WHERE F   (the terms in order; one row;
//	           on MySQL the product within the clamp's branches, clampSquared)
//	Window:    SELECT clamp(c) FROM t WHERE F AND readable(c) ORDER BY t.c LIMIT n OFFSET r
//	           (when F has a condition on another column: ORDER BY 1, the clamped
//	           value, or on MySQL FROM t USE INDEX (), no index; with
//	           Fetch.OrderByValue always ORDER BY 1)
//	           (with GridUnit, the grid index of clamp(c) instead: render_grid.go)
//	Grouped window: SELECT v, COUNT(*) FROM (SELECT clamp(c) AS v FROM t WHERE F AND c IS NOT NULL) AS w
//	           GROUP BY v ORDER BY v     (the reader takes the ranks)
//	GridSums:  exact integer sums of grid indices (render_grid.go)
//	Histogram: SELECT CASE WHEN b > bins-1 THEN bins-1 ELSE b END, COUNT(*)
//	           FROM (SELECT FLOOR((clamp(c) - lo) * bins / (hi - lo)) AS b
//	                 FROM t WHERE F AND readable(c)) AS h GROUP BY 1
//	Profile:   SELECT clamp(c), COUNT(*), term1, term2 FROM t WHERE F GROUP BY 1   (profile.go; on MySQL
//	           with a condition on another column, FROM t USE INDEX FOR GROUP BY ())
//	Cells:     SELECT k0, k1, COUNT(*) FROM (SELECT key0 AS k0, key1 AS k1 FROM t WHERE F) AS c
//	           WHERE k0 IS NOT NULL AND k1 IS NOT NULL GROUP BY k0, k1   (render_cells.go)
//
// A column of Fetch.Booleans (a PostgreSQL boolean declared integer) is
// read, everywhere c stands above, as the number 1, 0 or NULL (column).
//
// With Fetch.Partitions (PostgreSQL), the aggregate shapes (Summary,
// Histogram, a grouped window, GridSums, Profile, Cells, Grouped, Keys)
// are computed per partition and combined (partitioned.go); the others
// read the table.
//
// The window sorts by the column itself, which an index can serve, unless
// the rows pass a condition on another column (then by the clamped value,
// position 1, or on MySQL by the column with no index: a scan and a sort
// beat fetching every row through the index to test the condition); over
// the readable values clamping is non-decreasing (SQLite orders integers and
// reals numerically, PostgreSQL orders NaN last, where clamp puts it), so
// the clamped values come out sorted too. That holds where the column is
// of a numeric type: PostgreSQL refuses a clamp of a text column whatever
// its rows (no operator compares text with a number), but MySQL and
// MariaDB read text as numbers in the clamp ('abc' as 0) while they sort
// it as text, so there the caller sets Fetch.OrderByValue for a column
// whose type it has not seen to be numeric (ColumnProbe). The histogram
// folds bin index bins (the value hi, or a value that rounding puts there)
// into the last bin. Errors are for malformed fetches (a bug in the caller),
// never for client input.
func Render(f Fetch, d Dialect) (query string, args []any, err error) {
	query, _, args, err = render(f, d, false)
	return query, args, err
}

// RenderVitess returns the SQL text of a fetch in the MySQL dialect for
// Vitess's vtgate. It differs from Render in two ways.
//
// No bind arguments: each string Render would bind is written in its
// place as a string literal (mysqlStringLiteral), and each rank as an
// integer, so the driver sends the text as a plain query and vtgate
// answers in the text protocol.
// With bind arguments go-sql-driver sends a server-side prepared
// statement, and vtgate's answer in the binary protocol is not what it
// says: over a grouped fetch whose COALESCE vtgate evaluates above its
// Aggregate it labels the 8-byte group key a 4-byte INT, so every later
// column is read from the wrong bytes (counts of c·2^32, sums from the
// low bits of the truth, or a failure that depends on them: an
// independent review). The literals are read by vtgate's own parser,
// which takes a backslash as an escape byte by byte whatever the
// connection's character set (no multibyte character can end in the
// escaping backslash) and honours no NO_BACKSLASH_ESCAPES; vtgate hands
// each to the shards as a bind variable of its own, as it does a bound
// string. MySQL and MariaDB themselves keep bind arguments (Render):
// their binary protocol describes what they send, and under a client
// character set such as GBK or SJIS, whose characters may end in the
// byte 0x5C, backslash escaping would not be safe there.
//
// Keys vtgate merges are short binary strings: vtgate computes a
// COUNT(DISTINCT) and the GROUP BY of KeyCounts itself, from each
// shard's rows grouped and sorted by the key, merging the sorted streams
// by its own comparison and counting (or adding) runs of equal keys.
// That is only right where the shards sort as vtgate compares, which
// text does not: MariaDB sorts 'a\t' before 'a' under
// utf8mb4_general_ci's PAD SPACE and vtgate after, and MariaDB sorts
// strings on their first max_sort_length bytes (1024 by default; vtgate
// cannot set it on MariaDB shards) while vtgate compares them whole. A
// collation class split by the merge was counted twice, so one added row
// changed COUNT(DISTINCT s) by 2 (an independent review), and a long
// partition selection key came back twice with its count split. So
// COUNT(DISTINCT c) counts distinctKey(c), and a text KeyCounts key is
// grouped by sortKeyHash first: 32-byte binary strings, which the
// shards sort and vtgate compares alike, byte for byte.
//
// logged is query with each rank written as ? instead of its number:
// the text to log, which the data does not shape, as Render's query.
func RenderVitess(f Fetch, d Dialect) (query, logged string, err error) {
	if d != MySQL {
		return "", "", fmt.Errorf("sqlrewrite: the Vitess rendering is for the MySQL dialect, not %s", d)
	}
	query, logged, _, err = render(f, d, true)
	return query, logged, err
}

// render is Render, or RenderVitess when vitess is set; logged is the
// text to log (bind), query itself unless vitess is set.
func render(f Fetch, d Dialect, vitess bool) (query, logged string, args []any, err error) {
	spec, ok := dialects[d]
	if !ok {
		return "", "", nil, fmt.Errorf("sqlrewrite: unknown dialect %d", int(d))
	}
	if len(f.Booleans) > 0 && d != PostgreSQL {
		return "", "", nil, errors.New("sqlrewrite: boolean columns are PostgreSQL's")
	}
	r := &renderer{spec: spec, dialect: d, booleans: f.Booleans, vitess: vitess}
	var set int
	for _, isSet := range []bool{len(f.Summary) > 0, f.Window != nil, f.Histogram != nil, f.Pairs != nil, f.Cells != nil, f.GridSums != nil, f.Grouped != nil, f.GroupedHist != nil, f.GroupedGrid != nil, f.Keys != nil, f.Profile != nil} {
		if isSet {
			set++
		}
	}
	if set != 1 {
		return "", "", nil, errors.New("sqlrewrite: a fetch needs exactly one of Summary, Window, Histogram, Pairs, GridSums, Cells, Grouped, GroupedHist, GroupedGrid, Keys and Profile")
	}
	if len(f.Partitions) > 0 {
		query, ok, err := r.partitioned(f)
		if err != nil {
			return "", "", nil, err
		}
		if ok {
			return r.bind(query)
		}
	}
	if r.narrows(f) {
		// A first rendering, whose text is dropped, names the columns the
		// statement around the derived table reads (source).
		probe := &renderer{spec: spec, dialect: d, reads: map[string]bool{}}
		if _, err := probe.shape(f); err != nil {
			return "", "", nil, err
		}
		r.narrow = probe.reads
	}
	if query, err = r.shape(f); err != nil {
		return "", "", nil, err
	}
	return r.bind(query)
}

// shape renders the query of the fetch's one shape, without binding its
// arguments.
func (r *renderer) shape(f Fetch) (query string, err error) {
	switch {
	case len(f.Summary) > 0:
		query, err = r.summary(f)
	case f.Window != nil:
		query, err = r.window(f)
	case f.Pairs != nil:
		query, err = r.pairs(f)
	case f.Cells != nil:
		query, err = r.cells(f)
	case f.GridSums != nil:
		query, err = r.gridSums(f)
	case f.Grouped != nil:
		query, err = r.grouped(f)
	case f.GroupedHist != nil:
		query, err = r.groupedHistogram(f)
	case f.GroupedGrid != nil:
		query, err = r.groupedGridSums(f)
	case f.Keys != nil:
		query, err = r.keyCounts(f)
	case f.Profile != nil:
		query, err = r.profile(f)
	default:
		query, err = r.histogram(f)
	}
	return query, err
}

// renderer accumulates the bind arguments of one fetch.
type renderer struct {
	spec    dialectSpec
	dialect Dialect
	// args are the bind arguments in the order arg took them, which need
	// not be their order in the text (bind).
	args []any
	// booleans are the fetch's Booleans (column).
	booleans []string
	// vitess renders for vtgate (RenderVitess): bind writes each
	// argument as a literal in the text, and the keys vtgate merges are
	// short binary strings.
	vitess bool
	// reads, when not nil, collects the names of the columns the
	// statement around a fetch's derived table reads (column and ident,
	// outside inDerived): the first rendering of a fetch whose derived
	// table is narrowed (narrows, render). narrow, when not nil, are those
	// names, and the derived table selects only them (source).
	reads, narrow map[string]bool
	// inDerived is set while the renderer writes the derived table's own
	// select list and conditions (inside).
	inDerived bool
}

// column renders the backend column name as the value the fetch's
// comparisons, clamps, sums, keys and bins read: the quoted column, or
// for one of Fetch.Booleans (a PostgreSQL boolean declared integer) its
// number,
//
//	CASE WHEN c THEN 1 WHEN NOT c THEN 0 END
//
// 1 for true, 0 for false and NULL for NULL, an integer, as MySQL reads
// its BOOLEAN (TINYINT(1)). Every place that reads a column's value
// renders it here; the column is named bare only where it is no value
// read as a number: a window's ORDER BY (ranked: false sorts before true
// as 0 before 1), a unit's person and row order, and date and timestamp
// columns (wallClock). The CASE, unlike CAST(c AS INTEGER), takes only a
// boolean: were the column altered to another type since its type was
// read (backend.Backend.SetBooleans), PostgreSQL refuses the fetch
// whatever its rows (CASE/WHEN needs a boolean), where the cast of a
// BIGINT or NUMERIC would fail only on the rows beyond INTEGER's range.
func (r *renderer) column(name string) (string, error) {
	col, err := r.ident(name)
	if err != nil || !slices.Contains(r.booleans, name) {
		return col, err
	}
	return "CASE WHEN " + col + " THEN 1 WHEN NOT " + col + " THEN 0 END", nil
}

// ident renders a column of the fetch's table (or a derived column) by its
// quoted name, and notes that the fetch reads it (reads).
func (r *renderer) ident(name string) (string, error) {
	if r.reads != nil && !r.inDerived {
		r.reads[name] = true
	}
	return r.spec.ident(name)
}

// inside renders part of the derived table's own SELECT (source): the
// columns it reads are not read by the statement around it.
func (r *renderer) inside(render func() (string, error)) (string, error) {
	was := r.inDerived
	r.inDerived = true
	defer func() { r.inDerived = was }()
	return render()
}

// argMark delimits the mark arg writes where a placeholder goes: NUL, which
// no identifier holds (dialectSpec.ident refuses it) and no literal the
// renderer writes holds (strings are bind arguments).
const argMark = "\x00"

// arg adds a bind argument and returns a mark (its index between two
// argMarks) that bind replaces by a placeholder. The text of a fetch may
// therefore be assembled in any order, and a fragment holding marks used
// more than once: which argument each placeholder binds is decided by
// where its mark ends up in the text, not by when arg was called.
func (r *renderer) arg(v any) string {
	r.args = append(r.args, v)
	return argMark + strconv.Itoa(len(r.args)-1) + argMark
}

// rankBound is a bound of the ranks a window keeps (its LIMIT or OFFSET)
// among a renderer's arguments (rank).
type rankBound int64

// rank adds a rank bound as a bind argument, bound as an int64: the exact
// count places it, so it must not be in the text (Render). On Vitess,
// which takes no bind arguments, bind writes it in the query as an
// integer literal, and in the text to log as ?.
func (r *renderer) rank(v int64) string {
	return r.arg(rankBound(v))
}

// bind replaces the marks of arg in query by the dialect's placeholders
// and returns the text with the arguments in the order the dialect binds
// them: with ? (MySQL, SQLite) one argument per mark in textual order, a
// mark that occurs twice binding its argument twice; with $n (PostgreSQL)
// the arguments numbered by their first occurrence, a repeated mark
// repeating its number. An argument whose mark is not in the text, or a
// malformed mark, is an error (a bug in the renderer).
//
// For Vitess (RenderVitess) there are no arguments: each is written in
// the query as a literal (vitessLiteral), and logged is the query with
// each rank bound written as ?. Otherwise logged is the query.
func (r *renderer) bind(query string) (text, logged string, args []any, err error) {
	parts := strings.Split(query, argMark)
	if len(parts)%2 == 0 {
		return "", "", nil, errors.New("sqlrewrite: unpaired bind argument mark")
	}
	var b, l strings.Builder
	b.Grow(len(query))
	// The position in args of each argument's last placement; 0 until it
	// is placed.
	placed := make([]int, len(r.args))
	for i, p := range parts {
		if i%2 == 0 {
			b.WriteString(p)
			if r.vitess {
				l.WriteString(p)
			}
			continue
		}
		k, err := strconv.Atoi(p)
		if err != nil || k < 0 || k >= len(r.args) || strconv.Itoa(k) != p {
			return "", "", nil, fmt.Errorf("sqlrewrite: bad bind argument mark %q", p)
		}
		v := r.args[k]
		if r.vitess {
			lit, err := vitessLiteral(v)
			if err != nil {
				return "", "", nil, err
			}
			b.WriteString(lit)
			if _, isRank := v.(rankBound); isRank {
				lit = "?"
			}
			l.WriteString(lit)
			placed[k] = 1
			continue
		}
		if rb, isRank := v.(rankBound); isRank {
			v = int64(rb)
		}
		if placed[k] == 0 || !r.spec.numbered {
			args = append(args, v)
			placed[k] = len(args)
		}
		b.WriteString(r.spec.placeholder(placed[k]))
	}
	for k, n := range placed {
		if n == 0 {
			return "", "", nil, fmt.Errorf("sqlrewrite: bind argument %d is not in the text", k)
		}
	}
	if !r.vitess {
		return b.String(), b.String(), args, nil
	}
	return b.String(), l.String(), nil, nil
}

// vitessLiteral writes an argument in the text for Vitess: a rank bound
// as an integer, a string as mysqlStringLiteral writes it.
func vitessLiteral(v any) (string, error) {
	if rb, isRank := v.(rankBound); isRank {
		return strconv.FormatInt(int64(rb), 10), nil
	}
	return mysqlStringLiteral(v)
}

func (r *renderer) summary(f Fetch) (string, error) {
	terms := make([]string, len(f.Summary))
	for i, t := range f.Summary {
		if t.Kind == GridIndexSum {
			return "", errors.New("sqlrewrite: only a profile carries a grid index sum")
		}
		var err error
		if terms[i], err = r.term(t); err != nil {
			return "", err
		}
	}
	from, err := r.from(f, "")
	if err != nil {
		return "", err
	}
	return "SELECT " + strings.Join(terms, ", ") + from, nil
}

// term renders one summary aggregate.
func (r *renderer) term(t SummaryTerm) (string, error) {
	if t.Kind == CountAll {
		return "COUNT(*)", nil
	}
	col, err := r.column(t.Column)
	if err != nil {
		return "", err
	}
	if t.Kind == CountNonNull || t.Kind == CountDistinctValues {
		col = r.valueOrNull(col, t.Type)
	}
	switch t.Kind {
	case CountNonNull:
		return "COUNT(" + col + ")", nil
	case CountNumbers:
		if r.spec.typed {
			return "COUNT(" + col + ")", nil
		}
		return "COUNT(CASE WHEN " + r.readable(col) + " THEN 1 END)", nil
	case CountDistinctValues:
		if r.vitess {
			return "COUNT(DISTINCT " + distinctKey(col) + ")", nil
		}
		return "COUNT(DISTINCT " + col + ")", nil
	case ClampedSum:
		v, err := r.clamp(col, t.Lower, t.Upper)
		if err != nil {
			return "", err
		}
		return "COALESCE(SUM(" + v + "), 0)", nil
	case ClampedSumSquares:
		v, err := r.clampSquared(col, t.Lower, t.Upper)
		if err != nil {
			return "", err
		}
		return "COALESCE(SUM(" + v + "), 0)", nil
	}
	return "", fmt.Errorf("sqlrewrite: unknown summary term kind %d", int(t.Kind))
}

func (r *renderer) window(f Fetch) (string, error) {
	w := f.Window
	if w.Offset < 0 || w.Limit < 1 {
		return "", fmt.Errorf("sqlrewrite: window needs offset ≥ 0 and limit ≥ 1, got %d and %d", w.Offset, w.Limit)
	}
	col, err := r.column(w.Column)
	if err != nil {
		return "", err
	}
	var v string
	if w.GridUnit != 0 {
		v, err = r.gridIndex(col, w.Lower, w.Upper, w.GridUnit)
	} else {
		v, err = r.clamp(col, w.Lower, w.Upper)
	}
	if err != nil {
		return "", err
	}
	from, err := r.from(f, r.readable(col))
	if err != nil {
		return "", err
	}
	if w.Grouped {
		return "SELECT v, COUNT(*) FROM (SELECT " + v + " AS v" + from + ") AS w GROUP BY v" + groupedWindowOrder, nil
	}
	from, ranks, err := r.ranked(f, w.Column, from, w.Offset, w.Limit)
	if err != nil {
		return "", err
	}
	return "SELECT " + v + from + ranks, nil
}

// ranked returns the FROM of a query over the rows of f (from, rendered)
// and the ORDER BY, LIMIT and OFFSET that keep the values of column
// ranked offset to offset+limit−1 in ascending order, limit and offset
// bound as arguments (rank).
func (r *renderer) ranked(f Fetch, column, from string, offset, limit int64) (string, string, error) {
	// Qualified, so that it names the table's column: PostgreSQL would take
	// a bare name for the output column that the clamp's CASE … ELSE col
	// is named after, and sort by the clamped expression, which no index
	// serves. The column itself, not its value (column): a PostgreSQL
	// boolean sorts false before true, as its values 0 and 1.
	table, err := r.qualifier(f)
	if err != nil {
		return "", "", err
	}
	col, err := r.ident(column)
	if err != nil {
		return "", "", err
	}
	order := table + "." + col
	switch {
	case f.OrderByValue:
		// The value (position 1), the order the mechanism reads, whatever
		// the column's type.
		order = "1"
	case filtersOther(f, column):
		// The rows pass a condition on another column: read through an
		// index on this one, every row up to the offset is fetched to test
		// it, where a scan and a sort are faster (10^6 rows, half selected:
		// PostgreSQL 2.1 s through the index, 0.9 s sorting the clamped
		// values, the same order; MariaDB 6-8 s through the index, 14 s
		// sorting any expression, 2.3-3.3 s scanning without an index and
		// sorting the column).
		if r.spec.name == "mysql" {
			from = strings.Replace(from, " FROM "+table, " FROM "+table+" USE INDEX ()", 1)
		} else {
			order = "1"
		}
	}
	return from, " ORDER BY " + order + " LIMIT " + r.rank(limit) + " OFFSET " + r.rank(offset), nil
}

// ColumnProbe renders a query that reads no row and whose one result
// column is column of table, in dialect d: the driver reports that
// column's backend type (sql.ColumnType.DatabaseTypeName), and the query,
// run in a transaction, holds the table's metadata lock (MySQL, MariaDB)
// or its ACCESS SHARE lock (PostgreSQL) to the transaction's end, so that
// the type stays the one the transaction's fetches read.
func ColumnProbe(table, column string, d Dialect) (string, error) {
	spec, ok := dialects[d]
	if !ok {
		return "", fmt.Errorf("sqlrewrite: unknown dialect %d", int(d))
	}
	t, err := spec.table(table)
	if err != nil {
		return "", err
	}
	c, err := spec.ident(column)
	if err != nil {
		return "", err
	}
	return "SELECT " + t + "." + c + " FROM " + t + " LIMIT 0", nil
}

// filtersOther reports whether the fetch's rows pass a condition on a
// column other than column (a filter condition or a Boolean predicate on a
// row-level table).
func filtersOther(f Fetch, column string) bool {
	if f.Unit != nil {
		return false
	}
	for _, c := range f.Filter {
		if c.Column != column {
			return true
		}
	}
	return f.Boolean != nil
}

// groupedWindowOrder ends a grouped window's query.
const groupedWindowOrder = " ORDER BY v"

// pairs renders SELECT clamp(y), clamp(x) over the rows where both are set.
func (r *renderer) pairs(f Fetch) (string, error) {
	p := f.Pairs
	y, err := r.column(p.Y)
	if err != nil {
		return "", err
	}
	x, err := r.column(p.X)
	if err != nil {
		return "", err
	}
	cy, err := r.clamp(y, p.YLower, p.YUpper)
	if err != nil {
		return "", err
	}
	cx, err := r.clamp(x, p.XLower, p.XUpper)
	if err != nil {
		return "", err
	}
	from, err := r.from(f, r.readable(y))
	if err != nil {
		return "", err
	}
	return "SELECT " + cy + ", " + cx + from + " AND " + r.readable(x), nil
}

func (r *renderer) histogram(f Fetch) (string, error) {
	h := f.Histogram
	col, err := r.column(h.Column)
	if err != nil {
		return "", err
	}
	bin, err := r.bin(col, h)
	if err != nil {
		return "", err
	}
	from, err := r.from(f, r.readable(col))
	if err != nil {
		return "", err
	}
	last := strconv.Itoa(h.Bins - 1)
	if h.Top {
		// The value Upper and those clamped to it take the cell Bins,
		// tested on the clamped value itself: the bin's arithmetic may
		// round Upper down into the last bin.
		v, err := r.clamp(col, h.Lower, h.Upper)
		if err != nil {
			return "", err
		}
		return "SELECT CASE WHEN t = 1 THEN " + strconv.Itoa(h.Bins) + " WHEN b > " + last + " THEN " + last + " ELSE b END, COUNT(*) FROM (SELECT " +
			bin + " AS b, CASE WHEN " + v + " >= " + realLiteral(h.Upper) + " THEN 1 ELSE 0 END AS t" + from + ") AS h GROUP BY 1", nil
	}
	return "SELECT CASE WHEN b > " + last + " THEN " + last + " ELSE b END, COUNT(*) FROM (SELECT " +
		bin + " AS b" + from + ") AS h GROUP BY 1", nil
}

// bin renders the histogram's bin of the quoted column, before the fold of
// bin Bins into the last: CAST(FLOOR((clamp(c) - lo) * bins / width) AS
// integer), NULL for an unreadable value.
func (r *renderer) bin(col string, h *Histogram) (string, error) {
	width := h.Upper - h.Lower
	if h.Bins < 1 || !(width > 0) || math.IsInf(width, 0) || width*float64(h.Bins) > maxMagnitude {
		return "", fmt.Errorf("sqlrewrite: histogram needs bins ≥ 1 and finite lower < upper, got %d bins over [%g, %g]", h.Bins, h.Lower, h.Upper)
	}
	v, err := r.clamp(col, h.Lower, h.Upper)
	if err != nil {
		return "", err
	}
	// No step can overflow or underflow: d = clamp(c) - lo lies in
	// {0} ∪ [2^-453, width] (both terms are 0 or of magnitude ≥ 2^-400, so a
	// nonzero difference is at least an ulp of 2^-400); d * bins is at most
	// width·bins ≤ 2^421; and a nonzero (d·bins)/width is at least
	// 2^-453 / 2^401, far above the smallest normal 2^-1022.
	//
	// width is computed here, in float64: a literal (hi - lo) would be
	// exact decimal arithmetic in PostgreSQL and MySQL.
	return fmt.Sprintf("CAST(FLOOR((%s - %s) * %d / %s) AS %s)", v, realLiteral(h.Lower), h.Bins, realLiteral(width), r.spec.integer), nil
}

// maxMagnitude is the largest magnitude of a bound, and of a histogram's
// width times its bins, that render accepts: with catalog's limits (2^400
// per bound, 2^20 bins) the largest is 2^421.
const maxMagnitude = 0x1p430

// clamp renders the quoted column read as a double in [lo, hi] by the rule
// of Render's doc comment. On SQLite and PostgreSQL:
//
//	CASE [WHEN NOT readable(c) THEN NULL] WHEN c < lo THEN lo WHEN c > hi THEN hi
//	     [WHEN c >= 1 OR c <= -1 THEN CAST(c AS double) WHEN c > -m AND c < m THEN 0.0]
//	     ELSE CAST(c AS double) END
//
// with m = catalog.MinBoundMagnitude; the flush is left out when [lo, hi]
// holds no nonzero value of magnitude below m (and its guard, which only
// spares values of magnitude at least 1 > m the test, with it). The bounds
// are compared as compareLiteral writes them. On MySQL, mysqlClamp. The
// bounds must be 0 or of magnitude in [m, maxMagnitude].
func (r *renderer) clamp(col string, lo, hi float64) (string, error) {
	if math.IsNaN(lo) || math.IsNaN(hi) || lo > hi || !usable(lo) || !usable(hi) {
		return "", fmt.Errorf("sqlrewrite: clamp bounds must be 0 or of magnitude in [2^-400, 2^430] with lower ≤ upper, got [%g, %g]", lo, hi)
	}
	if r.spec.name == "mysql" {
		return mysqlClamp(col, lo, hi, false), nil
	}
	l, h := realLiteral(lo), realLiteral(hi)
	var sb strings.Builder
	sb.WriteString("CASE")
	if !r.spec.typed {
		sb.WriteString(" WHEN NOT (" + r.readable(col) + ") THEN NULL")
	}
	sb.WriteString(" WHEN " + col + " < " + compareLiteral(lo) + " THEN " + l + " WHEN " + col + " > " + compareLiteral(hi) + " THEN " + h)
	if flushes(lo, hi) {
		m := catalog.MinBoundMagnitude
		// Every value of magnitude at least 1 skips the flush test, whose
		// tiny literal is a NUMERIC in PostgreSQL: an integer column would
		// be converted to it on every row.
		ml := realLiteral(m)
		sb.WriteString(" WHEN " + col + " >= 1 OR " + col + " <= -1 THEN CAST(" + col + " AS " + r.spec.double + ")")
		sb.WriteString(" WHEN " + col + " > -" + ml + " AND " + col + " < " + ml + " THEN 0.0")
	}
	sb.WriteString(" ELSE CAST(" + col + " AS " + r.spec.double + ") END")
	return sb.String(), nil
}

// clampSquared renders clamp(c) * clamp(c), on MySQL with the product in
// each branch of the clamp (mysqlClamp), which evaluates the clamp's tests
// once per row rather than twice: the same products of the same values.
func (r *renderer) clampSquared(col string, lo, hi float64) (string, error) {
	v, err := r.clamp(col, lo, hi)
	if err != nil || r.spec.name != "mysql" {
		return v + " * " + v, err
	}
	return mysqlClamp(col, lo, hi, true), nil
}

// mysqlClamp is clamp on MySQL and MariaDB, with LEAST and GREATEST, which
// there return NULL when an argument is NULL (PostgreSQL's skip NULLs) and,
// given a DOUBLE argument, compare as doubles and return a DOUBLE; the
// literals are doubles (doubleLiteral: 0.0 would be a DECIMAL):
//
//	LEAST(GREATEST(c, lo), hi)
//
// or, when [lo, hi] holds nonzero values of magnitude below m (then
// lo ≤ 0 ≤ hi), with the flush:
//
//	CASE WHEN c >= m THEN LEAST(c, hi) WHEN c <= -m THEN GREATEST(c, lo) WHEN c IS NOT NULL THEN 0e0 END
//
// This is the rule of Render's doc comment: NULL gives NULL; a value is
// converted to the nearest double (an integer or a DECIMAL beyond 2^53
// rounded; the conversion is non-decreasing and never fails) and then
// compared with the bounds, which are doubles, so a value below lo, whose
// double is at most lo, gives lo, one above hi gives hi, and one between
// gives its double, as comparing first in the column's type and then
// converting does. Neither dialect stores NaN or ±Inf in a DOUBLE column
// (±Inf would be clamped to a bound too). The value -0 gives 0 in the
// flush, as in the CASE. A sum of it costs 1.12× the plain SUM of the
// column, where the CASE cost 1.36× (MariaDB 10.11, 10^6 rows,
// bench/RESULTS-latency.md). With squared, each branch's value is
// multiplied by itself (0e0 stays 0e0, the square of the flushed 0).
func mysqlClamp(col string, lo, hi float64, squared bool) string {
	sq := func(v string) string {
		if squared {
			return v + " * " + v
		}
		return v
	}
	l, h := doubleLiteral(lo), doubleLiteral(hi)
	if flushes(lo, hi) {
		ml := doubleLiteral(catalog.MinBoundMagnitude)
		return "CASE WHEN " + col + " >= " + ml + " THEN " + sq("LEAST("+col+", "+h+")") + " WHEN " + col + " <= -" + ml +
			" THEN " + sq("GREATEST("+col+", "+l+")") + " WHEN " + col + " IS NOT NULL THEN 0e0 END"
	}
	return sq("LEAST(GREATEST(" + col + ", " + l + "), " + h + ")")
}

// flushes reports whether clamping to [lo, hi] flushes the values of
// magnitude below m = catalog.MinBoundMagnitude to 0: where [lo, hi]
// holds nonzero values of magnitude below m (then lo ≤ 0 ≤ hi).
func flushes(lo, hi float64) bool {
	m := catalog.MinBoundMagnitude
	return lo < m && hi > -m
}

// compareLiteral writes a bound the column is compared with: an integer of
// magnitude at most 2^53 as an integer literal, which every dialect
// compares with an integer column as integers and with any other numeric
// column in that column's type (a decimal literal such as 100.0 is a
// NUMERIC in PostgreSQL and a DECIMAL in MySQL, to which an integer column
// is converted on every row: three times slower); any other bound as
// realLiteral. Both denote the bound's float64 exactly.
func compareLiteral(b float64) string {
	if b == math.Trunc(b) && math.Abs(b) <= 1<<53 {
		s := strconv.FormatFloat(b, 'f', -1, 64)
		if b < 0 || math.Signbit(b) {
			return "(" + s + ")"
		}
		return s
	}
	return realLiteral(b)
}

// usable reports whether b is 0 or of magnitude in [catalog.MinBoundMagnitude, maxMagnitude].
func usable(b float64) bool {
	a := math.Abs(b)
	return b == 0 || a >= catalog.MinBoundMagnitude && a <= maxMagnitude
}

// readable renders the condition that the quoted column holds a value clamp
// reads as a number: IS NOT NULL where the backend's column types are
// enforced, and on SQLite, where any column can hold any storage class, a
// storage class of INTEGER or REAL (text and blobs are unreadable, as NULL).
func (r *renderer) readable(col string) string {
	if r.spec.typed {
		return col + " IS NOT NULL"
	}
	return "typeof(" + col + ") IN ('integer', 'real')"
}

// valueOrNull renders the quoted column's value where the reading rule of
// its declared type typ reads a value, NULL elsewhere: what COUNT(col) and
// COUNT(DISTINCT col) count (SummaryTerm.Type). A number is what readable
// accepts, so on SQLite text and blobs in a numeric column are NULL to
// them as they are to col IS NULL (nullCondition) and to every clamp; the
// column itself where the backend's types vouch for it, or for text.
func (r *renderer) valueOrNull(col string, typ catalog.ColumnType) string {
	switch typ {
	case catalog.Date, catalog.Timestamp:
		return r.dateOrNull(col, typ)
	case catalog.Integer, catalog.Real:
		if !r.spec.typed {
			return "CASE WHEN " + r.readable(col) + " THEN " + col + " END"
		}
	}
	return col
}

// from renders " FROM t" and the WHERE clause: the filter, the Boolean
// predicate, then the condition extra if it is not empty. With a unit
// bound, t is the bounded subquery of unitFrom and extra applies to the
// rows it keeps. Where the table's derived columns are fenced or narrowed
// (source), the filter's and predicate's conditions that read no derived
// column are applied inside the derived table, where the backend can use
// an index on them, the others outside.
func (r *renderer) from(f Fetch, extra string) (string, error) {
	derived := map[string]bool{}
	if r.derivedTable(f) && (r.derivedFence(f) != "" || r.narrows(f)) {
		for _, d := range f.Derived {
			derived[d.Name] = true
		}
	}
	readsDerived := func(cs ...Condition) bool {
		return slices.ContainsFunc(cs, func(c Condition) bool { return derived[c.Column] })
	}
	var inner, conds []string
	place := func(in bool, render func() (string, error)) error {
		if !in {
			s, err := render()
			conds = append(conds, s)
			return err
		}
		s, err := r.inside(render)
		inner = append(inner, s)
		return err
	}
	for _, c := range f.Filter {
		if err := place(len(derived) > 0 && !readsDerived(c), func() (string, error) { return r.condition(c) }); err != nil {
			return "", err
		}
	}
	if f.Boolean != nil {
		in := len(derived) > 0 && !readsDerived(predicateLeaves(f.Boolean, nil)...)
		if err := place(in, func() (string, error) { return r.predicate(f.Boolean) }); err != nil {
			return "", err
		}
	}
	table, err := r.source(f, inner)
	if err != nil {
		return "", err
	}
	if f.Unit != nil {
		return r.unitFrom(f.Unit, table, conds, extra)
	}
	if extra != "" {
		conds = append(conds, extra)
	}
	if len(conds) == 0 {
		return " FROM " + table, nil
	}
	return " FROM " + table + " WHERE " + joinConditions(conds, " AND "), nil
}

// flatConditionsMax is the most terms joinConditions joins in one flat
// chain. SQLite refuses an expression more than 1000 deep, and a flat chain
// of n terms is n deep, so a statement with 2000 conditions failed in the
// backend (1105, and charged) where PostgreSQL and MariaDB answered it.
const flatConditionsMax = 64

// joinConditions joins terms with op ("a AND b AND c"), or, for more than
// flatConditionsMax terms, as a balanced tree of parenthesised halves,
// whose depth grows with the logarithm of the number of terms.
func joinConditions(terms []string, op string) string {
	if len(terms) <= flatConditionsMax {
		return strings.Join(terms, op)
	}
	half := len(terms) / 2
	return "(" + joinConditions(terms[:half], op) + ")" + op + "(" + joinConditions(terms[half:], op) + ")"
}

// exactText renders a text column so that it compares, groups and sorts
// character for character, whatever the column's collation (a column may
// be case-insensitive: SQLite's COLLATE NOCASE, PostgreSQL's citext or a
// nondeterministic ICU collation, and MySQL's defaults): on MySQL its
// characters as utf8mb4 bytes (a binary string: no collation, no
// padding), on PostgreSQL its text in the "C" collation, on SQLite the
// column in the BINARY collation. Each row then has one key, a function of
// its own value: partition selection counts, matches and bounds its keys
// so (Condition.Exact, CellDim.Exact, KeyCounts, UnitBound.Key), where in
// the column's collation the database would name a class of equal values
// by the spelling its scan met first.
func (r *renderer) exactText(col string) string {
	switch r.dialect {
	case MySQL:
		return "CAST(CONVERT(" + col + " USING utf8mb4) AS BINARY)"
	case PostgreSQL:
		return "(CAST(" + col + ` AS TEXT) COLLATE "C")`
	}
	return "(" + col + " COLLATE BINARY)"
}

// distinctKey renders, for Vitess (RenderVitess), the key whose distinct
// values COUNT(DISTINCT col) counts there: sortKeyHash of a binary string
// that stands for col's class of equal values,
//
//   - for a value whose collation is binary (a binary string, a number, a
//     date or timestamp): its bytes, the text MariaDB prints for it (the
//     shortest round-trip decimal of a DOUBLE, a DECIMAL at its scale, a
//     date as YYYY-MM-DD, a TIMESTAMP in the session's time zone);
//   - for a string under a PAD SPACE collation (one where the empty
//     string equals ' ', as LEFT(col, 0) = CONCAT(LEFT(col, 0), ' ')
//     tests in col's own collation): WEIGHT_STRING of the string without
//     its trailing spaces, which is what that collation compares ('a'
//     and 'a ' one class; WEIGHT_STRING alone keeps the spaces' weights);
//   - under a NO PAD collation: WEIGHT_STRING of the string.
//
// The key is a function of the row's own value, so adding or removing a
// row adds or removes at most one distinct key whatever the key equates:
// the count keeps sensitivity 1 (hash collisions of SHA-256 could only
// merge classes, and are not found). On MariaDB 10.11 it equates exactly
// the strings the column's collation equates under the general, binary,
// NO PAD, multi-level UCA, latin1 and utf8mb3 collations (checked over
// every BMP character alone and with trailing spaces and tabs); under a
// single-level UCA collation with PAD SPACE (utf8mb4_unicode_ci,
// uca1400_ai_ci) a string ending in another character that weighs as a
// space (U+00A0, U+2000) is a class of its own, so there the count can
// exceed MariaDB's own COUNT(DISTINCT), never fall short of it. Distinct
// TIMESTAMP values that print alike (the repeated hour when clocks go
// back) are one class.
func distinctKey(col string) string {
	weighed := "IF(LEFT(" + col + ", 0) = CONCAT(LEFT(" + col + ", 0), ' '), WEIGHT_STRING(TRIM(TRAILING ' ' FROM " + col + ")), WEIGHT_STRING(" + col + "))"
	return sortKeyHash("IF(COLLATION(" + col + ") = 'binary', CAST(" + col + " AS BINARY), " + weighed + ")")
}

// sortKeyHash renders the SHA-256 of a binary string as 32 bytes (a
// VARBINARY): a key that MariaDB's sorts compare whole (they compare the
// first max_sort_length bytes of a key, at least 64 on MariaDB) and in
// the byte order vtgate compares a binary value in (RenderVitess).
func sortKeyHash(binary string) string {
	return "UNHEX(SHA2(" + binary + ", 256))"
}

// exactNumber renders a numeric key column (an integer-declared column
// grouped by its values: KeyCounts, CellDim.ByValue) as a value the
// drivers read exactly: on PostgreSQL and MySQL the column plus the
// integer 0. That is the value itself, in the column's type for integers
// (BIGINT UNSIGNED too) and decimals, and for a single-precision float
// (MySQL's FLOAT, PostgreSQL's real) its exact widening to a double, which
// both backends print to 17 significant digits at most, round-trip exact.
// The column itself is read inexactly there: MariaDB prints a FLOAT to 6
// significant digits in the text protocol (1234567 and 1234568 both read
// as 1234570) and lib/pq parses a real's shortest float4 text as a
// float64 (123456792 reads as 123456790), so a key read from it was no
// value column = key selects (Condition.Exact), and its counts were of
// rows its filtered fetches never read. SQLite stores integers and
// doubles, which its driver reads exactly: the column as it is.
func (r *renderer) exactNumber(col string) string {
	if r.dialect == SQLite {
		return col
	}
	return "(" + col + " + 0)"
}

// maxSQLiteTextLength is SQLite's largest string, in bytes
// (SQLITE_MAX_LENGTH, 10^9 unless compiled otherwise, as modernc.org/sqlite
// is not), so no value has more characters; it is also the largest n for
// which substr reads right: it takes its arguments as 32-bit integers
// (substr('abc', 1, 2147483648) is empty), and substr(x, -n) without a
// length is empty once n exceeds the limit by x's length.
const maxSQLiteTextLength = 1_000_000_000

// textFunction renders a TextFunction of col as MySQL/MariaDB, or SQLite
// with its own functions, computes it: LOWER(col) = ?, LEFT(col, n) = ?
// (SQLite substr(col, 1, n)), RIGHT(col, n) = ? (substr(col, -n), the last
// n characters or the whole value), LOCATE(?, col) > 0 (instr(col, ?)).
func (r *renderer) textFunction(col string, f *TextFunction) (string, error) {
	if f.Length < 0 || f.Length > MaxTextFunctionLength {
		return "", fmt.Errorf("sqlrewrite: %s of %s with length %d", f.Func, col, f.Length)
	}
	sqlite := r.dialect == SQLite
	n := strconv.FormatInt(f.Length, 10)
	if sqlite {
		n = strconv.FormatInt(min(f.Length, maxSQLiteTextLength), 10)
	}
	switch {
	case f.Func == "lower", f.Func == "upper":
		return strings.ToUpper(f.Func) + "(" + col + ") = " + r.arg(f.Value), nil
	case f.Func == "left" && sqlite:
		return "substr(" + col + ", 1, " + n + ") = " + r.arg(f.Value), nil
	case f.Func == "left":
		return "LEFT(" + col + ", " + n + ") = " + r.arg(f.Value), nil
	case f.Func == "right" && sqlite:
		return "substr(" + col + ", -" + n + ") = " + r.arg(f.Value), nil
	case f.Func == "right":
		return "RIGHT(" + col + ", " + n + ") = " + r.arg(f.Value), nil
	case f.Func == "locate" && sqlite:
		return "instr(" + col + ", " + r.arg(f.Value) + ") > 0", nil
	case f.Func == "locate":
		return "LOCATE(" + r.arg(f.Value) + ", " + col + ") > 0", nil
	}
	return "", fmt.Errorf("sqlrewrite: unknown text function %q on %s", f.Func, col)
}

// condition renders one filter condition.
func (r *renderer) condition(c Condition) (string, error) {
	col, err := r.column(c.Column)
	if err != nil {
		return "", err
	}
	if c.Scalar != nil {
		return "", fmt.Errorf("sqlrewrite: the comparison of %s with a subquery is not resolved with its released value (ResolveScalars)", c.Column)
	}
	if c.Cell != nil {
		idx, err := r.dateIndex(col, c.Cell.Axis)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("(%s) = %d", idx, c.Cell.Index), nil
	}
	if c.IsNull || c.Complement {
		return r.nullCondition(col, c)
	}
	if c.Function != nil && r.dialect != PostgreSQL {
		return r.textFunction(col, c.Function)
	}
	if c.Like != nil {
		if c.Range != nil || len(c.In) > 0 || !c.Text {
			return "", fmt.Errorf("sqlrewrite: LIKE on %s takes a text column and no Range or In", c.Column)
		}
		operand := col
		switch c.LikeCase {
		case "lower":
			operand = "LOWER(" + col + ")"
		case "upper":
			operand = "UPPER(" + col + ")"
		case "":
		default:
			return "", fmt.Errorf("sqlrewrite: LIKE on %s: unknown case %q", c.Column, c.LikeCase)
		}
		if len(*c.Like) > MaxLikePattern {
			return "", fmt.Errorf("sqlrewrite: LIKE pattern of %d bytes on %s, above %d", len(*c.Like), c.Column, MaxLikePattern)
		}
		if r.dialect == PostgreSQL {
			// PostgreSQL refuses LIKE under a nondeterministic collation
			// (ICU's case- or accent-insensitive ones), but only when a row
			// reaches it, an error that would depend on the data: the
			// operand is compared as text in the "C" collation, code point
			// by code point, as LIKE compares under every deterministic
			// collation (on citext too, whose own LIKE ignores case).
			operand = "CAST(" + operand + " AS TEXT) COLLATE \"C\""
		}
		return operand + " LIKE " + r.arg(*c.Like) + " ESCAPE '" + string(LikeEscape) + "'", nil
	}
	if (c.Range == nil) == (len(c.In) == 0) {
		return "", fmt.Errorf("sqlrewrite: condition on %s needs exactly one of Range and In", c.Column)
	}
	if c.Range != nil && c.Temporal != "" {
		return r.dateRange(col, c.Temporal, c.Range)
	}
	if c.Range != nil {
		s, err := r.rangeCondition(col, c.Range)
		return r.readableNumber(col, c, s), err
	}
	vals := make([]string, 0, len(c.In))
	for _, v := range c.In {
		if v.Null || v.IsText != c.In[0].IsText {
			return "", fmt.Errorf("sqlrewrite: IN on %s needs non-NULL values of one type", c.Column)
		}
		s, err := r.value(v)
		if err != nil {
			return "", err
		}
		if s != "" { // "": a constant no value equals (value)
			vals = append(vals, s)
		}
	}
	if len(vals) == 0 {
		// Every constant is one no value of the column equals (SQLite:
		// 2^53+0.5 is neither an integer nor a double): FALSE for a
		// number, NULL for NULL, as the comparison would be.
		return r.readableNumber(col, c, col+" <> "+col), nil
	}
	if c.Exact && c.In[0].IsText {
		col = r.exactText(col)
	}
	if c.Exact && !c.In[0].IsText {
		// Integers as integer literals, which every backend compares
		// exactly with integer and decimal columns (MySQL compares a
		// DECIMAL with a double literal such as 1e+06 as doubles).
		vals = vals[:0]
		for _, v := range c.In {
			if !ExactKey(v.Num) || !ExactValue(v) {
				return "", fmt.Errorf("sqlrewrite: exact key %g on %s is no integer below 2^53", v.Num, c.Column)
			}
			vals = append(vals, integerLiteral(v.Num))
		}
	}
	if r.dialect == MySQL && !c.In[0].IsText && !integerLiterals(vals) && (r.vitess || len(vals) > 1) {
		return r.readableNumber(col, c, pointRanges(col, vals)), nil
	}
	if len(vals) == 1 {
		return r.readableNumber(col, c, col+" = "+vals[0]), nil
	}
	return r.readableNumber(col, c, col+" IN ("+strings.Join(vals, ", ")+")"), nil
}

// integerLiterals reports whether every literal is an integer written
// as such (integerLiteral, exactLiteral of whole digits): 5, (-5).
func integerLiterals(vals []string) bool {
	for _, v := range vals {
		v = strings.TrimPrefix(strings.TrimSuffix(strings.TrimPrefix(v, "("), ")"), "-")
		if v == "" || strings.Trim(v, "0123456789") != "" {
			return false
		}
	}
	return true
}

// pointRanges renders, on MySQL and MariaDB, col = v or col IN (v, …)
// with a literal that is not an integer (a double such as
// 9.007199254740992e+15 or (-5.5), a decimal such as 5.5) as closed
// ranges, (col >= v AND col <= v) each, ORed, which select the rows col
// = v selects: the three comparisons read col and v alike (MariaDB
// converts a double that is a whole number to the BIGINT it compares
// with, so BIGINT 2^53+1 is not 2^53e0), whatever the plan.
//
// An IN list of them is not: MariaDB 10.11 compares a BIGINT with the
// list 5.5e0, 2^53e0 exactly when it reads an index on col and as
// doubles (2^53+1 equal to 2^53e0) when it scans the table, so the rows
// selected would depend on the plan, which the optimizer chooses from
// the table's statistics, that is from the data. Lists of integers
// compare as integers in both.
//
// Behind Vitess a single = is written so as well: vtgate routes = and
// IN on a table's sharding column to the shards its vindex maps the
// value to, and v0.24's hash and numeric vindexes read the literal's
// text as an integer: they fail on 9.007199254740992e+15 (2^53, a
// BIGINT's value) as on 5.5, and send the query to no shard (IN) or to
// one shard chosen at random (= under an aggregate; an independent
// review). A range is not routed: every shard is read. Integers keep =
// and IN, which vtgate routes by their value, reading only the shards
// that can hold it.
func pointRanges(col string, vals []string) string {
	points := make([]string, len(vals))
	for i, v := range vals {
		points[i] = col + " >= " + v + " AND " + col + " <= " + v
	}
	return "(" + strings.Join(points, " OR ") + ")"
}

// readableNumber renders, on SQLite, a comparison of a numeric column
// with numbers as CASE WHEN readable THEN comparison END: text or a blob
// in a column of TEXT, NUMERIC or no affinity compares with a number ('1'
// = 1 under TEXT affinity, 'abc' above every number), yet reads as no
// number (readable), like a NULL, in every grouped fetch and clamp; so,
// like a NULL, it satisfies neither the comparison nor its NOT, and a
// group's filter selects the rows its CASE does.
func (r *renderer) readableNumber(col string, c Condition, comparison string) string {
	if r.spec.typed || c.Text || c.Temporal != "" || len(c.In) > 0 && c.In[0].IsText {
		return comparison
	}
	return "(CASE WHEN " + r.readable(col) + " THEN " + comparison + " END)"
}

func (r *renderer) rangeCondition(col string, rg *Range) (string, error) {
	var parts []string
	if rg.HasLower {
		op := " >= "
		if rg.LowerOpen {
			op = " > "
		}
		v, err := r.rangeEnd(rg.Lower, rg.LowerExact, rg.LowerArg)
		if err != nil {
			return "", err
		}
		if rg.LowerArg == nil && rg.LowerExact != "" && r.dialect == SQLite {
			op, v = sqliteExactEnd(rg.LowerExact, true, op)
		}
		parts = append(parts, col+op+v)
	}
	if rg.HasUpper {
		op := " <= "
		if rg.UpperOpen {
			op = " < "
		}
		v, err := r.rangeEnd(rg.Upper, rg.UpperExact, rg.UpperArg)
		if err != nil {
			return "", err
		}
		if rg.UpperArg == nil && rg.UpperExact != "" && r.dialect == SQLite {
			op, v = sqliteExactEnd(rg.UpperExact, false, op)
		}
		parts = append(parts, col+op+v)
	}
	if len(parts) == 0 {
		return "", fmt.Errorf("sqlrewrite: range on %s has no bound", col)
	}
	return strings.Join(parts, " AND "), nil
}

// rangeEnd renders a range's end: its exact digits when it has them
// (Range.LowerExact), a typed bind argument for a released value
// (Range.LowerArg), else the number.
func (r *renderer) rangeEnd(num float64, exact string, arg *RangeArg) (string, error) {
	if arg != nil {
		return r.typedArg(arg)
	}
	if exact == "" {
		return r.value(Value{Num: num})
	}
	if !validExact(exact) {
		return "", fmt.Errorf("sqlrewrite: range end %q is no number", exact)
	}
	return edgeLiteral(Edge{Num: num, Exact: exact}), nil
}

// value renders a filter constant: a string as a bind argument, a number as
// a literal. Numbers are not bind arguments because PostgreSQL types an
// untyped parameter after the column, and then rejects 2.5 for an integer.
func (r *renderer) value(v Value) (string, error) {
	if v.IsText {
		return r.arg(v.Str), nil
	}
	if v.Decimal != "" {
		// A constant's exact digits (conditionDigits).
		if !validExact(v.Decimal) {
			return "", fmt.Errorf("sqlrewrite: filter constant %q is no number", v.Decimal)
		}
		if r.dialect == SQLite {
			x, _ := digitsRat(v.Decimal)
			if s, ok := sqliteEqual(x); ok {
				return s, nil
			}
			return "", nil // no integer or double equals it
		}
		return exactLiteral(v.Decimal), nil
	}
	if math.IsNaN(v.Num) || math.IsInf(v.Num, 0) {
		return "", fmt.Errorf("sqlrewrite: non-finite filter constant %g", v.Num)
	}
	return numberLiteral(v.Num), nil
}

// sqliteExactEnd renders, on SQLite, a range end that has exact digits
// (op " >= ", " > ", " <= " or " < "): the same comparison with an
// integer literal when they are an int64, or a real one when they are a
// double, which SQLite compares its integers and doubles with exactly;
// otherwise (a fraction, an integer beyond 64 bits, which no value
// equals) an inclusive comparison with the bound sqliteAbove or
// sqliteBelow, which its integers and doubles satisfy exactly when they
// are beyond the digits: col <= 2^53+1.5 is col <= 2^53+1.
func sqliteExactEnd(digits string, lower bool, op string) (string, string) {
	x, ok := digitsRat(digits)
	if !ok {
		return op, exactLiteral(digits) // rangeEnd refused it
	}
	if s, ok := sqliteEqual(x); ok {
		return op, s
	}
	if lower {
		return " >= ", sqliteAbove(x)
	}
	return " <= ", sqliteBelow(x)
}
