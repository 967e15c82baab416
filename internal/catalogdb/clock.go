package catalogdb

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/shopspring/decimal"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

// The clock functions of the catalog engine read the statement time (and
// SYSDATE() the time it is called) in the session's zone as private
// statements read NOW() (sqlrewrite): the zone SET time_zone gave the
// session, a name or an offset, as catalog.Location reads it, and for
// 'SYSTEM' the proxy's system zone (time.Local, which dpproxy serve sets
// to backend.time_zone). go-mysql-server's own NOW() shifts the reading
// of the process's clock from the system zone's current offset to the
// session's zone by relabelling the wall-clock time when the session's
// zone is a name, which is right only when the system zone is UTC: with
// backend.time_zone Europe/Berlin, SET time_zone = 'UTC' made NOW() an
// hour behind UTC_TIMESTAMP(). These replace it (the provider's Function
// finds them before the engine's built-in functions), keeping its types
// and texts: NOW(), CURRENT_TIMESTAMP, LOCALTIME, LOCALTIMESTAMP and
// SYSDATE() a DATETIME, CURDATE() and CURRENT_DATE, CURTIME() and
// CURRENT_TIME, UTC_TIMESTAMP(), UNIX_TIMESTAMP(); and UTC_DATE() and
// UTC_TIME(), which the engine lacks; and FROM_UNIXTIME(n), n seconds
// since 1970 in the session's zone (the engine's read 'SYSTEM' at the
// system zone's offset now, an hour off for a time in the other half of a
// zone with summer time). Each keeps the fraction of a second
// its precision asks for (NOW(6)), truncated as MySQL does.
var clockFunctions = func() map[string]sql.Function {
	fns := []sql.Function{
		sql.FunctionN{Name: "now", Fn: newClockNow(false)},
		sql.FunctionN{Name: "current_timestamp", Fn: newClockNow(false)},
		sql.FunctionN{Name: "localtime", Fn: newClockNow(false)},
		sql.FunctionN{Name: "localtimestamp", Fn: newClockNow(false)},
		sql.FunctionN{Name: "sysdate", Fn: newClockNow(true)},
		sql.NewFunction0("curdate", newClockDate("curdate", false)),
		sql.NewFunction0("current_date", newClockDate("current_date", false)),
		sql.NewFunction0("utc_date", newClockDate("utc_date", true)),
		sql.FunctionN{Name: "curtime", Fn: newClockTime(false)},
		sql.FunctionN{Name: "current_time", Fn: newClockTime(false)},
		sql.FunctionN{Name: "utc_time", Fn: newClockTime(true)},
		sql.FunctionN{Name: "utc_timestamp", Fn: newClockUTCTimestamp},
		sql.FunctionN{Name: "unix_timestamp", Fn: newClockUnixTimestamp},
		sql.FunctionN{Name: "from_unixtime", Fn: newClockFromUnixtime},
	}
	m := make(map[string]sql.Function, len(fns))
	for _, f := range fns {
		m[f.FunctionName()] = f
	}
	return m
}()

// Function implements sql.FunctionProvider: the clock functions and the
// bounded formatters (date_format.go), which the engine looks up here
// before its built-in ones.
func (p *provider) Function(_ *sql.Context, name string) (sql.Function, bool) {
	name = strings.ToLower(name)
	if f, ok := clockFunctions[name]; ok {
		return f, true
	}
	f, ok := formatFunctions[name]
	return f, ok
}

var _ sql.FunctionProvider = (*provider)(nil)

// errNoContext is the error of a clock function evaluated without a
// statement (go-mysql-server tries to, to type UNIX_TIMESTAMP(x)).
var errNoContext = errors.New("catalogdb: clock function evaluated without a statement")

// sessionLocation is the zone the session's clock reads in: its
// time_zone as catalog.Location reads it, time.Local for 'SYSTEM'.
func sessionLocation(ctx *sql.Context) (*time.Location, error) {
	v, err := ctx.GetSessionVariable(ctx, "time_zone")
	if err != nil {
		return nil, err
	}
	zone, _ := v.(string)
	if strings.EqualFold(zone, "SYSTEM") {
		return time.Local, nil
	}
	loc, _, ok := catalog.Location(zone)
	if !ok {
		return nil, mysql.NewSQLError(mysql.ERUnknownTimeZone, "HY000", "Unknown or incorrect time zone: '%s'", zone)
	}
	return loc, nil
}

