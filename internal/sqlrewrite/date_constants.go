package sqlrewrite

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

// Constant dates and times in WHERE: besides literals, what BI tools write
// for relative periods, evaluated by the proxy when it parses the
// statement (they are public, like any constant):
//
//   - CURDATE(), CURRENT_DATE, UTC_DATE(); NOW(), CURRENT_TIMESTAMP,
//     LOCALTIMESTAMP, LOCALTIME, SYSDATE(), UTC_TIMESTAMP() (to the second);
//   - DATE(x), TIMESTAMP(x) of a constant; FROM_UNIXTIME(n) (Grafana's
//     time filter), n seconds since 1970 in the session's zone;
//   - DATE_ADD, ADDDATE, DATE_SUB, SUBDATE (x ± INTERVAL n unit) and
//     TIMESTAMPADD(unit, n, x), n an integer, unit SECOND, MINUTE, HOUR,
//     DAY, WEEK, MONTH, QUARTER or YEAR, with MySQL's rules: wall-clock
//     arithmetic, a month added to a day past the new month's end lands
//     on its last day, a date stays a date unless the unit is shorter
//     than a day.
//
// The current date and time are the proxy's clock read in the session's
// time zone, as MySQL reads NOW(): its time_zone variable when SET gave
// it one (SetSessionTimeZone: a name of the time zone database or an
// offset '+05:00'), else, as with 'SYSTEM', the backend sessions' zone
// (backend.time_zone, UTC by default), in which the backend reads the
// columns with a time zone, so CURDATE() is the date the backend's own
// CURDATE() would give; with backend.time_zone: server the proxy does not
// know that zone and refuses them unless the session set its own. A
// date or timestamp column without a time zone is the same wall-clock
// value in every zone; one with a time zone is read in
// backend.time_zone, so a statement that reads one while the session's
// zone is another is refused (checkZones): a statement is read in one
// zone.
//
// Against a date column a time of day counts as MySQL compares a date
// with a datetime, the date being its midnight: day >= '2024-01-05 12:00'
// is day >= '2024-01-06'.

// SetNow replaces the clock CURDATE() and NOW() read (for tests).
func (p *Parser) SetNow(now func() time.Time) { p.now = now }

// SetSessionTimeZone tells the parser the session's time_zone variable as
// SET left it; "" and 'SYSTEM' (the default) mean backend.time_zone.
func (p *Parser) SetSessionTimeZone(zone string) { p.sessionZone = zone }

// SetColumnZones tells the parser which date and timestamp columns the
// backend stores with a time zone (checkZones); nil knows none.
func (p *Parser) SetColumnZones(z *catalog.ColumnZones) { p.zones = z }

// clockZone is the zone of the session's clock: its time_zone when SET
// gave it one (session true), else backend.time_zone.
func (sc *scope) clockZone() (zone string, session bool) {
	if z := sc.sessionZone; z != "" && !strings.EqualFold(z, "SYSTEM") {
		return z, true
	}
	return sc.timeZone, false
}

// clockLocation is clockZone as a location, or why it is none.
func (sc *scope) clockLocation() (*time.Location, error) {
	zone, session := sc.clockZone()
	loc, _, ok := catalog.Location(zone)
	switch {
	case ok:
		return loc, nil
	case session:
		return nil, fmt.Errorf("the session's time_zone '%s' is no zone dpproxy knows; SET time_zone to a name of the time zone database ('Europe/Paris') or an offset from '-13:59' to '+14:00'", zone)
	case zone == "server":
		return nil, errors.New("backend.time_zone is server, whose zone the proxy does not know; set it to the zone's name or offset")
	}
	return nil, fmt.Errorf("backend.time_zone %q is not in the proxy's time zone database", zone)
}

// clockIsBackendZone reports whether the session's clock zone is the
// zone the backend sessions read columns with a time zone in: the
// session set none, or one the same as backend.time_zone (UTC and
// '+00:00' alike, offsets by their value, names by name). It is false
// when either is unknown (backend.time_zone: server).
func (sc *scope) clockIsBackendZone() bool {
	zone, session := sc.clockZone()
	if !session {
		return true
	}
	_, a, ok := catalog.Location(zone)
	_, b, okBackend := catalog.Location(sc.timeZone)
	return ok && okBackend && a == b
}

