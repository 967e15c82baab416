package catalogdb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

// Column is a result column's MySQL definition.
type Column struct {
	Name string
	// Type is the MySQL column type code (MYSQL_TYPE_*); Flags the column flags.
	Type  byte
	Flags uint16
	// Charset is the collation id: binary (63) for numbers, times and bytes.
	Charset  uint16
	Length   uint32
	Decimals uint8
}

// Result is a statement's answer. Columns is nil for a statement without a
// result set (SET, USE). Every value is nil (NULL) or its MySQL text form.
// Warnings are the first of those the statement raised, in order (1365
// "Division by 0" for x / 0, x DIV 0, x % 0), at most the session's
// max_error_count (MaxErrorCount); Conditions counts them all.
type Result struct {
	Columns    []Column
	Rows       [][]any
	Warnings   []Warning
	Conditions Conditions
}

// Warning is a warning or note the engine raised, as SHOW WARNINGS lists it.
type Warning struct {
	Level   string
	Code    uint16
	Message string
}

// Error is an error the engine reported, with its MySQL code. Its message
// describes only the statement and the catalog, never data (there is none).
type Error struct {
	Code  uint16
	State string
	Msg   string
}

func (e *Error) Error() string { return e.Msg }

// MySQL column flags (include/mysql_com.h).
const (
	notNullFlag   = 1
	binaryFlag    = 128
	enumFlag      = 256
	setFlag       = 2048
	unsignedFlag  = 32
	binaryCharset = 63
	// utf8mb3GeneralCI is the collation of string system variables.
	utf8mb3GeneralCI = uint16(sql.Collation_utf8mb3_general_ci)
)

// ErrEngineFailed is the error of a statement go-mysql-server panicked
// on, a bug there: MySQL's 1105. Query wraps it with the panic's value,
// for the log (the engine holds no data, so the value quotes none).
var ErrEngineFailed = &Error{Code: 1105, State: "HY000", Msg: "the catalog engine failed on this statement"}

// Query evaluates one statement. The caller (package sqlrewrite's routing)
// guarantees it is one the catalog engine may answer.
func (s *Session) Query(ctx context.Context, query string) (*Result, error) {
	return s.QueryUpTo(ctx, query, math.MaxUint64)
}

// QueryUpTo is Query, except that it reads at most maxRows rows of the
// statement's answer and returns those: the session's sql_select_limit,
// which cuts a top-level SELECT without a LIMIT of its own, as a LIMIT
// would. Rows past maxRows are never read, so they count toward no bound:
// the statement fails for returning more than 100,000 rows only if
// maxRows is larger than that and the answer has more.
func (s *Session) QueryUpTo(ctx context.Context, query string, maxRows uint64) (res *Result, err error) {
	// A statement that fails assigns no user variable (user_vars.go). This
	// runs last, once a panic below has become err.
	s.sess.begin()
	defer func() { s.sess.end(err != nil) }()
	defer func() {
		// A bug in go-mysql-server must fail the statement, not the proxy.
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("%w: panic: %v", ErrEngineFailed, p)
		}
	}()
	query, release, err := s.admit(ctx, query)
	if err != nil {
		return nil, err
	}
	defer release()
	timed, cancel := context.WithTimeoutCause(ctx, s.e.timeout, errStatementTimeout)
	defer cancel()
	watched, stop := watchHeap(timed, heapBudget)
	defer stop()
	sctx := s.context(watched, query)
	// A sql_mode with ANSI_QUOTES would make "..." an identifier to the
	// engine and a string to the checks (TiDB's parser, in its default
	// mode): text a check read as a string could run as code (an
	// independent review). PIPES_AS_CONCAT, HIGH_NOT_PRECEDENCE,
	// NO_UNSIGNED_SUBTRACTION and a div_precision_increment other than 4
	// change what post-processing computes in MariaDB's defaults (|| as
	// OR, NOT's precedence, 0 - CAST(1 AS UNSIGNED) as 1690, 1/3 as
	// 0.3333). Such settings are taken out before the statement runs and
	// after it, whatever its outcome (a SET may fail after assigning them).
	before, _, err := s.keepReading(sctx, "")
	if err != nil {
		return nil, err
	}
	defer func() {
		if _, refused, kerr := s.keepReading(sctx, before); kerr != nil || refused != nil {
			res, err = nil, kerr
			if kerr == nil {
				err = refused
			}
		}
	}()
	// The session keeps the warnings of this statement only.
	s.sess.ClearWarnings()
	schema, iter, _, err := s.e.gms.Query(sctx, query)
	if err != nil {
		return nil, budgetError(watched, s.statementError(query, err))
	}
	rows, err := drain(sctx, iter, maxRows)
	if err != nil {
		return nil, budgetError(watched, err)
	}

	warnings, conditions := s.warnings()
	if isOK(schema) {
		return &Result{Warnings: warnings, Conditions: conditions}, nil
	}
	res = &Result{Columns: make([]Column, len(schema)), Rows: make([][]any, 0, len(rows)), Warnings: warnings, Conditions: conditions}
	for j, c := range schema {
		res.Columns[j] = column(sctx, c)
	}
	size := 0
	for _, row := range rows {
		out := make([]any, len(schema))
		for j, c := range schema {
			if j >= len(row) || row[j] == nil {
				continue
			}
			v, err := c.Type.SQL(sctx, nil, row[j])
			if err != nil {
				return nil, sqlError(err)
			}
			if !v.IsNull() {
				text := temporalText(c.Type, row[j], v.ToString())
				if size += len(text); size > maxResultBytes {
					return nil, &Error{Code: 1105, State: "HY000", Msg: "a statement over the catalog may return at most 64 MiB"}
				}
				out[j] = text
			}
		}
		res.Rows = append(res.Rows, out)
	}
	nullsAnnounced(res)
	return res, nil
}