// sessionWallClock is the date and time t shows in the session's zone
// (in UTC with utc), labelled UTC as go-mysql-server labels a DATETIME,
// truncated to fsp digits of a second.
func sessionWallClock(ctx *sql.Context, t time.Time, utc bool, fsp int) (time.Time, error) {
	loc := time.UTC
	if !utc {
		var err error
		if loc, err = sessionLocation(ctx); err != nil {
			return time.Time{}, err
		}
	}
	return wallClock(t, loc, fsp), nil
}

// wallClock is the date and time t shows in loc, labelled UTC, truncated
// to fsp digits of a second.
func wallClock(t time.Time, loc *time.Location, fsp int) time.Time {
	w := t.In(loc)
	unit := 1
	for range 9 - fsp {
		unit *= 10
	}
	return time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond()/unit*unit, time.UTC)
}

// maxPrecision is the most digits of a second a time may have.
const maxPrecision = 6

// errTooBigPrecision is MariaDB's ER_TOO_BIG_PRECISION for the clock
// function name, as MariaDB names it: 'current_timestamp' for NOW() and
// its synonyms, 'curtime' for CURTIME() and CURRENT_TIME (go-mysql-server
// sent 1105 "Too-big precision 7 for 'now'").
func errTooBigPrecision(name string) *Error {
	return &Error{Code: 1426, State: "42000", Msg: fmt.Sprintf("Too big precision specified for '%s'. Maximum is %d", name, maxPrecision)}
}

// precision is the fractional-second precision of a clock function: 0
// without an argument, else its argument, an integer from 0 to 6 (1426
// naming the function as MariaDB does, name, beyond).
func precision(ctx *sql.Context, name string, prec sql.Expression, row sql.Row) (int, error) {
	if prec == nil {
		return 0, nil
	}
	v, err := prec.Eval(ctx, row)
	if err != nil {
		return 0, err
	}
	if v == nil {
		return 0, function.ErrTimeUnexpectedlyNil.New(name)
	}
	fsp, ok := types.CoalesceInt(v)
	if !ok || fsp < 0 {
		return 0, sql.ErrInvalidArgumentType.New(name)
	}
	if fsp > maxPrecision {
		return 0, errTooBigPrecision(name)
	}
	return fsp, nil
}

// constantPrecision is the precision a clock function's argument prec
// fixes when it is a literal (nil: 0), for its type; ok is false for a
// parameter not yet bound (a prepared statement's description) or a
// literal out of range.
func constantPrecision(prec sql.Expression) (fsp int, ok bool) {
	if prec == nil {
		return 0, true
	}
	lit, isLit := prec.(*expression.Literal)
	if !isLit {
		return 0, false
	}
	fsp, ok = types.CoalesceInt(lit.Value())
	return fsp, ok && fsp >= 0 && fsp <= maxPrecision
}

// datetimeOf is DATETIME(fsp), the type of a clock function whose
// precision is fsp (fixed is false when it is not known before the
// statement runs: DATETIME(6)).
func datetimeOf(fsp int, fixed bool) sql.Type {
	if !fixed {
		return types.DatetimeMaxPrecision
	}
	return types.MustCreateDatetimeType(sqltypes.Datetime, fsp)
}

// timeOf is TIME(fsp): go-mysql-server's TIME, which has no precision,
// for fsp 0 or one not known before the statement runs (CURTIME(?) being
// described), else a TIME that announces fsp decimals and whose text has
// fsp digits of a second (column, temporalText).
func timeOf(fsp int, fixed bool) sql.Type {
	if !fixed || fsp == 0 {
		return types.Time
	}
	return timeType{TimeType: types.Time, fsp: fsp}
}

// timeType is TIME(fsp), fsp from 1 to 6.
type timeType struct {
	types.TimeType
	fsp int
}