// clockIsUTC reports whether both the session's clock and the backend
// sessions are in UTC (or '+00:00').
func (sc *scope) clockIsUTC() bool {
	zone, _ := sc.clockZone()
	_, a, ok := catalog.Location(zone)
	_, b, okBackend := catalog.Location(sc.timeZone)
	return ok && okBackend && a == "+00:00" && b == "+00:00"
}

// checkZones refuses a statement s over sc's table that names a date or
// timestamp column the backend stores with a time zone (or whose backend
// type is not known yet: a table created after start that no statement
// has checked) while the session's clock zone is not the backend's
// (clockIsBackendZone). MySQL shows and compares such a column in the
// session's zone, dpproxy reads it in backend.time_zone: with its NOW()
// in the session's zone the statement would mix two zones. The decision
// depends on the statement, the configuration, the session and the
// backend's column types only.
func (p *Parser) checkZones(sc *scope, s ast.Node) error {
	if sc.clockIsBackendZone() {
		return nil
	}
	var zoned *catalog.Column
	var known bool
	containsNode(s, func(n ast.Node) bool {
		c, ok := n.(*ast.ColumnNameExpr)
		if !ok {
			return false
		}
		col, ok := sc.table.Column(c.Name.Name.O)
		if !ok || !col.Temporal() {
			return false
		}
		z, k := p.zones.Zoned(sc.table.Name, col.Name)
		if z || !k {
			zoned, known = col, k
			return true
		}
		return false
	})
	if zoned == nil {
		return nil
	}
	zone, _ := sc.clockZone()
	backendZone := sc.timeZone
	if backendZone == "" {
		backendZone = "UTC"
	}
	stored := "which the backend stores with a time zone (PostgreSQL timestamptz, MySQL and MariaDB TIMESTAMP)"
	if !known {
		stored = "whose backend type dpproxy has not read yet (its table was not found at start) and may have a time zone"
	}
	return refuse(fmt.Sprintf("column %s, %s and dpproxy reads in backend.time_zone %s, while the session's time_zone is '%s'", zoned.Name, stored, backendZone, zone),
		"SET time_zone = DEFAULT (or to backend.time_zone) to read it, or use a column without a time zone (DATETIME, timestamp without time zone), whose wall-clock values compare with NOW() in any session zone")
}

// wallClock is the current date and time in the session's clock zone
// (in UTC with utc), as the wall-clock time it names (labelled UTC, as
// every time here), to the second.
func (sc *scope) wallClock(utc bool) (time.Time, error) {
	if utc {
		return wallTime(sc.now(), time.UTC), nil
	}
	return sc.wallClockAt(sc.now())
}

// wallClockAt is the wall-clock time of the instant t in the session's
// clock zone (FROM_UNIXTIME's reading of a Unix time).
func (sc *scope) wallClockAt(t time.Time) (time.Time, error) {
	loc, err := sc.clockLocation()
	if err != nil {
		return time.Time{}, err
	}
	return wallTime(t, loc), nil
}

// wallTime is the date and time t shows in loc, to the second, labelled UTC.
func wallTime(t time.Time, loc *time.Location) time.Time {
	t = t.In(loc)
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, time.UTC)
}

// timeUnits are the INTERVAL units of date arithmetic: a length in
// seconds, or in months.
var timeUnits = map[ast.TimeUnitType]struct{ seconds, months int64 }{
	ast.TimeUnitSecond: {seconds: 1}, ast.TimeUnitMinute: {seconds: 60}, ast.TimeUnitHour: {seconds: 3600},
	ast.TimeUnitDay: {seconds: catalog.SecondsPerDay}, ast.TimeUnitWeek: {seconds: 7 * catalog.SecondsPerDay},
	ast.TimeUnitMonth: {months: 1}, ast.TimeUnitQuarter: {months: 3}, ast.TimeUnitYear: {months: 12},
}

// maxIntervalCount bounds n in INTERVAL n unit (far beyond any date).
const maxIntervalCount = 1e8