// temporalText is text, the engine's text of the value v of type t, with
// as many digits of a second as t's precision when t is a DATETIME,
// TIMESTAMP or clock TIME (timeType): MariaDB writes NOW(6) with its
// trailing zeros (26 characters always), NOW(2) with 2 digits,
// CAST('2020-01-01 10:00:00.1' AS DATETIME(3)) as 10:00:00.100, where
// go-mysql-server drops trailing zeros (.1) and writes a TIME with 6.
// go-mysql-server types much of what has no known precision DATETIME(6)
// (NOW() + INTERVAL 1 DAY, CONVERT_TZ, GREATEST, CASE): a DATETIME(6)
// value of whole seconds keeps no fraction, as MariaDB writes those
// (whose precision is their arguments'), so a NOW(6) read at a whole
// second (one in a million) shows none either.
func temporalText(t sql.Type, v any, text string) string {
	fsp := -1
	switch tt := t.(type) {
	case timeType:
		fsp = tt.fsp
	case sql.DatetimeType:
		if types.IsDatetimeType(t) || types.IsTimestampType(t) {
			fsp = tt.Precision()
			if tv, ok := v.(time.Time); ok && fsp == maxPrecision && tv.Nanosecond()/1000 == 0 {
				fsp = -1
			}
		}
	}
	if fsp < 0 || (len(text) < len(time.TimeOnly)) {
		return text
	}
	whole, frac, _ := strings.Cut(text, ".")
	if fsp == 0 {
		return whole
	}
	return whole + "." + (frac + "000000")[:fsp]
}

// nullsAnnounced clears NOT_NULL_FLAG of each column of res that holds a
// NULL: go-mysql-server announces the columns of a LEFT JOIN's inner
// table as the table declares them, NOT NULL for most of
// information_schema's (as MariaDB declares them), though a row without a
// match holds NULL there.
func nullsAnnounced(res *Result) {
	for j := range res.Columns {
		if res.Columns[j].Flags&notNullFlag == 0 {
			continue
		}
		for _, row := range res.Rows {
			if row[j] == nil {
				res.Columns[j].Flags &^= notNullFlag
				break
			}
		}
	}
}

// warnings returns the first of the warnings the statement raised, in
// the order they were raised, at most the session's max_error_count, and
// the counts of all; the engine's session then forgets them, so that it
// holds none between statements (the caller keeps what SHOW WARNINGS
// lists).
func (s *Session) warnings() ([]Warning, Conditions) {
	held := s.sess.Warnings() // the most recent first
	s.sess.ClearWarnings()
	limit := s.MaxErrorCount()
	var out []Warning
	c := Conditions{All: uint64(len(held))}
	for i := len(held) - 1; i >= 0; i-- {
		if held[i].Level == "Error" {
			c.Errors++
		}
		if uint64(len(out)) < limit {
			out = append(out, Warning{Level: held[i].Level, Code: uint16(held[i].Code), Message: held[i].Message})
		}
	}
	return out, c
}

// maxResultRows, maxResultBytes and maxCachedRows bound the rows one
// statement may return (a constant value is one string in the engine, and
// a copy per row in the result) and hold in the engine's sorts, groupings
// and distinct sets. The catalog
// is small (hundreds of columns), but a cross join of it is not: three
// copies of information_schema.COLUMNS sorted grew the proxy by 3 GB in the
// 30 s the statement ran, and a few such statements at once would have
// killed it for every analyst.
const (
	maxResultRows  = 100_000
	maxResultBytes = catalog.MaxResultBytes
	maxCachedRows  = 200_000
)