// Equals implements sql.Type.
func (t timeType) Equals(other sql.Type) bool {
	o, ok := other.(timeType)
	return ok && o.fsp == t.fsp
}

// String implements sql.Type.
func (t timeType) String() string { return fmt.Sprintf("time(%d)", t.fsp) }

// clockNow is NOW() and its synonyms (SYSDATE() with exact: the time it
// is evaluated, not the statement's).
type clockNow struct {
	*function.Now
	exact bool
}

var _ sql.FunctionExpression = clockNow{}

func newClockNow(exact bool) func(...sql.Expression) (sql.Expression, error) {
	return func(args ...sql.Expression) (sql.Expression, error) {
		n, err := function.NewNow(args...)
		if err != nil {
			return nil, err
		}
		return clockNow{Now: n.(*function.Now), exact: exact}, nil
	}
}

// Eval implements sql.Expression.
func (n clockNow) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	if ctx == nil {
		return nil, errNoContext
	}
	var prec sql.Expression
	if c := n.Children(); len(c) > 0 {
		prec = c[0]
	}
	fsp, err := precision(ctx, n.errorName(), prec, row)
	if err != nil {
		return nil, err
	}
	t := ctx.QueryTime()
	if n.exact {
		t = sql.Now()
	}
	return sessionWallClock(ctx, t, false, fsp)
}

// errorName is the name MariaDB's errors give the function.
func (n clockNow) errorName() string {
	if n.exact {
		return "sysdate"
	}
	return "current_timestamp"
}

// Type implements sql.Expression: DATETIME(fsp), which announces fsp
// decimals and formats fsp digits of a second (NOW(6) always 26
// characters, NOW(2) two digits), as MariaDB does; go-mysql-server's is
// DATETIME(6) whatever the precision.
func (n clockNow) Type() sql.Type {
	var prec sql.Expression
	if c := n.Children(); len(c) > 0 {
		prec = c[0]
	}
	return datetimeOf(constantPrecision(prec))
}

// WithChildren implements sql.Expression.
func (n clockNow) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	return newClockNow(n.exact)(children...)
}

// clockDate is CURDATE(), CURRENT_DATE and UTC_DATE(), text as
// go-mysql-server's CURDATE() is.
type clockDate struct {
	function.CurrDate
	utc bool
}

var _ sql.FunctionExpression = clockDate{}

func newClockDate(name string, utc bool) func() sql.Expression {
	return func() sql.Expression {
		return clockDate{CurrDate: function.CurrDate{NoArgFunc: function.NoArgFunc{Name: name, SQLType: types.LongText}}, utc: utc}
	}
}

// Eval implements sql.Expression.
func (c clockDate) Eval(ctx *sql.Context, _ sql.Row) (any, error) {
	if ctx == nil {
		return nil, errNoContext
	}
	t, err := sessionWallClock(ctx, ctx.QueryTime(), c.utc, 0)
	if err != nil {
		return nil, err
	}
	return t.Format(time.DateOnly), nil
}

// WithChildren implements sql.Expression.
func (c clockDate) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	return function.NoArgFuncWithChildren(c, children)
}

// clockTime is CURTIME(), CURRENT_TIME and UTC_TIME(), text as
// go-mysql-server's CURTIME() is, with the fraction its precision asks
// for.
type clockTime struct {
	*function.CurrTime
	utc bool
}

var _ sql.FunctionExpression = clockTime{}

func newClockTime(utc bool) func(...sql.Expression) (sql.Expression, error) {
	return func(args ...sql.Expression) (sql.Expression, error) {
		if len(args) > 1 {
			return nil, sql.ErrInvalidArgumentNumber.New("CURTIME", 1, len(args))
		}
		c, err := function.NewCurrTime(args...)
		if err != nil {
			return nil, err
		}
		return clockTime{CurrTime: c.(*function.CurrTime), utc: utc}, nil
	}
}