// constantTime evaluates a constant date or timestamp expression (above).
// isDate says whether it is a date (MySQL's type of the expression);
// handled is false when e is no such expression; err is a refusal's
// reason.
func (sc *scope) constantTime(e ast.ExprNode) (t time.Time, isDate, handled bool, err error) {
	e = unparen(e)
	if v, ok := literal(e); ok {
		if !v.IsText {
			return time.Time{}, false, false, nil
		}
		t, isDate, err := parseTimeText(v.Str, true)
		return t, isDate, true, err
	}
	f, ok := e.(*ast.FuncCallExpr)
	if !ok || f.Schema.L != "" {
		return time.Time{}, false, false, nil
	}
	args := f.Args
	switch name := f.FnName.L; {
	case (name == ast.DateLiteral || name == ast.TimestampLiteral) && len(args) == 1:
		v, ok := literal(args[0])
		if !ok || !v.IsText {
			return time.Time{}, false, false, nil
		}
		t, isDate, err := parseTimeText(v.Str, name == ast.TimestampLiteral)
		return t, isDate && name == ast.DateLiteral, true, err
	case name == "str_to_date" && len(args) == 2:
		format, isFormat := literal(args[1])
		v, isText := literal(args[0])
		fraction, known := map[string]bool{"%Y-%m-%d": false, "%Y-%m-%d %H:%i:%s": false, "%Y-%m-%d %T": false, "%Y-%m-%d %H:%i:%s.%f": true}[format.Str]
		if !isFormat || !format.IsText || !known || !isText || !v.IsText {
			return time.Time{}, false, false, nil
		}
		t, _, err := parseTimeText(v.Str, fraction)
		return t, format.Str == "%Y-%m-%d", true, err
	case (name == "curdate" || name == "current_date" || name == "utc_date") && len(args) == 0:
		now, err := sc.wallClock(name == "utc_date")
		return now.Truncate(24 * time.Hour), true, true, err
	case name == "now" || name == "current_timestamp" || name == "localtimestamp" || name == "localtime" || name == "sysdate" || name == "utc_timestamp":
		if len(args) > 1 || len(args) == 1 && !isPrecision(args[0]) {
			return time.Time{}, false, false, nil
		}
		now, err := sc.wallClock(name == "utc_timestamp")
		return now, false, true, err
	case name == "from_unixtime" && len(args) == 1: // Grafana's $__timeFilter
		v, ok := literal(args[0])
		if !ok || v.IsText || v.Num != math.Trunc(v.Num) || math.Abs(v.Num) > 1<<40 {
			return time.Time{}, false, true, fmt.Errorf("FROM_UNIXTIME(%s): the argument must be a whole number of seconds", restore(args[0]))
		}
		t, err := sc.wallClockAt(time.Unix(int64(v.Num), 0))
		return t, false, true, err
	case (name == "date" || name == "timestamp") && len(args) == 1:
		t, _, handled, err := sc.constantTime(args[0])
		if name == "date" {
			t = t.Truncate(24 * time.Hour)
		}
		return t, name == "date", handled, err
	case (name == "date_add" || name == "adddate" || name == "date_sub" || name == "subdate") && len(args) == 3:
		sign := int64(1)
		if name == "date_sub" || name == "subdate" {
			sign = -1
		}
		return sc.shiftedTime(args[0], args[1], args[2], sign)
	case name == "timestampadd" && len(args) == 3:
		return sc.shiftedTime(args[2], args[1], args[0], 1)
	}
	return time.Time{}, false, false, nil
}

// isPrecision reports whether e is NOW()'s fractional-second precision,
// an integer in [0, 6] (the fraction is dropped).
func isPrecision(e ast.ExprNode) bool {
	v, ok := literal(e)
	return ok && !v.IsText && v.Num == math.Trunc(v.Num) && v.Num >= 0 && v.Num <= 6
}