// rowBudget is the engine's memory reporter for one statement: the engine
// asks it once before caching each row, and it counts those requests, so
// the statement fails (no memory available) past maxCachedRows rows
// instead of growing the process.
type rowBudget struct{ cached atomic.Uint64 }

func (r *rowBudget) MaxMemory() uint64  { return maxCachedRows }
func (r *rowBudget) UsedMemory() uint64 { return r.cached.Add(1) }

// drain reads every row, or the first maxRows, then closes the iterator;
// past maxResultRows rows (when maxRows is larger) it fails.
// go-mysql-server v0.20.0 panics closing an aggregate under LIMIT 0 that
// it never started (SELECT COUNT(*) FROM t LIMIT 0); the rows are complete
// by then, so that panic is ignored. A panic anywhere else fails the statement (Query).
func drain(ctx *sql.Context, iter sql.RowIter, maxRows uint64) (rows []sql.Row, err error) {
	for uint64(len(rows)) < maxRows {
		row, err := iter.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			closeQuietly(ctx, iter)
			return nil, err
		}
		if len(rows) == maxResultRows {
			closeQuietly(ctx, iter)
			return nil, &Error{Code: 1105, State: "HY000", Msg: "a statement over the catalog may return at most 100000 rows"}
		}
		rows = append(rows, row)
	}
	closeQuietly(ctx, iter)
	return rows, nil
}

func closeQuietly(ctx *sql.Context, iter sql.RowIter) {
	defer func() { _ = recover() }()
	_ = iter.Close(ctx)
}

// isOK reports whether a schema is go-mysql-server's OK result (SET, USE).
func isOK(schema sql.Schema) bool {
	return len(schema) == 0 || (len(schema) == 1 && types.IsOkResultSchema(schema))
}

// ClientCollation is the collation id a column definition announces for
// a text column in collation c. The proxy sends all text as UTF-8
// (utf8mb4), so the id tells a client how to decode it, not how the
// engine compares it (comparisons stay in the session's collation):
//
//   - a collation of utf8mb3 or utf8mb4 numbered below 255 is announced
//     as it is, and binary (63) stays binary;
//   - one of another character set (latin1, ascii, ucs2, ...) is
//     announced as utf8mb4_general_ci (45), as MariaDB announces a text
//     it converts to a utf8mb4 session's character_set_results (latin1_bin
//     included): CONVERT('é' USING latin1) sent its UTF-8 bytes c3 a9
//     announced as latin1 (8), which a client decodes as 'Ã©';
//   - ids from 255 (MySQL 8's utf8mb4_0900_*, go-mysql-server's default
//     utf8mb4_0900_bin among them, 309) are unknown to clients built for
//     MariaDB and to older ones: Node's mysql2 3.11 closes the connection
//     on 309. They are announced as MariaDB's utf8mb4_bin (46) or
//     utf8mb4_general_ci (45).
func ClientCollation(c sql.CollationID) uint16 {
	switch cs := c.CharacterSet(); {
	case c == sql.Collation_binary:
		return binaryCharset
	case c < 255 && (cs == sql.CharacterSet_utf8mb3 || cs == sql.CharacterSet_utf8mb4):
		return uint16(c)
	case c < 255:
		return uint16(sql.Collation_utf8mb4_general_ci)
	case strings.HasSuffix(c.Name(), "_bin"):
		return uint16(sql.Collation_utf8mb4_bin)
	}
	return uint16(sql.Collation_utf8mb4_general_ci)
}