// Eval implements sql.Expression.
func (c clockTime) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	if ctx == nil {
		return nil, errNoContext
	}
	var prec sql.Expression
	if ch := c.Children(); len(ch) > 0 {
		prec = ch[0]
	}
	name := "curtime"
	if c.utc {
		name = "utc_time"
	}
	fsp, err := precision(ctx, name, prec, row)
	if err != nil {
		return nil, err
	}
	t, err := sessionWallClock(ctx, ctx.QueryTime(), c.utc, fsp)
	if err != nil {
		return nil, err
	}
	if fsp == 0 {
		return t.Format(time.TimeOnly), nil
	}
	return t.Format(time.TimeOnly) + fmt.Sprintf(".%06d", t.Nanosecond()/1000)[:fsp+1], nil
}

// Type implements sql.Expression: TIME(fsp) (timeOf), which announces
// fsp decimals and formats fsp digits of a second (CURTIME(3) is
// 11:42:21.252), as MariaDB does; go-mysql-server's TIME has no
// precision, announces none and formats 6 digits.
func (c clockTime) Type() sql.Type {
	var prec sql.Expression
	if ch := c.Children(); len(ch) > 0 {
		prec = ch[0]
	}
	return timeOf(constantPrecision(prec))
}

// WithChildren implements sql.Expression.
func (c clockTime) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	return newClockTime(c.utc)(children...)
}

// clockUTCTimestamp is UTC_TIMESTAMP(), truncated to its precision
// (go-mysql-server's keeps microseconds whatever it is).
type clockUTCTimestamp struct {
	*function.UTCTimestamp
	args []sql.Expression
	fsp  int
}

var _ sql.FunctionExpression = clockUTCTimestamp{}

func newClockUTCTimestamp(args ...sql.Expression) (sql.Expression, error) {
	if len(args) == 1 {
		if v, err := args[0].Eval(sql.NewEmptyContext(), nil); err == nil {
			if n, ok := types.CoalesceInt(v); ok && n > maxPrecision {
				return nil, errTooBigPrecision("utc_timestamp")
			}
		}
	}
	u, err := function.NewUTCTimestamp(args...)
	if err != nil {
		return nil, err
	}
	c := clockUTCTimestamp{UTCTimestamp: u.(*function.UTCTimestamp), args: args}
	if len(args) == 1 {
		// NewUTCTimestamp has checked that it is a constant from 0 to 6.
		v, err := args[0].Eval(sql.NewEmptyContext(), nil)
		if err != nil {
			return nil, err
		}
		n, _ := types.CoalesceInt(v)
		c.fsp = n
	}
	return c, nil
}

// Eval implements sql.Expression.
func (c clockUTCTimestamp) Eval(ctx *sql.Context, _ sql.Row) (any, error) {
	if ctx == nil {
		return nil, errNoContext
	}
	return wallClock(ctx.QueryTime(), time.UTC, c.fsp), nil
}

// Type implements sql.Expression: DATETIME(fsp), as clockNow's.
func (c clockUTCTimestamp) Type() sql.Type { return datetimeOf(c.fsp, true) }

// WithChildren implements sql.Expression: it has none (its precision is
// read when it is built).
func (c clockUTCTimestamp) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(c, len(children), 0)
	}
	return c, nil
}

// clockUnixTimestamp is UNIX_TIMESTAMP(): the statement time's seconds
// since 1970, or those of its argument read in the session's zone (a
// TIMESTAMP value as go-mysql-server reads it).
type clockUnixTimestamp struct {
	*function.UnixTimestamp
	date sql.Expression
	typ  sql.Type
}

var _ sql.FunctionExpression = clockUnixTimestamp{}

func newClockUnixTimestamp(args ...sql.Expression) (sql.Expression, error) {
	u, err := function.NewUnixTimestamp(args...)
	if err != nil {
		return nil, err
	}
	c := clockUnixTimestamp{UnixTimestamp: u.(*function.UnixTimestamp)}
	c.typ = c.UnixTimestamp.Type()
	if len(args) == 1 {
		c.date = args[0]
		// go-mysql-server types UNIX_TIMESTAMP(NOW(n)) by NOW's
		// precision, which it finds only as its own NOW().
		if fsp, ok := clockNowPrecision(args[0]); ok {
			c.typ = types.Int64
			if fsp > 0 {
				c.typ = types.MustCreateDecimalType(19, uint8(fsp))
			}
		}
	}
	return c, nil
}