// shiftedTime is the constant x shifted by sign·n units, by MySQL's date
// arithmetic (above).
func (sc *scope) shiftedTime(x, n, unit ast.ExprNode, sign int64) (time.Time, bool, bool, error) {
	t, isDate, handled, err := sc.constantTime(x)
	if !handled || err != nil {
		return t, isDate, handled, err
	}
	u, ok := unit.(*ast.TimeUnitExpr)
	if !ok {
		return time.Time{}, false, true, fmt.Errorf("INTERVAL %s: the units are SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, QUARTER and YEAR, and their compounds (not MICROSECOND)", restore(unit))
	}
	if fields, compound := compoundUnits[u.Unit]; compound {
		return shiftedByCompound(t, isDate, n, u.Unit, fields, sign)
	}
	length, known := timeUnits[u.Unit]
	if !known {
		return time.Time{}, false, true, fmt.Errorf("INTERVAL %s: the units are SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, QUARTER and YEAR, and their compounds (not MICROSECOND)", restore(unit))
	}
	v, ok := literal(n)
	if !ok || v.IsText || v.Num != math.Trunc(v.Num) || math.Abs(v.Num) > maxIntervalCount {
		return time.Time{}, false, true, fmt.Errorf("INTERVAL %s %s: the count must be an integer of magnitude at most 10^8", restore(n), u.Unit)
	}
	k := sign * int64(v.Num)
	if length.months != 0 {
		t = addMonths(t, k*length.months)
	} else {
		t = shiftSeconds(t, k*length.seconds)
		isDate = isDate && length.seconds%catalog.SecondsPerDay == 0
	}
	if y := t.Year(); y < 1000 || y > 9999 {
		return time.Time{}, false, true, fmt.Errorf("%s is outside the years 1000 to 9999", t.Format(time.DateTime))
	}
	return t, isDate, true, nil
}

// compoundUnits are MySQL's compound interval units but the MICROSECOND
// ones, by the length of each field, largest first: months for
// YEAR_MONTH, seconds for the others.
var compoundUnits = map[ast.TimeUnitType][]int64{
	ast.TimeUnitYearMonth:    {12, 1},
	ast.TimeUnitDayHour:      {catalog.SecondsPerDay, 3600},
	ast.TimeUnitDayMinute:    {catalog.SecondsPerDay, 3600, 60},
	ast.TimeUnitDaySecond:    {catalog.SecondsPerDay, 3600, 60, 1},
	ast.TimeUnitHourMinute:   {3600, 60},
	ast.TimeUnitHourSecond:   {3600, 60, 1},
	ast.TimeUnitMinuteSecond: {60, 1},
}

// intervalFields are the runs of digits of a compound interval's value.
var intervalFields = regexp.MustCompile(`[0-9]+`)

// shiftedByCompound is t shifted by sign times the compound interval n
// unit, read as MySQL reads it: the value's text ('1 2' for DAY_HOUR,
// '1:30' for HOUR_MINUTE, '1-2' for YEAR_MONTH; a number by its digits,
// 1.5 DAY_HOUR being a day and five hours) split into runs of digits at
// any other character, assigned to the fields from the smallest (1
// DAY_HOUR is an hour), negated as a whole by a leading '-'; more runs
// than fields is NULL in MySQL, refused here. A date shifted by a unit
// with a time of day becomes a timestamp, as in MySQL.
func shiftedByCompound(t time.Time, isDate bool, n ast.ExprNode, unit ast.TimeUnitType, fields []int64, sign int64) (time.Time, bool, bool, error) {
	v, ok := literal(n)
	if !ok || v.Null {
		return time.Time{}, false, true, fmt.Errorf("INTERVAL %s %s: the value must be a constant", restore(n), unit)
	}
	text := v.Str
	if !v.IsText {
		text = strconv.FormatFloat(v.Num, 'f', -1, 64)
	}
	text = strings.TrimSpace(text)
	if strings.HasPrefix(text, "-") {
		sign, text = -sign, text[1:]
	}
	runs := intervalFields.FindAllString(text, -1)
	if len(runs) == 0 || len(runs) > len(fields) {
		return time.Time{}, false, true, fmt.Errorf("INTERVAL %s %s: it takes one to %d numbers (MySQL's value is NULL)", restore(n), unit, len(fields))
	}
	var total int64
	for i, r := range runs {
		k, err := strconv.ParseInt(r, 10, 64)
		if err != nil || k > maxIntervalCount {
			return time.Time{}, false, true, fmt.Errorf("INTERVAL %s %s: each number must be at most 10^8", restore(n), unit)
		}
		total += k * fields[len(fields)-len(runs)+i]
	}
	if unit == ast.TimeUnitYearMonth {
		t = addMonths(t, sign*total)
	} else {
		t, isDate = shiftSeconds(t, sign*total), false
	}
	if y := t.Year(); y < 1000 || y > 9999 {
		return time.Time{}, false, true, fmt.Errorf("%s is outside the years 1000 to 9999", t.Format(time.DateTime))
	}
	return t, isDate, true, nil
}