// column converts a column definition as MySQL sends it.
func column(ctx *sql.Context, c *sql.Column) Column {
	mysqlType, flags := sqltypes.TypeToMySQL(c.Type.Type())
	col := Column{Name: c.Name, Type: byte(mysqlType), Flags: uint16(flags), Charset: binaryCharset,
		Length: c.Type.MaxTextResponseByteLength(ctx)}
	if t, ok := c.Type.(sql.TypeWithCollation); ok && !types.IsBinaryType(c.Type) {
		col.Charset = ClientCollation(t.Collation())
	} else if types.IsTextOnly(c.Type) {
		// go-mysql-server's system variable types (string, enum, set)
		// have no collation of their own; MariaDB sends such a variable
		// in utf8mb3_general_ci.
		col.Charset = utf8mb3GeneralCI
	}
	switch c.Type.Type() {
	case querypb.Type_ENUM:
		col.Flags |= enumFlag
	case querypb.Type_SET:
		col.Flags |= setFlag
	}
	if types.IsBinaryType(c.Type) || col.Charset == binaryCharset {
		col.Flags |= binaryFlag
	}
	if types.IsUnsigned(c.Type) {
		col.Flags |= unsignedFlag
	}
	if !c.Nullable {
		col.Flags |= notNullFlag
	}
	if types.IsDecimal(c.Type) {
		col.Decimals = uint8(c.Type.(sql.DecimalType).Scale())
	} else if types.IsDatetimeType(c.Type) {
		col.Decimals = uint8(c.Type.(sql.DatetimeType).Precision())
	} else if t, ok := c.Type.(timeType); ok {
		col.Decimals = uint8(t.fsp)
	} else if types.IsFloat(c.Type) {
		col.Decimals = 31
	}
	return col
}

// budgetError is the error of a statement that failed with err in ctx:
// the memory budget's refusal when the heap watch cancelled it, 3024 when
// it ran past the engine's limit or the caller's deadline (the proxy's
// bound of a catalog statement), 1317 when the caller cancelled it (KILL
// QUERY, the client gone), whatever error the engine made of that (Go's
// "context canceled", which was sent as 1105, then 1235); else sqlError.
func budgetError(ctx context.Context, err error) error {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errMemoryBudget):
		return &Error{Code: 1105, State: "HY000", Msg: errMemoryBudget.Error()}
	case errors.Is(cause, errStatementTimeout):
		return &Error{Code: 3024, State: "HY000", Msg: errStatementTimeout.Error()}
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &Error{Code: 3024, State: "HY000", Msg: "Query execution was interrupted, maximum statement execution time exceeded"}
	case ctx.Err() != nil:
		return errInterrupted
	}
	return sqlError(err)
}

// errInterrupted is MySQL's ER_QUERY_INTERRUPTED, of a statement its
// caller cancelled.
var errInterrupted = &Error{Code: 1317, State: "70100", Msg: "Query execution was interrupted"}

func sqlError(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if sql.ErrColumnNotFound.Is(err) {
		// MySQL's code, which go-mysql-server's mapping lacks, where
		// columnError found no reference to name the clause of.
		return &Error{Code: 1054, State: "42S22", Msg: "Unknown column: " + err.Error()}
	}
	if sql.ErrUnknownSystemVariable.Is(err) {
		// MySQL's ER_UNKNOWN_SYSTEM_VARIABLE, which go-mysql-server's
		// mapping lacks, naming the variable as MySQL does: without @@
		// and its scope (@@session.x is 'x').
		name := strings.TrimSuffix(strings.TrimPrefix(err.Error(), "Unknown system variable '"), "'")
		name = strings.TrimPrefix(name, "@@")
		for _, scope := range []string{"session.", "global.", "local.", "persist.", "persist_only."} {
			if len(name) > len(scope) && strings.EqualFold(name[:len(scope)], scope) {
				name = name[len(scope):]
				break
			}
		}
		return &Error{Code: 1193, State: "HY000", Msg: fmt.Sprintf("Unknown system variable '%s'", name)}
	}
	if mapped, ok := mysqlError(err); ok {
		return mapped
	}
	se := sql.CastSQLError(err)
	return &Error{Code: uint16(se.Num), State: se.State, Msg: se.Message}
}

// refusedModes are the sql_mode flags a session may not set, each with
// what dpproxy reads or computes instead (Query).
var refusedModes = map[string]string{
	"ANSI_QUOTES":             `dpproxy reads "..." as a string`,
	"ANSI":                    `dpproxy reads "..." as a string and || as OR`,
	"PIPES_AS_CONCAT":         "dpproxy reads || as OR; write CONCAT(a, b)",
	"HIGH_NOT_PRECEDENCE":     "dpproxy gives NOT its default precedence; write NOT (a)",
	"NO_UNSIGNED_SUBTRACTION": "dpproxy subtracts from an unsigned integer as unsigned (1690 below 0); write CAST(x AS SIGNED) - y",
	"NO_BACKSLASH_ESCAPES":    `dpproxy reads a backslash in a string as an escape; write '' for a quote`,
}

// divPrecisionIncrement is the only div_precision_increment a session
// may have: MariaDB's default, which post-processing's division follows.
const divPrecisionIncrement = 4