// clockNowPrecision is the constant precision of e when e is a NOW()
// (of any spelling) with one.
func clockNowPrecision(e sql.Expression) (int, bool) {
	n, ok := e.(clockNow)
	if !ok {
		return 0, false
	}
	c := n.Children()
	if len(c) == 0 {
		return 0, true
	}
	v, err := c[0].Eval(sql.NewEmptyContext(), nil)
	if err != nil {
		return 0, false
	}
	fsp, ok := types.CoalesceInt(v)
	return fsp, ok && fsp >= 0 && fsp <= 6
}

// Type implements sql.Expression.
func (c clockUnixTimestamp) Type() sql.Type { return c.typ }

// Eval implements sql.Expression.
func (c clockUnixTimestamp) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	if ctx == nil {
		return nil, errNoContext
	}
	if c.date == nil {
		return unixTimestamp(ctx.QueryTime(), c.typ), nil
	}
	if c.date.Type().Equals(types.Timestamp) {
		return c.UnixTimestamp.Eval(ctx, row)
	}
	v, err := c.date.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	v, _, err = types.DatetimeMaxPrecision.Convert(ctx, v)
	if err != nil {
		ctx.Warn(1292, "Incorrect datetime value: %s", c.date.String())
		return int64(0), nil
	}
	loc, err := sessionLocation(ctx)
	if err != nil {
		return nil, err
	}
	w := v.(time.Time)
	return unixTimestamp(time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), loc), c.typ), nil
}

// unixTimestamp is t's seconds since 1970 as go-mysql-server's
// UNIX_TIMESTAMP() gives them: 0 past its range, a decimal with typ's
// scale when typ is one, else whole seconds.
func unixTimestamp(t time.Time, typ sql.Type) any {
	micro := t.UnixMicro()
	if micro > function.MaxUnixTimeMicroSecs {
		return int64(0)
	}
	if micro < 1e6 {
		return typ.Zero()
	}
	if types.IsDecimal(typ) {
		scale := int32(typ.(sql.DecimalType).Scale())
		for i := 6 - scale; i > 0; i-- {
			micro /= 10
		}
		return decimal.New(micro, -scale)
	}
	return micro / 1e6
}

// WithChildren implements sql.Expression.
func (c clockUnixTimestamp) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	return newClockUnixTimestamp(children...)
}

// clockFromUnixtime is FROM_UNIXTIME(n[, format]): the date and time of n
// seconds since 1970 in the session's zone, formatted as DATE_FORMAT
// formats with format.
type clockFromUnixtime struct{ *function.FromUnixtime }

var _ sql.FunctionExpression = clockFromUnixtime{}

func newClockFromUnixtime(args ...sql.Expression) (sql.Expression, error) {
	f, err := function.NewFromUnixtime(args...)
	if err != nil {
		return nil, err
	}
	return clockFromUnixtime{f.(*function.FromUnixtime)}, nil
}

// Eval implements sql.Expression.
func (f clockFromUnixtime) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	if ctx == nil {
		return nil, errNoContext
	}
	args := f.Children()
	v, err := args[0].Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	fsp := f.precision()
	var sec, micro int64
	if fsp == 0 {
		n, _, err := types.Int64.Convert(ctx, v)
		if err != nil || n == nil {
			return nil, err
		}
		sec = n.(int64)
	} else {
		var d decimal.Decimal
		switch x := v.(type) {
		case []byte:
			d = leadingDecimal(ctx, string(x))
		case string:
			d = leadingDecimal(ctx, x)
		case float64:
			if x < 0 || x >= maxUnixTime+1 || math.IsNaN(x) {
				return nil, nil
			}
			d = decimal.NewFromFloat(x)
		default:
			n, _, err := types.InternalDecimalType.Convert(ctx, v)
			if err != nil || n == nil {
				return nil, err
			}
			d = n.(decimal.Decimal)
		}
		if d.Sign() < 0 || d.GreaterThanOrEqual(decimal.NewFromInt(maxUnixTime+1)) {
			return nil, nil
		}
		sec = d.IntPart()
		micro = d.Sub(decimal.NewFromInt(sec)).Shift(6).IntPart()
	}
	if sec < 0 || sec > maxUnixTime {
		return nil, nil
	}
	loc, err := sessionLocation(ctx)
	if err != nil {
		return nil, err
	}
	t := wallClock(time.Unix(sec, micro*1000), loc, fsp)
	if len(args) == 1 {
		return t, nil
	}
	format, err := args[1].Eval(ctx, row)
	if err != nil || format == nil {
		return nil, err
	}
	if err := checkFormat(ctx, "FROM_UNIXTIME", format); err != nil {
		return nil, err
	}
	return function.NewDateFormat(expression.NewLiteral(t, types.DatetimeMaxPrecision), expression.NewLiteral(format, args[1].Type())).Eval(ctx, row)
}