// shiftSeconds returns t moved by k seconds (|k| ≤ 10^8 weeks): on Unix
// seconds, which hold every such shift, where a time.Duration overflows
// beyond 292 years and would wrap around to a date inside the range.
func shiftSeconds(t time.Time, k int64) time.Time {
	return time.Unix(t.Unix()+k, int64(t.Nanosecond())).In(t.Location())
}

// addMonths adds k calendar months to t as MySQL does: the same day of
// the month and time of day, the day clamped to the new month's last day
// (2024-01-31 plus one month is 2024-02-29).
func addMonths(t time.Time, k int64) time.Time {
	m := int64(t.Year())*12 + int64(t.Month()) - 1 + k
	year, month := int(floorInt(m, 12)), time.Month(m-floorInt(m, 12)*12+1)
	last := time.Date(year, month+1, 0, 0, 0, 0, 0, time.UTC).Day()
	return time.Date(year, month, min(t.Day(), last), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}

// floorInt is ⌊a/b⌋ for b > 0.
func floorInt(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// parseTimeText reads 'YYYY-MM-DD' (a date) or 'YYYY-MM-DD hh:mm:ss' (a
// timestamp; a T separator too), with a fraction of a second of one to
// six digits (more when the rest are zeros: nanoseconds from a client's
// Timestamp) when fraction is set. A timestamp with a fraction is
// compared exactly (Range.LowerMicros).
func parseTimeText(s string, fraction bool) (time.Time, bool, error) {
	s = strings.TrimSpace(s)
	var micros int
	if dot := strings.LastIndexByte(s, '.'); fraction && dot > len(time.DateOnly) {
		digits := s[dot+1:]
		kept := strings.TrimRight(digits, "0")
		if digits == "" || len(kept) > 6 || strings.Trim(digits, "0123456789") != "" {
			return time.Time{}, false, fmt.Errorf("%q is not a timestamp: its fraction of a second is not 1 to 6 digits", s)
		}
		for i := range 6 {
			micros *= 10
			if i < len(kept) {
				micros += int(kept[i] - '0')
			}
		}
		s = s[:dot]
	}
	typ := catalog.Timestamp
	if len(s) == len(time.DateOnly) {
		typ = catalog.Date
	}
	c := catalog.Column{Type: typ}
	x, err := c.ParseTemporal(s)
	if err != nil {
		return time.Time{}, false, err
	}
	return c.TimeOf(x).Add(time.Duration(micros) * time.Microsecond), typ == catalog.Date, nil
}

// numericTime reads an integer literal compared with a date or
// timestamp column as MySQL converts it: eight digits YYYYMMDD (a day),
// fourteen YYYYMMDDhhmmss (an instant). ok is false for any other
// expression; err says why digits are no date.
func numericTime(e ast.ExprNode) (t time.Time, ok bool, err error) {
	v, isLit := literal(unparen(e))
	if !isLit || v.IsText || v.Null || v.Num != math.Trunc(v.Num) || v.Num < 0 {
		return time.Time{}, false, nil
	}
	digits := strconv.FormatFloat(v.Num, 'f', 0, 64)
	layout := map[int]string{8: "20060102", 14: "20060102150405"}[len(digits)]
	if layout == "" {
		return time.Time{}, false, nil
	}
	t, err = time.Parse(layout, digits)
	if err != nil {
		return time.Time{}, true, fmt.Errorf("%s is not a date %s", digits, map[int]string{8: "YYYYMMDD", 14: "YYYYMMDDhhmmss"}[len(digits)])
	}
	return t, true, nil
}

// timeBound is one side of a date condition: the column's number x (a
// timestamp's whole second, plus micros microseconds), and whether the
// bound excludes it.
type timeBound struct {
	x      float64
	micros int32
	open   bool
}

// columnBound converts col op t (op one of >, >=, <, <=) to a bound on
// the column's number: a timestamp column's second of t; a date column's
// day, a time of day within the day counting as MySQL compares a date
// (its midnight) with a datetime.
func columnBound(col *catalog.Column, op opcode.Op, t time.Time) timeBound {
	s := t.Unix() // the whole second at or before t
	micros := int32(t.Nanosecond() / 1000)
	if col.Type != catalog.Date {
		return timeBound{float64(s), micros, op == opcode.GT || op == opcode.LT}
	}
	day, exact := floorInt(s, catalog.SecondsPerDay), s%catalog.SecondsPerDay == 0 && micros == 0
	switch op {
	case opcode.GE: // midnight of d ≥ t: d ≥ ⌈t⌉
		if !exact {
			day++
		}
		return timeBound{x: float64(day)}
	case opcode.GT: // midnight of d > t: d > ⌊t⌋
		return timeBound{x: float64(day), open: true}
	case opcode.LE: // midnight of d ≤ t: d ≤ ⌊t⌋
		return timeBound{x: float64(day)}
	}
	// LT: midnight of d < t
	return timeBound{x: float64(day), open: exact}
}

// timeConstant reads the constant side of a condition on a date or
// timestamp column (constantTime), refusing anything else.
func (sc *scope) timeConstant(site conditionSite, col *catalog.Column, e ast.ExprNode) (time.Time, error) {
	if t, ok, err := numericTime(e); ok {
		if err != nil {
			return time.Time{}, site.refuse("%s", fmt.Sprintf("a comparison of the %s column %s with %s: %v", col.Type, col.Name, restore(e), err))
		}
		return t, nil
	}
	t, _, handled, err := sc.constantTime(e)
	if !handled {
		return time.Time{}, site.refuse("%s", fmt.Sprintf("a comparison of the %s column %s with anything but a constant date: a literal ('2020-01-01', DATE '2020-01-01', "+
			"STR_TO_DATE('2020-01-01', '%%Y-%%m-%%d')), CURDATE(), NOW() and DATE_SUB(CURDATE(), INTERVAL 7 DAY) or CURDATE() - INTERVAL 1 MONTH", col.Type, col.Name))
	}
	if err != nil {
		return time.Time{}, site.refuse("%s", fmt.Sprintf("a comparison of the %s column %s with %s: %v", col.Type, col.Name, restore(e), err))
	}
	return t, nil
}

// timeComparison is col op t on a date or timestamp column: = is the
// one-point range (the caller negates <>); a date column equals no time
// past midnight, which is refused rather than answered as empty.
func timeComparison(site conditionSite, col *catalog.Column, op opcode.Op, t time.Time) (Condition, error) {
	r := &Range{}
	switch op {
	case opcode.GT, opcode.GE:
		r.setLower(columnBound(col, op, t))
	case opcode.LT, opcode.LE:
		r.setUpper(columnBound(col, op, t))
	default:
		lo, hi := columnBound(col, opcode.GE, t), columnBound(col, opcode.LE, t)
		if lo.x != hi.x {
			return Condition{}, site.refuse("%s", fmt.Sprintf("= between the date column %s and %s, a time past midnight, which no date equals", col.Name, t.Format(time.DateTime)))
		}
		r.setLower(lo)
		r.setUpper(hi)
	}
	return Condition{Column: col.Name, Temporal: col.Type, Range: r}, nil
}

// setLower and setUpper make b the range's lower or upper end.
func (r *Range) setLower(b timeBound) {
	r.Lower, r.LowerMicros, r.HasLower, r.LowerOpen = b.x, b.micros, true, b.open
}

func (r *Range) setUpper(b timeBound) {
	r.Upper, r.UpperMicros, r.HasUpper, r.UpperOpen = b.x, b.micros, true, b.open
}

// period reads YEAR(col) or DATE(col) (CAST(col AS DATE)) of a date or
// timestamp column col, whose values v name periods of col: the year v (a
// number, or YEAR of a constant date: YEAR(CURDATE())),
// [v-01-01, (v+1)-01-01), or the day v, [v, v + 1 day). ok is false for
// any other expression.
func (sc *scope) period(e ast.ExprNode) (col *catalog.Column, of func(v ast.ExprNode) (start, end time.Time, err error), ok bool) {
	var arg ast.ExprNode
	year := false
	switch f := unparen(e).(type) {
	case *ast.FuncCallExpr:
		if f.Schema.L != "" || len(f.Args) != 1 || f.FnName.L != "year" && f.FnName.L != "date" {
			return nil, nil, false
		}
		arg, year = f.Args[0], f.FnName.L == "year"
	case *ast.FuncCastExpr:
		if f.Tp.GetType() != mysql.TypeDate {
			return nil, nil, false
		}
		arg = f.Expr
	default:
		return nil, nil, false
	}
	if col, ok = sc.dateColumn(arg); !ok {
		return nil, nil, false
	}
	if year {
		return col, func(v ast.ExprNode) (time.Time, time.Time, error) {
			n, ok := literal(v)
			if f, isYear := unparen(v).(*ast.FuncCallExpr); isYear && f.FnName.L == "year" && f.Schema.L == "" && len(f.Args) == 1 {
				t, _, handled, err := sc.constantTime(f.Args[0]) // YEAR(CURDATE())
				if handled && err != nil {
					return time.Time{}, time.Time{}, err
				}
				n, ok = Value{Num: float64(t.Year())}, handled
			}
			if !ok || n.IsText || n.Num != math.Trunc(n.Num) || n.Num < 1000 || n.Num > 9998 {
				return time.Time{}, time.Time{}, fmt.Errorf("YEAR(%s) compared with %s, not a year from 1000 to 9998", col.Name, restore(v))
			}
			start := time.Date(int(n.Num), 1, 1, 0, 0, 0, 0, time.UTC)
			return start, start.AddDate(1, 0, 0), nil
		}, true
	}
	return col, func(v ast.ExprNode) (time.Time, time.Time, error) {
		t, _, handled, err := sc.constantTime(v)
		switch {
		case !handled:
			return time.Time{}, time.Time{}, fmt.Errorf("DATE(%s) compared with %s, not a constant date", col.Name, restore(v))
		case err != nil:
			return time.Time{}, time.Time{}, err
		case !t.Equal(t.Truncate(24 * time.Hour)):
			return time.Time{}, time.Time{}, fmt.Errorf("DATE(%s) compared with %s, a time past midnight", col.Name, restore(v))
		}
		return t, t.AddDate(0, 0, 1), nil
	}, true
}

// periodComparison converts YEAR(col) op v or DATE(col) op v (either side)
// to a range on col: = is the period [start, end), ≥ from its start, > from
// its end, < before its start, ≤ before its end. handled is false when
// neither side is such an expression.
func (sc *scope) periodComparison(site conditionSite, e *ast.BinaryOperationExpr) (c Condition, handled bool, err error) {
	side, other, op := e.L, e.R, e.Op
	col, of, ok := sc.period(side)
	if !ok {
		side, other, op = e.R, e.L, mirrored[e.Op]
		if col, of, ok = sc.period(side); !ok {
			return Condition{}, false, nil
		}
	}
	start, end, err := of(other)
	if err != nil {
		return Condition{}, true, site.refuse("%s", err.Error())
	}
	r := &Range{}
	lower := func(t time.Time) { r.setLower(columnBound(col, opcode.GE, t)) }
	upper := func(t time.Time) { r.setUpper(columnBound(col, opcode.LT, t)) }
	switch op {
	case opcode.GE:
		lower(start)
	case opcode.GT:
		lower(end)
	case opcode.LT:
		upper(start)
	case opcode.LE:
		upper(end)
	default: // = (and <>, which the caller negates)
		lower(start)
		upper(end)
	}
	return Condition{Column: col.Name, Temporal: col.Type, Range: r}, true, nil
}

// periodBetween converts YEAR(col) BETWEEN a AND b and DATE(col) BETWEEN
// a AND b to col from the start of a's period to the end of b's.
func (sc *scope) periodBetween(site conditionSite, e *ast.BetweenExpr) (c Condition, handled bool, err error) {
	col, of, ok := sc.period(e.Expr)
	if !ok {
		return Condition{}, false, nil
	}
	start, _, err := of(e.Left)
	if err != nil {
		return Condition{}, true, site.refuse("%s", err.Error())
	}
	_, end, err := of(e.Right)
	if err != nil {
		return Condition{}, true, site.refuse("%s", err.Error())
	}
	r := &Range{}
	r.setLower(columnBound(col, opcode.GE, start))
	r.setUpper(columnBound(col, opcode.LT, end))
	return Condition{Column: col.Name, Temporal: col.Type, Range: r}, true, nil
}