// keepReading makes sure the session's sql_mode has none of refusedModes
// and its div_precision_increment is divPrecisionIncrement: if not, it
// sets div_precision_increment back and sql_mode to fallback (the mode
// before the statement; without those flags if fallback is empty), and
// reports the refusal (1231); it returns the mode it leaves.
func (s *Session) keepReading(ctx *sql.Context, fallback string) (string, *Error, error) {
	var refused *Error
	incr, err := s.sess.GetSessionVariable(ctx, "div_precision_increment")
	if err != nil {
		return "", nil, sqlError(err)
	}
	if fmt.Sprint(incr) != fmt.Sprint(divPrecisionIncrement) {
		if err := s.sess.SetSessionVariable(ctx, "div_precision_increment", int64(divPrecisionIncrement)); err != nil {
			return "", nil, sqlError(err)
		}
		refused = &Error{Code: 1231, State: "42000", Msg: fmt.Sprintf("Variable 'div_precision_increment' can't be set to the value of '%v': dpproxy divides with %d more decimals, MariaDB's default", incr, divPrecisionIncrement)}
	}
	mode, err := s.sess.GetSessionVariable(ctx, "sql_mode")
	if err != nil {
		return "", nil, sqlError(err)
	}
	m, _ := mode.(string)
	parts := strings.Split(m, ",")
	var kept []string
	for _, part := range parts {
		p := strings.ToUpper(strings.TrimSpace(part))
		if why, ok := refusedModes[p]; ok {
			refused = &Error{Code: 1231, State: "42000", Msg: fmt.Sprintf("Variable 'sql_mode' can't be set to a value with %s: %s", p, why)}
			continue
		}
		kept = append(kept, part)
	}
	if refused == nil {
		return m, nil, nil
	}
	if fallback == "" {
		fallback = strings.Join(kept, ",")
	}
	if fallback != m {
		if err := s.sess.SetSessionVariable(ctx, "sql_mode", fallback); err != nil {
			return "", nil, sqlError(err)
		}
	}
	return fallback, refused, nil
}

// admit checks query (lexicallySafe, backstop), then waits for one of
// the engine's statement slots, the user's turn (admission), unless the
// statement is one that needs none (unqueued); it returns the statement
// as the engine is to read it, with the function that frees the slot. A
// statement the checks refuse is 1235 (or the error MariaDB gives it:
// 1426 for CAST(x AS DATETIME(7))), at once; waiting ends with the
// statement: 3024 at its deadline, 1317 when it is killed.
func (s *Session) admit(ctx context.Context, query string) (checked string, release func(), err error) {
	checked, err = lexicallySafe(query)
	var stmt sqlparser.Statement
	if err == nil {
		stmt, err = backstop(checked)
	}
	if err != nil {
		if e := (*Error)(nil); errors.As(err, &e) {
			return "", nil, e // MariaDB's own error (castPrecisionError)
		}
		return "", nil, &Error{Code: 1235, State: "42000", Msg: "not supported over the catalog: " + err.Error()}
	}
	if len(checked) <= maxUnqueuedText && unqueued(stmt) {
		return checked, func() {}, nil
	}
	release, err = s.e.slots.acquire(ctx, s.user)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return "", nil, &Error{Code: 3024, State: "HY000", Msg: fmt.Sprintf("Query execution was interrupted, maximum statement execution time exceeded (waiting for one of the catalog engine's %d statement slots, of which one user's statements hold at most %d)", maxConcurrentStatements, maxUserStatements)}
		}
		return "", nil, errInterrupted
	}
	return checked, release, nil
}

// Describe returns the result columns Query would announce for query, a
// SELECT, from the engine's analysis of it, for a prepared statement's
// COM_STMT_PREPARE answer: the same checks run first (lexicallySafe,
// backstop), and nothing runs after the analysis, so no user variable is
// assigned and no row is read. cols is nil for a statement without a
// result set.
func (s *Session) Describe(ctx context.Context, query string) (cols []Column, err error) {
	defer func() {
		if p := recover(); p != nil {
			cols, err = nil, &Error{Code: 1105, State: "HY000", Msg: "the catalog engine failed on this statement"}
		}
	}()
	query, release, err := s.admit(ctx, query)
	if err != nil {
		return nil, err
	}
	defer release()
	timed, cancel := context.WithTimeoutCause(ctx, s.e.timeout, errStatementTimeout)
	defer cancel()
	sctx := s.context(timed, query)
	node, err := s.e.gms.AnalyzeQuery(sctx, query)
	if err != nil {
		return nil, budgetError(timed, s.statementError(query, err))
	}
	schema := node.Schema()
	if isOK(schema) {
		return nil, nil
	}
	for _, c := range schema {
		cols = append(cols, column(sctx, c))
	}
	return cols, nil
}