// maxUnixTime is the last second FROM_UNIXTIME takes on MariaDB 10.11
// (2038-01-19 03:14:07 UTC, with any fraction); past it is NULL
// (go-mysql-server's function.MaxUnixTimeSecs ran to 3001).
const maxUnixTime = 1<<31 - 1

// decimalPrefix is the number MariaDB reads at the start of a string it
// takes as a DECIMAL.
var decimalPrefix = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?`)

// leadingDecimal is the number text starts with, read as MariaDB reads a
// string as a DECIMAL: after leading spaces, 0 when it starts with none
// ('abc', the empty string), with warning 1292 "Truncated incorrect DECIMAL value"
// when anything but trailing spaces follows it ('5abc' is 5);
// go-mysql-server failed with 1105 ("number has no digits").
func leadingDecimal(ctx *sql.Context, text string) decimal.Decimal {
	s := strings.TrimLeft(text, " \t\n\r\f\v")
	m := decimalPrefix.FindStringSubmatch(s)
	if m == nil {
		m = []string{"", "", ""}
	}
	d, err := decimal.NewFromString(strings.TrimSuffix(m[1], "."))
	if err != nil {
		d = decimal.Zero
	}
	if strings.HasPrefix(m[0], "-") {
		d = d.Neg()
	}
	// An exponent past ±100 makes the number 0 or past maxUnixTime;
	// read as written, 1e-999999999 would take gigabytes to round.
	if m[2] != "" {
		x, err := strconv.Atoi(m[2][1:])
		switch {
		case err != nil || x > 100:
			if !d.IsZero() {
				d = decimal.NewFromInt(int64(d.Sign()) * (maxUnixTime + 1))
			}
		case x < -100:
			d = decimal.Zero
		default:
			d = d.Shift(int32(x))
		}
	}
	if m[0] == "" || strings.TrimRight(s[len(m[0]):], " \t\n\r\f\v") != "" {
		ctx.Warn(1292, "Truncated incorrect DECIMAL value: '%s'", catalog.ErrConvText(text))
	}
	return d
}

// precision is the digits of a second FROM_UNIXTIME(n) keeps, as MariaDB
// has them: none for an integer n, a decimal's scale (at most 6: 1.5 is
// 00:00:01.5), and 6 for text or a float, which then show their fraction
// only when they have one (temporalText); go-mysql-server read n as whole
// seconds, rounded (FROM_UNIXTIME(1.5) was 00:00:02).
func (f clockFromUnixtime) precision() int {
	switch t := f.Children()[0].Type(); {
	case types.IsDecimal(t):
		return min(int(t.(sql.DecimalType).Scale()), maxPrecision)
	case types.IsText(t), types.IsFloat(t):
		return maxPrecision
	}
	return 0
}

// Type implements sql.Expression: DATETIME(p) for FROM_UNIXTIME(n), p its
// precision, as MariaDB types it (DATETIME of an integer n);
// go-mysql-server's DATETIME(6) made a client of the binary protocol show
// 2023-11-14 22:13:20.000000.
func (f clockFromUnixtime) Type() sql.Type {
	if len(f.Children()) == 1 {
		return datetimeOf(f.precision(), true)
	}
	return f.FromUnixtime.Type()
}

// WithChildren implements sql.Expression.
func (f clockFromUnixtime) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	return newClockFromUnixtime(children...)
}
