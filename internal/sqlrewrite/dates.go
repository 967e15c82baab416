package sqlrewrite

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

// Date and timestamp columns (catalog.Date, catalog.Timestamp).
//
// Reading rule, the same on the three backends. A row's value is a date
// (or a timestamp: a wall-clock date and time) when it is
//
//   - SQLite: text spelling exactly an existing day 'YYYY-MM-DD' (date
//     columns) or 'YYYY-MM-DD HH:MM:SS' (timestamp columns), which its
//     date functions give back unchanged after normalising through the day
//     number: date(julianday(c)) = c, datetime(julianday(c)) = c (date(c)
//     alone keeps '2021-02-30' and '24:00:00' as written). Other text
//     ('2021-02-30', '2021-1-5', a 'T' separator, fractions, zones, hour
//     24), numbers and blobs are not dates;
//   - PostgreSQL: any non-NULL date or timestamp (±infinity, and years
//     outside [1000, 9999], are out of bounds);
//   - MariaDB: any non-NULL DATE or DATETIME with a month and a day that
//     exist, so the zero date '0000-00-00' and '2021-00-10' are not dates.
//
// A value that is not a date, or a date outside the column's declared
// bounds, is in no group of a date key (like a NULL), and a WHERE
// comparison holds only for dates. A value that is not a date is read as
// NULL throughout: col IS NULL holds for it (Condition.Temporal) and
// COUNT(col) skips it (SummaryTerm.Type), on MariaDB whether the
// column is NULL or NOT NULL (MariaDB's own col IS NULL finds the zero
// date only in a NOT NULL column). A timestamp is a wall-clock time: a
// column with a time zone (PostgreSQL timestamptz, MariaDB TIMESTAMP) is
// read in the backend session's time zone (backend.SessionTimeZone: UTC unless
// configured otherwise).

// DatePart is the part of a date that a date GROUP BY key computes.
type DatePart int

// The parts: calendar periods (Year, Month, Day: consecutive intervals of
// time) and cyclic components.
const (
	PartYear DatePart = iota + 1
	PartMonth
	PartDay
	PartMonthOfYear
	PartQuarterOfYear
	// PartDayOfWeek is 1 (Sunday) to 7 (Saturday), MySQL's DAYOFWEEK.
	PartDayOfWeek
	PartDayOfMonth
	// PartHourOfDay is 0 to 23, MySQL's HOUR, of a timestamp column.
	PartHourOfDay
	// PartHour is the calendar hour of a timestamp column (a period, as
	// PartDay), from DATE_FORMAT(col, '%Y-%m-%d %H').
	PartHour
	// PartWeekSunday and PartWeekMonday are the weeks starting on Sunday
	// (MySQL's DAYOFWEEK and YEARWEEK) or Monday (WEEKDAY), periods
	// labelled by their first day.
	PartWeekSunday
	PartWeekMonday
	// PartQuarter is the calendar quarter (a period), labelled by its
	// first day.
	PartQuarter
	// PartWeekOfYear is MySQL's WEEK(col) (mode 0, the server default):
	// 0 to 53, weeks from Sunday, week 1 the one of the year's first
	// Sunday, the days before it week 0. A cyclic component.
	PartWeekOfYear
	// PartDayOfYear is 1 to 366, MySQL's DAYOFYEAR. A cyclic component.
	PartDayOfYear
	// PartMinuteOfHour is 0 to 59, MySQL's MINUTE, of a timestamp column.
	// A cyclic component.
	PartMinuteOfHour
	// PartISOWeek is the ISO 8601 week, 1 to 53 (WEEK(col, 3),
	// WEEKOFYEAR(col)): weeks from Monday, week 1 the one holding the
	// year's first Thursday, so early January can be week 52 or 53 and
	// late December week 1. A cyclic component.
	PartISOWeek
	// PartMinute is the calendar minute of a timestamp column (a period,
	// as PartHour), from DATE_FORMAT(col, '%Y-%m-%d %H:%i').
	PartMinute
	// PartWeekOfYear6 is MySQL's WEEK(col, 6), 1 to 53: weeks from
	// Sunday, week 1 the one with at least four days in the year (its
	// Wednesday in it), so early January can be week 52 or 53 and late
	// December week 1, as ISO weeks from Monday. A cyclic component.
	PartWeekOfYear6
)

var partNames = map[DatePart]string{PartYear: "year", PartMonth: "month", PartDay: "day",
	PartMonthOfYear: "month of year", PartQuarterOfYear: "quarter", PartDayOfWeek: "day of week", PartDayOfMonth: "day of month", PartHourOfDay: "hour of day", PartHour: "hour",
	PartWeekSunday: "week from Sunday", PartWeekMonday: "week from Monday", PartQuarter: "quarter start",
	PartWeekOfYear: "week of year", PartISOWeek: "ISO week", PartDayOfYear: "day of year", PartMinuteOfHour: "minute of hour", PartMinute: "minute", PartWeekOfYear6: "week of year (mode 6)"}

// DateAxis is how a date key puts rows in cells: a row whose value is a
// date (the reading rule above) in [Lower, Upper] is in cell i when its
// Part is the i-th of the domain: for a period, the i-th period from the
// one holding Lower; for a component, Cycle[i]. Lower and Upper are
// whole numbers in the column's numbering (catalog: days or seconds):
// its bounds, or the part of them the WHERE allows (dateWindow).
type DateAxis struct {
	Type         catalog.ColumnType
	Part         DatePart
	Lower, Upper float64
	// UpperOpen, on a timestamp axis, leaves Upper out: the axis holds
	// [Lower, Upper), as a WHERE col < Upper does (the values just below
	// Upper may hold fractions of a second), and its last cell is the
	// one holding Upper − 1 s.
	UpperOpen bool
	// Cycle are the component values of the domain, for a cyclic part.
	Cycle []int
}

// last is the latest whole second (day) the axis holds.
func (a DateAxis) last() float64 {
	if a.UpperOpen {
		return a.Upper - 1
	}
	return a.Upper
}

// Dating is a GROUP BY key over a date or timestamp column: Axis puts
// rows in cells, and the key's Values label them as the client's
// expression does (YEAR(col) 2015, DATE_FORMAT(col, '%Y-%m') '2015-01',
// DATE(col) '2015-01-01', ...). The domain follows from the declared
// bounds, whatever the data: every period or component value within
// them, empty ones included.
type Dating struct {
	Column string
	Axis   DateAxis
	// Spelling identifies the key (column, part, labels), so that the
	// same expression in the select list and GROUP BY is one key.
	Spelling string
}

// Bare reports whether the key is the date column itself (GROUP BY col).
func (d *Dating) Bare() bool { return strings.HasSuffix(d.Spelling, "(column)") }

// String names the key in plans and warnings.
func (d *Dating) String() string {
	if d.Bare() {
		return d.Column
	}
	return d.Spelling
}

// Size is the number of cells: the periods from the one holding Lower to
// the one holding Upper, or the component values of Cycle.
func (a DateAxis) Size() int {
	if !a.Part.period() {
		return len(a.Cycle)
	}
	c := catalog.Column{Type: a.Type}
	lo, hi := c.TimeOf(a.Lower), c.TimeOf(a.last())
	switch a.Part {
	case PartYear:
		return hi.Year() - lo.Year() + 1
	case PartMonth:
		return (hi.Year()-lo.Year())*12 + int(hi.Month()) - int(lo.Month()) + 1
	case PartQuarter:
		return (hi.Year()-lo.Year())*4 + (int(hi.Month())-1)/3 - (int(lo.Month())-1)/3 + 1
	}
	if a.Part == PartHour {
		return int(periodStart(hi, PartHour).Sub(periodStart(lo, PartHour)).Hours()) + 1
	}
	if a.Part == PartMinute {
		return int(periodStart(hi, PartMinute).Sub(periodStart(lo, PartMinute)).Minutes()) + 1
	}
	if a.Part == PartWeekSunday || a.Part == PartWeekMonday {
		return int(periodStart(hi, a.Part).Sub(periodStart(lo, a.Part)).Hours()/24)/7 + 1
	}
	return int(periodStart(hi, PartDay).Sub(periodStart(lo, PartDay)).Hours()/24) + 1
}

// period reports whether the part is a calendar period (consecutive
// intervals of time) rather than a cyclic component.
func (p DatePart) period() bool {
	return p == PartYear || p == PartMonth || p == PartDay || p == PartHour || p == PartMinute || p == PartWeekSunday || p == PartWeekMonday || p == PartQuarter
}

// DateCell selects the rows in cell Index of a date axis.
type DateCell struct {
	Axis  DateAxis
	Index int
}

// nearestDateForms names the supported date keys in refusals.
const nearestDateForms = "the supported date keys are YEAR(col), MONTH(col), QUARTER(col), WEEK(col), WEEK(col, 3) or WEEKOFYEAR(col) and WEEK(col, 6) (plus a number too), YEARWEEK(col) and YEARWEEK(col, 3), DAYOFWEEK(col), DAYOFMONTH(col), DAYOFYEAR(col), HOUR(col) and MINUTE(col) of a timestamp, DATE(col) or CAST(col AS DATE), EXTRACT(YEAR|MONTH|QUARTER|DAY|HOUR|YEAR_MONTH FROM col), YEAR(col) * 100 + MONTH(col), " +
	"DATE_FORMAT(col, f) with f of %Y, %m, %d, %H and %i (hours and minutes of a timestamp) and literals (e.g. '%Y-%m', '%Y-%m-01'), and CAST(... AS DATE), DATE(...), STR_TO_DATE(..., '%Y-%m-%d') of those, " +
	"weeks as DATE(DATE_SUB(col, INTERVAL DAYOFWEEK(col) - 1 DAY)) or DATE(DATE_SUB(col, INTERVAL WEEKDAY(col) DAY)), quarters as Metabase and Superset spell their first day, and months, years, weeks, hours and minutes as Metabase, Superset and Looker spell them"

// dateKey is a recognised date key before it is added: the axis and a
// label per cell, with the spelling's label kind.
type dateKey struct {
	col   *catalog.Column
	part  DatePart
	label func(start time.Time) Value
	kind  string
	// shift is the day a label that is a day names: shift days after
	// the period's first (the Saturday ending a week from Sunday is 6).
	shift int
	// add is added to a cyclic component's value in its label
	// (Metabase's week of the year WEEK(col, 6) + 1).
	add int
}

// dating recognises a date GROUP BY key; ok is false when e is no date
// function of a column (the caller's other rules apply), and err says why
// a date expression cannot be a key.
func (sc *scope) dating(e ast.ExprNode) (d *Dating, labels []Value, ok bool, err error) {
	e = unparen(e)
	if _, isCol := e.(*ast.ColumnNameExpr); isCol || containsNode(e, isAggregate) || !sc.mentionsDate(e) {
		return nil, nil, false, nil
	}
	k, err := sc.dateKeyOf(e)
	if err != nil {
		return nil, nil, true, err
	}
	d, labels, err = k.domain(restore(e), sc.dateWindow(k.col))
	return d, labels, true, err
}

// dateWindow is the part of a date or timestamp column's bounds that the
// WHERE's conjunction allows (scope.whereRange), as an axis holds it:
// whole days, both ends closed, on a date column; on a timestamp column
// the whole seconds from the lower end on (an open or fractional lower
// end taken at or below it), to the upper end closed, or open as the
// WHERE's. A row the WHERE keeps and the bounds hold is then in the
// window, and a row outside it fails the WHERE: a date key over the
// window has the same groups for the rows counted, without the periods
// of the bounds that no such row can reach (WHERE col >= CURDATE() -
// INTERVAL 7 DAY GROUP BY DATE(col) answers seven days, not every day of
// the bounds). Nil when the WHERE does not narrow the bounds, or leaves
// nothing of them (every group is then answered, empty).
func (sc *scope) dateWindow(col *catalog.Column) *DateAxis {
	rg, ok := sc.whereRange(col.Name)
	if !ok || !col.Temporal() || col.Lower == nil || col.Upper == nil {
		return nil
	}
	w := DateAxis{Lower: *col.Lower, Upper: *col.Upper}
	if rg.HasLower {
		lo := math.Floor(rg.Lower)
		if col.Type == catalog.Date && (rg.Lower != lo || rg.LowerOpen) {
			lo++ // the next whole day
		}
		w.Lower = math.Max(w.Lower, lo)
	}
	if rg.HasUpper && rg.Upper <= w.Upper {
		hi := math.Ceil(rg.Upper)
		switch {
		case col.Type == catalog.Date:
			if hi = math.Floor(rg.Upper); rg.UpperOpen && hi == rg.Upper {
				hi-- // the day before
			}
		case rg.UpperOpen && hi == rg.Upper:
			w.UpperOpen = true
		}
		w.Upper = hi
	}
	if w.UpperOpen && !(w.Lower < w.Upper) || !(w.Lower <= w.Upper) || w.Lower == *col.Lower && w.Upper == *col.Upper && !w.UpperOpen {
		return nil
	}
	return &w
}

// domain computes the key's cells and labels from the column's bounds, or
// the window of them the WHERE allows (dateWindow, if not nil): every
// period or component value within them.
func (k *dateKey) domain(text string, window *DateAxis) (d *Dating, labels []Value, err error) {
	axis := DateAxis{Type: k.col.Type, Part: k.part, Lower: *k.col.Lower, Upper: *k.col.Upper}
	if window != nil {
		axis.Lower, axis.Upper, axis.UpperOpen = window.Lower, window.Upper, window.UpperOpen
	}
	lo, hi := k.col.TimeOf(axis.Lower), k.col.TimeOf(axis.last())
	switch k.part {
	case PartYear, PartMonth, PartDay, PartHour, PartMinute, PartWeekSunday, PartWeekMonday, PartQuarter:
		first, last := periodStart(lo, k.part), periodStart(hi, k.part)
		if k.part == PartDay {
			if n := int(last.Sub(first).Hours()/24) + 1; n > catalog.MaxGroups {
				return nil, nil, refuseQuery("GROUP BY %s: %d days between the bounds of %s, more than %d groups; group by DATE_FORMAT(%s, '%%Y-%%m') or YEAR(%s)", text, n, k.col.Name, catalog.MaxGroups, k.col.Name, k.col.Name)
			}
		}
		if k.part == PartHour {
			if k.col.Type != catalog.Timestamp {
				return nil, nil, refuseQuery("GROUP BY %s: %s is a date column, whose hour is always 0", text, k.col.Name)
			}
			if n := int(last.Sub(first).Hours()) + 1; n > catalog.MaxGroups {
				return nil, nil, refuseQuery("GROUP BY %s: %d hours between the bounds of %s, more than %d groups; narrow the bounds, or group by DATE(%s) or HOUR(%s)", text, n, k.col.Name, catalog.MaxGroups, k.col.Name, k.col.Name)
			}
		}
		if k.part == PartMinute {
			if n := int(last.Sub(first).Minutes()) + 1; n > catalog.MaxGroups {
				return nil, nil, refuseQuery("GROUP BY %s: %d minutes between the bounds of %s, more than %d groups; narrow the bounds, or group by hours or MINUTE(%s)", text, n, k.col.Name, catalog.MaxGroups, k.col.Name)
			}
		}
		for t := first; !t.After(last); t = nextPeriod(t, k.part) {
			labels = append(labels, k.label(t))
		}
	case PartHourOfDay, PartMinuteOfHour:
		// The clock parts of a timestamp: every value its bounds reach.
		unit, count, name, of := time.Hour, 24, "hour", time.Time.Hour
		if k.part == PartMinuteOfHour {
			unit, count, name, of = time.Minute, 60, "minute", time.Time.Minute
		}
		if k.col.Type != catalog.Timestamp {
			return nil, nil, refuseQuery("GROUP BY %s: %s is a date column, whose %s is always 0", text, k.col.Name, name)
		}
		at := lo.Truncate(unit)
		for i := 0; i < count && !at.After(hi); i++ {
			axis.Cycle = append(axis.Cycle, of(at))
			at = at.Add(unit)
		}
		slices.Sort(axis.Cycle)
		for _, v := range axis.Cycle {
			labels = append(labels, Value{Num: float64(v)})
		}
	default:
		// Every value occurs within 400 days, but for the weeks of the
		// year: week 53 only in some years, so every day is visited.
		days := 400
		if k.part == PartWeekOfYear || k.part == PartISOWeek || k.part == PartWeekOfYear6 || k.part == PartDayOfYear {
			days = math.MaxInt // week 53 and day 366 only in some years
		}
		seen := map[int]bool{}
		day := periodStart(lo, PartDay)
		for i := 0; i < days && !day.After(hi); i++ {
			seen[component(day, k.part)] = true
			day = day.AddDate(0, 0, 1)
			if len(seen) == 366 {
				break
			}
		}
		for v := 0; v <= 366; v++ {
			if seen[v] {
				axis.Cycle = append(axis.Cycle, v)
				labels = append(labels, Value{Num: float64(v + k.add)})
			}
		}
	}
	return &Dating{Column: k.col.Name, Axis: axis, Spelling: fmt.Sprintf("%s of %s (%s)", partNames[k.part], k.col.Name, k.kind)}, labels, nil
}

// columnDating is the key of a date column itself (GROUP BY col): its
// days, labelled 'YYYY-MM-DD', as DATE(col), within the window (the
// bounds if nil).
func columnDating(col *catalog.Column, window *DateAxis) (*Dating, []Value, error) {
	k := &dateKey{col: col, part: PartDay, kind: "column", label: dateLabel(false)}
	return k.domain(col.Name, window)
}

// mentionsDate reports whether e refers to a date or timestamp column.
func (sc *scope) mentionsDate(e ast.ExprNode) bool {
	return containsNode(e, func(n ast.Node) bool {
		c, ok := n.(*ast.ColumnNameExpr)
		if !ok {
			return false
		}
		col, err := sc.column(c.Name, "group statement")
		return err == nil && col.Temporal()
	})
}

// dateColumn returns the date or timestamp column e names.
func (sc *scope) dateColumn(e ast.ExprNode) (*catalog.Column, bool) {
	c, ok := unparen(e).(*ast.ColumnNameExpr)
	if !ok {
		return nil, false
	}
	col, err := sc.column(c.Name, "group statement")
	if err != nil || !col.Temporal() {
		return nil, false
	}
	return col, true
}

func numberLabel(f func(time.Time) int) func(time.Time) Value {
	return func(t time.Time) Value { return Value{Num: float64(f(t))} }
}

// dateLabel labels a period by its first day as a date (DATE(col), a date
// column, CAST(... AS DATE)) or, with dateTime, as a timestamp at
// midnight (TIMESTAMP(...), CAST(... AS DATETIME)): values MySQL types
// DATE and DATETIME.
func dateLabel(dateTime bool) func(time.Time) Value {
	if dateTime {
		return func(t time.Time) Value {
			return Value{Str: t.Format(time.DateTime), IsText: true, Temporal: catalog.Timestamp}
		}
	}
	return func(t time.Time) Value {
		return Value{Str: t.Format(time.DateOnly), IsText: true, Temporal: catalog.Date}
	}
}

// dateKeyOf recognises the shapes of date keys.
func (sc *scope) dateKeyOf(e ast.ExprNode) (*dateKey, error) {
	refuse := func() error {
		return refuseRows("GROUP BY the date expression %s (its groups are not declared); %s", restore(e), nearestDateForms)
	}
	switch x := unparen(e).(type) {
	case *ast.FuncCallExpr:
		name := x.FnName.L
		simple := map[string]DatePart{"year": PartYear, "month": PartMonthOfYear, "quarter": PartQuarterOfYear,
			"dayofweek": PartDayOfWeek, "dayofmonth": PartDayOfMonth, "day": PartDayOfMonth, "date": PartDay, "hour": PartHourOfDay,
			"dayofyear": PartDayOfYear, "minute": PartMinuteOfHour}
		if part, isSimple := simple[name]; isSimple && len(x.Args) == 1 {
			if col, isCol := sc.dateColumn(x.Args[0]); isCol {
				k := &dateKey{col: col, part: part, kind: name}
				switch part {
				case PartYear:
					k.label = numberLabel(time.Time.Year)
				case PartDay:
					k.label = dateLabel(false)
				}
				return k, nil
			}
		}
		if k, ok, err := sc.weekNumber(x); ok {
			return k, err
		}
		if k, ok, err := sc.yearWeek(x); ok {
			return k, err
		}
		if k, ok := sc.supersetQuarter(x); ok {
			return k, nil
		}
		if k, ok := sc.lookerQuarter(x); ok {
			return k, nil
		}
		if k, ok := sc.makeDate(x); ok {
			return k, nil
		}
		if k, ok := sc.clockOf(x); ok {
			return k, nil
		}
		if k, ok := sc.weekShift(x); ok && k.col.Type == catalog.Date { // of a timestamp, the time of day stays
			return k, nil
		}
		if k, ok, err := sc.dayShift(x); ok {
			return k, err
		}
		switch name {
		case "concat":
			if k, ok, err := sc.formatConcat(x, e); ok {
				return k, err
			}
		case "extract":
			if len(x.Args) != 2 {
				return nil, refuse()
			}
			unit, isUnit := x.Args[0].(*ast.TimeUnitExpr)
			col, isCol := sc.dateColumn(x.Args[1])
			if !isUnit || !isCol {
				return nil, refuse()
			}
			switch unit.Unit {
			case ast.TimeUnitYear:
				return &dateKey{col: col, part: PartYear, kind: "extract year", label: numberLabel(time.Time.Year)}, nil
			case ast.TimeUnitMonth:
				return &dateKey{col: col, part: PartMonthOfYear, kind: "extract month"}, nil
			case ast.TimeUnitQuarter:
				return &dateKey{col: col, part: PartQuarterOfYear, kind: "extract quarter"}, nil
			case ast.TimeUnitDay:
				return &dateKey{col: col, part: PartDayOfMonth, kind: "extract day"}, nil
			case ast.TimeUnitHour:
				return &dateKey{col: col, part: PartHourOfDay, kind: "extract hour"}, nil
			case ast.TimeUnitMinute:
				return &dateKey{col: col, part: PartMinuteOfHour, kind: "extract minute"}, nil
			case ast.TimeUnitYearMonth:
				return yearMonthKey(col), nil
			}
			return nil, refuse()
		case "date_format":
			if len(x.Args) != 2 {
				return nil, refuse()
			}
			col, isCol := sc.dateColumn(x.Args[0])
			f, isLit := literal(x.Args[1])
			if !isLit || !f.IsText {
				return nil, refuse()
			}
			if !isCol {
				return sc.formatOfKey(x.Args[0], f.Str, e)
			}
			return formatKey(col, f.Str, e)
		case "date", "timestamp":
			if len(x.Args) != 1 {
				return nil, refuse()
			}
			if k, ok := sc.superset(x.Args[0]); ok && name == "date" {
				return k, nil
			}
			if k, ok := sc.weekShift(x.Args[0]); ok && name == "date" {
				return k, nil
			}
			if col, isCol := sc.dateColumn(x.Args[0]); isCol {
				return columnCast(col, name == "timestamp", e)
			}
			return sc.dateCast(x.Args[0], name == "timestamp", e)
		case "str_to_date":
			if len(x.Args) != 2 {
				return nil, refuse()
			}
			f, isLit := literal(x.Args[1])
			if k, ok := sc.formatReadBack(x.Args[0], f); ok { // Metabase's hour: the same format both ways
				return k, nil
			}
			if k, ok := sc.yearWeekSunday(x.Args[0], f); ok {
				return k, nil
			}
			if k, ok := sc.metabaseQuarter(x.Args[0], f); ok {
				return k, nil
			}
			if !isLit || !f.IsText || f.Str != "%Y-%m-%d" && f.Str != "%Y-%m-%d %H:%i:%s" && f.Str != "%Y-%m-%d %T" {
				return nil, refuse()
			}
			return sc.dateCast(x.Args[0], f.Str != "%Y-%m-%d", e)
		}
	case *ast.FuncCastExpr:
		datetime := false
		switch x.Tp.GetType() {
		case mysql.TypeDate:
		case mysql.TypeDatetime, mysql.TypeTimestamp:
			datetime = true
		default:
			return nil, refuse()
		}
		if col, isCol := sc.dateColumn(x.Expr); isCol {
			return columnCast(col, datetime, e)
		}
		return sc.dateCast(x.Expr, datetime, e)
	case *ast.BinaryOperationExpr:
		// YEAR(col) * 100 + MONTH(col) and YEAR(col) * 10 + QUARTER(col),
		// either order of the sum.
		if x.Op != opcode.Plus {
			return nil, refuse()
		}
		if k, ok, err := sc.componentPlus(x); ok {
			return k, err
		}
		for _, p := range [][2]ast.ExprNode{{x.L, x.R}, {x.R, x.L}} {
			m, isMul := unparen(p[0]).(*ast.BinaryOperationExpr)
			if !isMul || m.Op != opcode.Mul {
				continue
			}
			y, month, quarter := dateFunc(m.L, "year"), dateFunc(p[1], "month"), dateFunc(p[1], "quarter")
			if c, isNum := literal(m.R); isNum && !c.IsText && c.Num == 100 && y != nil && month != nil {
				col, isCol := sc.dateColumn(y)
				other, isOther := sc.dateColumn(month)
				if isCol && isOther && col == other {
					return yearMonthKey(col), nil
				}
			}
			// Tableau's YEAR(col) * 10 + QUARTER(col): 20241 for 2024 Q1.
			if c, isNum := literal(m.R); isNum && !c.IsText && c.Num == 10 && y != nil && quarter != nil {
				col, isCol := sc.dateColumn(y)
				other, isOther := sc.dateColumn(quarter)
				if isCol && isOther && col == other {
					return &dateKey{col: col, part: PartQuarter, kind: "yyyyq", label: numberLabel(func(t time.Time) int { return t.Year()*10 + (int(t.Month())+2)/3 })}, nil
				}
			}
		}
	}
	return nil, refuse()
}

// dateFunc returns the argument of name(arg), or nil.
func dateFunc(e ast.ExprNode, name string) ast.ExprNode {
	f, ok := unparen(e).(*ast.FuncCallExpr)
	if !ok || f.FnName.L != name || len(f.Args) != 1 {
		return nil
	}
	return f.Args[0]
}

// yearMonthKey is the month key labelled yyyymm (201501), as
// EXTRACT(YEAR_MONTH FROM col) and YEAR(col) * 100 + MONTH(col) give it.
func yearMonthKey(col *catalog.Column) *dateKey {
	return &dateKey{col: col, part: PartMonth, kind: "yyyymm", label: numberLabel(func(t time.Time) int { return t.Year()*100 + int(t.Month()) })}
}

// formatKey is DATE_FORMAT(col, f): f may use %Y, %m and %d (and %%)
// among literal characters, with %Y, and %m if %d: the label is then
// constant on each year, month or day (the finest specifier) and tells
// the periods apart.
func formatKey(col *catalog.Column, f string, e ast.ExprNode) (*dateKey, error) {
	has := map[byte]bool{}
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c != '%' {
			if strings.ContainsRune("0123456789-/ :._T", rune(c)) {
				continue
			}
			return nil, refuseQuery("GROUP BY %s: the format has the character %q; DATE_FORMAT keys use %%Y, %%m, %%d, digits and - / : . _ T or spaces (%s)", restore(e), c, nearestDateForms)
		}
		if i+1 == len(f) {
			return nil, refuseQuery("GROUP BY %s: the format ends with %%", restore(e))
		}
		i++
		switch f[i] {
		case 'Y', 'm', 'd', 'H', 'i', '%':
		default:
			return nil, refuseQuery("GROUP BY %s: the format specifier %%%c (DATE_FORMAT keys use %%Y, %%m, %%d, %%H and %%i: years, months, days, hours or minutes; weeks and names are not supported; %s)", restore(e), f[i], nearestDateForms)
		}
		has[f[i]] = true
	}
	if !has['Y'] || has['d'] && !has['m'] || has['H'] && !has['d'] || has['i'] && !has['H'] {
		return nil, refuseQuery("GROUP BY %s: a DATE_FORMAT key needs %%Y, %%m with %%d, %%d with %%H and %%H with %%i, to tell its periods apart (%s)", restore(e), nearestDateForms)
	}
	part := PartYear
	switch {
	case has['H'] && col.Type == catalog.Date:
		part = PartDay // a date's hour and minute are 0: one group per day, labelled at 00
	case has['i']:
		part = PartMinute
	case has['H']:
		part = PartHour
	case has['d']:
		part = PartDay
	case has['m']:
		part = PartMonth
	}
	return &dateKey{col: col, part: part, kind: "format " + f, label: func(t time.Time) Value {
		return Value{Str: dateFormat(f, t), IsText: true}
	}}, nil
}

// dateFormat is MySQL's DATE_FORMAT(t, f) for the specifiers %Y, %m, %d,
// %H and %% that formatKey admits (a year in [1000, 9999] has four
// digits).
func dateFormat(f string, t time.Time) string {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 == len(f) {
			b.WriteByte(f[i])
			continue
		}
		i++
		switch f[i] {
		case 'Y':
			fmt.Fprintf(&b, "%04d", t.Year())
		case 'm':
			fmt.Fprintf(&b, "%02d", int(t.Month()))
		case 'd':
			fmt.Fprintf(&b, "%02d", t.Day())
		case 'H':
			fmt.Fprintf(&b, "%02d", t.Hour())
		case 'i':
			fmt.Fprintf(&b, "%02d", t.Minute())
		default:
			b.WriteByte(f[i])
		}
	}
	return b.String()
}

// columnCast is CAST(col AS DATE) (older Metabase's day) of a date or
// timestamp column: its days, as DATE(col), with the same labels (the
// same key, typed DATE); and CAST(col AS DATETIME) or TIMESTAMP(col)
// (datetime) of a date column: its days labelled as datetimes at
// midnight, MySQL's value. Of a timestamp column the latter is the
// timestamp itself, to the second, whose values are not declared.
func columnCast(col *catalog.Column, datetime bool, e ast.ExprNode) (*dateKey, error) {
	switch {
	case !datetime:
		return &dateKey{col: col, part: PartDay, kind: "date", label: dateLabel(false)}, nil
	case col.Type == catalog.Date:
		return &dateKey{col: col, part: PartDay, kind: "datetime", label: dateLabel(true)}, nil
	}
	return nil, refuseRows("GROUP BY %s, the timestamp column %s to the second (its values are not declared); group by DATE(%s) or CAST(%s AS DATE), DATE_FORMAT(%s, '%%Y-%%m-%%d %%H:00'), or UNIX_TIMESTAMP(%s) DIV w * w", restore(e), col.Name, col.Name, col.Name, col.Name, col.Name)
}

// dateCast is CAST(k AS DATE) (datetime: AS DATETIME), DATE(k),
// TIMESTAMP(k) or STR_TO_DATE(k, '%Y-%m-%d') of a text-labelled date key k
// whose labels spell its periods' first days ('%Y-%m-01'): the labels
// become those days as dates (datetimes at midnight).
func (sc *scope) dateCast(inner ast.ExprNode, datetime bool, e ast.ExprNode) (*dateKey, error) {
	k, err := sc.dateKeyOf(inner)
	if err != nil {
		return nil, err
	}
	if k.label == nil || !k.label(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).IsText {
		return nil, refuseQuery("GROUP BY %s: only a DATE_FORMAT key that spells the first day of its periods (such as '%%Y-%%m-01') converts to a date (%s)", restore(e), nearestDateForms)
	}
	// The label must read back as the first day of the period, for every
	// period: checked on the periods of four years (every month and day
	// shape, a leap year included).
	for t := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC); t.Year() < 2027; t = nextPeriod(t, k.part) {
		s := k.label(t).Str
		d, perr := time.Parse(time.DateOnly, s)
		if perr != nil {
			d, perr = time.Parse(time.DateTime, s)
		}
		if perr != nil || !d.Equal(t.AddDate(0, 0, k.shift)) {
			return nil, refuseQuery("GROUP BY %s: only a DATE_FORMAT key that spells the first day of its periods (such as '%%Y-%%m-01') converts to a date (%s)", restore(e), nearestDateForms)
		}
	}
	kind := "date"
	if datetime {
		kind = "datetime"
	}
	k.label, k.kind = shiftedDateLabel(datetime, k.shift), k.kind+" as "+kind
	return k, nil
}

// superset recognises Superset's MySQL time grains
// DATE_SUB(col, INTERVAL DAYOFMONTH(col) - 1 DAY) (the month's first day)
// and DATE_SUB(col, INTERVAL DAYOFYEAR(col) - 1 DAY) (the year's), inside
// DATE(...).
func (sc *scope) superset(e ast.ExprNode) (*dateKey, bool) {
	f, ok := unparen(e).(*ast.FuncCallExpr)
	if !ok || f.FnName.L != "date_sub" || len(f.Args) != 3 {
		return nil, false
	}
	col, isCol := sc.dateColumn(f.Args[0])
	unit, isUnit := f.Args[2].(*ast.TimeUnitExpr)
	if !isCol || !isUnit || unit.Unit != ast.TimeUnitDay {
		return nil, false
	}
	if arg := dateFunc(f.Args[1], "weekday"); arg != nil { // the week from Monday
		if other, ok := sc.dateColumn(arg); ok && other == col {
			return &dateKey{col: col, part: PartWeekMonday, kind: "superset weekday", label: dateLabel(false)}, true
		}
	}
	n, isDiff := unparen(f.Args[1]).(*ast.BinaryOperationExpr)
	if !isDiff || n.Op != opcode.Minus {
		return nil, false
	}
	if one, isNum := literal(n.R); !isNum || one.IsText || one.Num != 1 {
		return nil, false
	}
	for name, part := range map[string]DatePart{"dayofmonth": PartMonth, "dayofyear": PartYear, "dayofweek": PartWeekSunday} {
		if arg := dateFunc(n.L, name); arg != nil {
			if other, ok := sc.dateColumn(arg); ok && other == col {
				return &dateKey{col: col, part: part, kind: "superset " + name, label: dateLabel(false)}, true
			}
		}
	}
	return nil, false
}

// periodStart is the first day of t's period.
func periodStart(t time.Time, p DatePart) time.Time {
	switch p {
	case PartYear:
		return time.Date(t.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
	case PartMonth:
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	case PartQuarter:
		return time.Date(t.Year(), t.Month()-(t.Month()-1)%3, 1, 0, 0, 0, 0, time.UTC)
	case PartHour:
		return t.Truncate(time.Hour)
	case PartMinute:
		return t.Truncate(time.Minute)
	case PartWeekSunday, PartWeekMonday:
		back := int(t.Weekday()) // days since Sunday
		if p == PartWeekMonday {
			back = (back + 6) % 7
		}
		return time.Date(t.Year(), t.Month(), t.Day()-back, 0, 0, 0, 0, time.UTC)
	}
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

func nextPeriod(t time.Time, p DatePart) time.Time {
	switch p {
	case PartYear:
		return t.AddDate(1, 0, 0)
	case PartMonth:
		return t.AddDate(0, 1, 0)
	case PartQuarter:
		return t.AddDate(0, 3, 0)
	case PartHour:
		return t.Add(time.Hour)
	case PartMinute:
		return t.Add(time.Minute)
	case PartWeekSunday, PartWeekMonday:
		return t.AddDate(0, 0, 7)
	}
	return t.AddDate(0, 0, 1)
}

// weekNumber recognises the week of the year: WEEK(col) and WEEK(col, 0)
// (MySQL's default mode, with the server's default_week_format at its
// default 0), WEEK(col, 3) and WEEKOFYEAR(col) (ISO weeks); ok is false
// for other functions, and another mode is refused.
func (sc *scope) weekNumber(x *ast.FuncCallExpr) (k *dateKey, ok bool, err error) {
	name := x.FnName.L
	if name != "week" && name != "weekofyear" || len(x.Args) < 1 || len(x.Args) > 2 || name == "weekofyear" && len(x.Args) != 1 {
		return nil, false, nil
	}
	col, isCol := sc.dateColumn(x.Args[0])
	if !isCol {
		return nil, false, nil
	}
	part := PartWeekOfYear
	if name == "weekofyear" {
		part = PartISOWeek
	}
	if len(x.Args) == 2 {
		m, isLit := literal(x.Args[1])
		switch {
		case isLit && !m.IsText && !m.Null && m.Num == 0:
		case isLit && !m.IsText && !m.Null && m.Num == 3:
			part = PartISOWeek
		case isLit && !m.IsText && !m.Null && m.Num == 6:
			part = PartWeekOfYear6
		default:
			return nil, true, refuseQuery("GROUP BY %s: WEEK modes other than 0 (weeks from Sunday, the default), 3 (ISO weeks, WEEKOFYEAR) and 6 (weeks from Sunday, week 1 the first with four days in the year)", restore(x))
		}
	}
	return &dateKey{col: col, part: part, kind: name}, true, nil
}

// yearWeek recognises YEARWEEK(col) and YEARWEEK(col, 0) (weeks from
// Sunday, week 1 the one of the year's first Sunday, the days before it
// in the previous year's last week) and YEARWEEK(col, 3) (ISO weeks, in
// the ISO year): a week period, labelled by its year and week as the
// integer yyyyww, which all its days share. ok is false for other
// functions, and another mode is refused.
func (sc *scope) yearWeek(x *ast.FuncCallExpr) (k *dateKey, ok bool, err error) {
	if x.FnName.L != "yearweek" || len(x.Args) < 1 || len(x.Args) > 2 {
		return nil, false, nil
	}
	col, isCol := sc.dateColumn(x.Args[0])
	if !isCol {
		return nil, false, nil
	}
	k = &dateKey{col: col, part: PartWeekSunday, kind: "yearweek number", label: func(sunday time.Time) Value {
		return Value{Num: float64(sunday.Year()*100 + (sunday.YearDay()-1)/7 + 1)}
	}}
	if len(x.Args) == 2 {
		m, isLit := literal(x.Args[1])
		switch {
		case isLit && !m.IsText && !m.Null && m.Num == 0:
		case isLit && !m.IsText && !m.Null && m.Num == 3:
			k.part, k.kind, k.label = PartWeekMonday, "yearweek iso", func(monday time.Time) Value {
				y, w := monday.ISOWeek()
				return Value{Num: float64(y*100 + w)}
			}
		default:
			return nil, true, refuseQuery("GROUP BY %s: YEARWEEK modes other than 0 (weeks from Sunday, the default) and 3 (ISO weeks)", restore(x))
		}
	}
	return k, true, nil
}

// component is a cyclic part of day t.
func component(t time.Time, p DatePart) int {
	switch p {
	case PartMonthOfYear:
		return int(t.Month())
	case PartQuarterOfYear:
		return (int(t.Month()) + 2) / 3
	case PartDayOfWeek:
		return int(t.Weekday()) + 1
	case PartWeekOfYear:
		// The week's Sunday is day YearDay − weekday of the year; it is
		// the k-th Sunday when that is 7(k − 1) + s with s ∈ [1, 7],
		// and before day 1 (week 0) otherwise.
		return (t.YearDay() - int(t.Weekday()) + 6) / 7
	case PartISOWeek:
		_, w := t.ISOWeek()
		return w
	case PartWeekOfYear6:
		// The week of its Wednesday, counted from that year's first.
		wednesday := t.AddDate(0, 0, 3-int(t.Weekday()))
		return (wednesday.YearDay()-1)/7 + 1
	case PartDayOfYear:
		return t.YearDay()
	}
	return t.Day()
}

// dateKeyIndex returns the key of a dating, adding it if new.
func (qb *queryBuilder) dateKeyIndex(d *Dating, labels []Value) int {
	for i, k := range qb.q.Keys {
		if k.Date != nil && k.Date.Spelling == d.Spelling {
			return i
		}
	}
	qb.q.Keys = append(qb.q.Keys, GroupKey{Column: d.Column, Date: d, Values: labels})
	return len(qb.q.Keys) - 1
}

// dateExpr is the key of a date expression in the select list, HAVING or
// ORDER BY; ok is false when e is not the expression of a date key of the
// query (it may be post-processing of such keys: YEAR(col) * 100 +
// MONTH(col) over the keys YEAR(col) and MONTH(col), a CASE over one).
func (qb *queryBuilder) dateExpr(e ast.ExprNode) (*Expr, bool) {
	d, _, ok, err := qb.sc.dating(e)
	if !ok || err != nil {
		return nil, false
	}
	for i, k := range qb.q.Keys {
		if k.Date != nil && k.Date.Spelling == d.Spelling {
			return &Expr{Kind: ExprKey, Index: i}, true
		}
	}
	return nil, false
}

// The rendering of date keys and conditions.

// dateReadable renders the reading rule's "the value is a date".
func (r *renderer) dateReadable(col string, typ catalog.ColumnType) string {
	switch {
	case r.spec.name == "sqlite" && typ == catalog.Date:
		return "(typeof(" + col + ") = 'text' AND date(julianday(" + col + ")) = " + col + ")"
	case r.spec.name == "sqlite":
		return "(typeof(" + col + ") = 'text' AND datetime(julianday(" + col + ")) = " + col + ")"
	case r.spec.name == "mysql":
		return "(DAYOFMONTH(" + col + ") BETWEEN 1 AND DAYOFMONTH(LAST_DAY(" + col + ")))"
	}
	return col + " IS NOT NULL"
}

// dateKnown is dateReadable as a two-valued condition, TRUE or FALSE on
// every row (nullCondition's readable): dateReadable is NULL on SQLite
// text that spells no day and on a MariaDB date of month 0, where a NOT
// of it would be NULL too.
func (r *renderer) dateKnown(col string, typ catalog.ColumnType) string {
	if r.spec.name == "postgres" {
		return r.dateReadable(col, typ)
	}
	return "(" + r.dateReadable(col, typ) + " IS TRUE)"
}

// dateOrNull renders a date or timestamp column's value where the reading
// rule reads a date, NULL elsewhere: what COUNT(col) and COUNT(DISTINCT
// col) count (valueOrNull).
func (r *renderer) dateOrNull(col string, typ catalog.ColumnType) string {
	if r.spec.name == "postgres" {
		return col
	}
	return "CASE WHEN " + r.dateReadable(col, typ) + " THEN " + col + " END"
}

// dateValue renders a day or second number of a column of type typ as a
// literal: fixed-shape text the proxy writes from a number (no client
// text), typed DATE or TIMESTAMP except on SQLite, which compares text.
func (r *renderer) dateValue(typ catalog.ColumnType, x float64) string {
	return r.dateBound(typ, x, 0)
}

// dateBound is dateValue of the second x plus micros microseconds (a
// range's end, Range.LowerMicros): on SQLite, whose timestamps are text
// of whole seconds, '2024-01-01 00:00:05' sorts below
// '2024-01-01 00:00:05.250000', as the instants do.
func (r *renderer) dateBound(typ catalog.ColumnType, x float64, micros int32) string {
	c := catalog.Column{Type: typ}
	s := c.FormatTemporalMicros(x, micros)
	switch {
	case r.spec.name == "sqlite":
		return "'" + s + "'"
	case typ == catalog.Date:
		return "DATE '" + s + "'"
	}
	return "TIMESTAMP '" + s + "'"
}

// wallClock renders a date or timestamp column as the value the proxy's
// comparisons and arithmetic read: on PostgreSQL its wall-clock time in
// the session's time zone, CAST(c AS TIMESTAMP) (CAST(c AS DATE) for a
// date), a no-op on a column of that type; elsewhere the column. Compared
// raw, a timestamptz meets a TIMESTAMP literal converted to an instant,
// and a literal in a daylight-saving gap (02:30 on a spring-forward day)
// converts to a later instant than one after the gap (03:15): ranges
// disjoint on the clock would share rows, and a value clamped at a bound
// in the gap would read beyond it.
//
// The cast fails on values PostgreSQL stores but cannot convert: a date
// past 294276 AD read as a timestamp, or a timestamptz within a day of
// the timestamp range's ends read in a zone that moves it out of the
// range. One such row would make every statement on the column fail, a
// failure depending on the data, so the value is first clamped, in the
// column's own type, to [pgSafeLow, pgSafeHigh]: a year beyond every
// bound and literal the proxy writes (years 1000 to 9999,
// catalog.ParseTemporal), so that every comparison with one of them, and
// with it every range, cell guard and clamp, reads as on the raw value
// (±infinity included), and well inside every backend type's range in
// any zone. Arithmetic on the raw value happens only in branches guarded
// by such comparisons to lie within the column's bounds.
func (r *renderer) wallClock(col string, typ catalog.ColumnType) string {
	if r.spec.name != "postgres" {
		return col
	}
	// The first branch, never taken (the planner drops it), types the
	// CASE: a date, a timestamp and a timestamptz each meet a DATE in
	// their own type, which the untyped literals then take too (read in
	// the session's zone), and every other type (text) in none, an error
	// whatever the rows. A column declared a date but of type text in the
	// backend (created or altered after the proxy started) was compared
	// as text, so 'garbage' read as the upper bound and a row in range
	// that held no date ('1000-99-99') made the cast, and the statement,
	// fail only on the neighbour holding it. (Comparing with DATE
	// literals instead would convert a timestamptz per row: 40% slower.)
	safe := "CASE WHEN FALSE THEN CAST(NULL AS DATE) WHEN " + col + " < '" + pgSafeLow + "' THEN '" + pgSafeLow + "' WHEN " + col + " > '" + pgSafeHigh +
		"' THEN '" + pgSafeHigh + "' ELSE " + col + " END"
	if typ == catalog.Date {
		return "CAST(" + safe + " AS DATE)"
	}
	return "CAST(" + safe + " AS TIMESTAMP)"
}

// pgSafeLow and pgSafeHigh are the ends wallClock clamps a PostgreSQL date
// or timestamp to before converting it: a year outside [1000, 9999] on
// each side, which every date, timestamp and timestamptz holds and casts
// to the others in any zone.
const (
	pgSafeLow  = "0999-01-01"
	pgSafeHigh = "10000-12-31"
)

// dateRange renders a WHERE range on a date column,
//
//	CASE WHEN readable THEN c >= lo AND c < hi END
//
// true or false on a date, NULL on a value that is not one: like a NULL,
// such a value satisfies neither the range nor its NOT (a MariaDB zero
// date, SQLite text that is no date).
func (r *renderer) dateRange(col string, typ catalog.ColumnType, rg *Range) (string, error) {
	value := r.wallClock(col, typ)
	var parts []string
	if rg.HasLower {
		op := " >= "
		if rg.LowerOpen {
			op = " > "
		}
		end := r.dateBound(typ, rg.Lower, rg.LowerMicros)
		if rg.LowerArg != nil {
			var err error
			if end, err = r.typedArg(rg.LowerArg); err != nil {
				return "", err
			}
		}
		parts = append(parts, value+op+end)
	}
	if rg.HasUpper {
		op := " <= "
		if rg.UpperOpen {
			op = " < "
		}
		end := r.dateBound(typ, rg.Upper, rg.UpperMicros)
		if rg.UpperArg != nil {
			var err error
			if end, err = r.typedArg(rg.UpperArg); err != nil {
				return "", err
			}
		}
		parts = append(parts, value+op+end)
	}
	if len(parts) == 0 {
		return "", fmt.Errorf("sqlrewrite: range on %s has no bound", col)
	}
	return "(CASE WHEN " + r.dateReadable(col, typ) + " THEN " + strings.Join(parts, " AND ") + " END)", nil
}

// dateIndex renders a row's cell index on a date axis, NULL for a value
// that is not a date or is outside the bounds:
//
//	CASE WHEN readable AND c >= lo AND c <= hi THEN index END
//
// the index being, from the year y, month m and day number of the value,
// y - y₀ (years), (y - y₀) * 12 + m - m₀ (months), the days since the
// lower bound's (days), or the component's position in Cycle.
func (r *renderer) dateIndex(col string, a DateAxis) (string, error) {
	if a.Type != catalog.Date && a.Type != catalog.Timestamp || !(a.Lower <= a.Upper) {
		return "", fmt.Errorf("sqlrewrite: bad date axis on %s", col)
	}
	c := catalog.Column{Type: a.Type}
	lo := c.TimeOf(a.Lower)
	var year, month, day, dow, hour, days, hours, minutes, weeks, week0, isoWeek, week6, yday, minute string
	weekStart := periodStart(lo, a.Part).Format(time.DateOnly) // weeks count from the first week's first day
	loDay := lo.Format(time.DateOnly)
	switch r.spec.name {
	case "sqlite":
		part := func(f string) string { return "CAST(strftime('" + f + "', " + col + ") AS INTEGER)" }
		year, month, day, dow, hour = part("%Y"), part("%m"), part("%d"), part("%w")+" + 1", part("%H")
		days = "CAST(julianday(date(" + col + ")) - julianday('" + loDay + "') AS INTEGER)"
		hours = fmt.Sprintf("(CAST(strftime('%%s', %s) AS INTEGER) - %d) / 3600", col, lo.Truncate(time.Hour).Unix())
		minutes = fmt.Sprintf("(CAST(strftime('%%s', %s) AS INTEGER) - %d) / 60", col, lo.Truncate(time.Minute).Unix())
		weeks = "CAST(julianday(date(" + col + ")) - julianday('" + weekStart + "') AS INTEGER) / 7"
		week0 = "(" + part("%j") + " - " + part("%w") + " + 6) / 7"
		isoWeek, yday, minute = part("%V"), part("%j"), part("%M")
		week6 = "(CAST(strftime('%j', date(" + col + ", '-' || strftime('%w', " + col + ") || ' days', '+3 days')) AS INTEGER) - 1) / 7 + 1"
	case "postgres":
		part := func(f string) string { return "CAST(EXTRACT(" + f + " FROM " + col + ") AS INTEGER)" }
		year, month, day, dow, hour = part("YEAR"), part("MONTH"), part("DAY"), part("DOW")+" + 1", part("HOUR")
		days = "(CAST(" + col + " AS DATE) - DATE '" + loDay + "')"
		hours = fmt.Sprintf("CAST(FLOOR((EXTRACT(EPOCH FROM CAST(%s AS TIMESTAMP)) - %d) / 3600) AS INTEGER)", col, lo.Truncate(time.Hour).Unix())
		minutes = fmt.Sprintf("CAST(FLOOR((EXTRACT(EPOCH FROM CAST(%s AS TIMESTAMP)) - %d) / 60) AS INTEGER)", col, lo.Truncate(time.Minute).Unix())
		weeks = "(CAST(" + col + " AS DATE) - DATE '" + weekStart + "') / 7"
		week0 = "(" + part("DOY") + " - " + part("DOW") + " + 6) / 7"
		isoWeek, yday, minute = part("WEEK"), part("DOY"), part("MINUTE")
		week6 = "(CAST(EXTRACT(DOY FROM CAST(" + col + " AS DATE) - " + part("DOW") + " + 3) AS INTEGER) - 1) / 7 + 1"
	default:
		year, month, day, dow, hour = "YEAR("+col+")", "MONTH("+col+")", "DAYOFMONTH("+col+")", "DAYOFWEEK("+col+")", "HOUR("+col+")"
		days = "DATEDIFF(" + col + ", DATE '" + loDay + "')"
		hours = "TIMESTAMPDIFF(HOUR, TIMESTAMP '" + lo.Truncate(time.Hour).Format(time.DateTime) + "', " + col + ")"
		minutes = "TIMESTAMPDIFF(MINUTE, TIMESTAMP '" + lo.Truncate(time.Minute).Format(time.DateTime) + "', " + col + ")"
		weeks = "DATEDIFF(" + col + ", DATE '" + weekStart + "') DIV 7"
		week0, isoWeek, yday, minute = "WEEK("+col+", 0)", "WEEK("+col+", 3)", "DAYOFYEAR("+col+")", "MINUTE("+col+")"
		week6 = "WEEK(" + col + ", 6)"
	}
	var index string
	switch a.Part {
	case PartYear:
		index = fmt.Sprintf("%s - %d", year, lo.Year())
	case PartMonth:
		index = fmt.Sprintf("(%s - %d) * 12 + %s - %d", year, lo.Year(), month, int(lo.Month()))
	case PartQuarter:
		div := " / "
		if r.spec.name == "mysql" {
			div = " DIV "
		}
		index = fmt.Sprintf("(%s - %d) * 4 + (%s - 1)%s3 - %d", year, lo.Year(), month, div, (int(lo.Month())-1)/3)
	case PartDay:
		index = days
	case PartHour:
		index = hours
	case PartMinute:
		index = minutes
	case PartWeekSunday, PartWeekMonday:
		index = weeks
	default:
		comp := map[DatePart]string{PartMonthOfYear: month, PartDayOfWeek: dow, PartDayOfMonth: day, PartHourOfDay: hour,
			PartWeekOfYear: week0, PartISOWeek: isoWeek, PartWeekOfYear6: week6, PartDayOfYear: yday, PartMinuteOfHour: minute}[a.Part]
		if a.Part == PartQuarterOfYear {
			div := " / "
			if r.spec.name == "mysql" {
				div = " DIV "
			}
			comp = "(" + month + " + 2)" + div + "3"
		}
		if comp == "" || len(a.Cycle) == 0 {
			return "", fmt.Errorf("sqlrewrite: bad date axis on %s", col)
		}
		var sb strings.Builder
		sb.WriteString("CASE " + comp)
		for i, v := range a.Cycle {
			fmt.Fprintf(&sb, " WHEN %d THEN %d", v, i)
		}
		sb.WriteString(" END")
		index = sb.String()
	}
	value := r.wallClock(col, a.Type)
	below := " <= "
	if a.UpperOpen {
		below = " < "
	}
	return fmt.Sprintf("CASE WHEN %s AND %s >= %s AND %s%s%s THEN %s END",
		r.dateReadable(col, a.Type), value, r.dateValue(a.Type, a.Lower), value, below, r.dateValue(a.Type, a.Upper), index), nil
}

// formatReadBack recognises STR_TO_DATE(DATE_FORMAT(col, f), f) of an
// hourly or minute format, the same both ways (Metabase's hour and
// minute: '%Y-%m-%d %H', '%Y-%m-%d %H:%i'): the periods of the
// DATE_FORMAT key, labelled by their first instant as datetimes, as MySQL
// reads them back.
func (sc *scope) formatReadBack(inner ast.ExprNode, f Value) (*dateKey, bool) {
	x, ok := unparen(inner).(*ast.FuncCallExpr)
	if !ok || x.FnName.L != "date_format" || len(x.Args) != 2 || !f.IsText {
		return nil, false
	}
	g, isLit := literal(x.Args[1])
	col, isCol := sc.dateColumn(x.Args[0])
	if !isLit || !g.IsText || g.Str != f.Str || !isCol {
		return nil, false
	}
	k, err := formatKey(col, f.Str, x)
	if err != nil || k.part != PartHour && k.part != PartMinute {
		return nil, false
	}
	k.label, k.kind = dateLabel(true), k.kind+" as datetime"
	return k, true
}

// yearWeekSunday recognises Metabase's week,
// STR_TO_DATE(CONCAT(YEARWEEK(col), ' Sunday'), '%X%V %W'): the Sunday
// that starts the week of col (YEARWEEK's default mode counts weeks from
// Sunday), a date.
func (sc *scope) yearWeekSunday(inner ast.ExprNode, f Value) (*dateKey, bool) {
	c, ok := unparen(inner).(*ast.FuncCallExpr)
	if !ok || c.FnName.L != "concat" || len(c.Args) != 2 || !f.IsText || f.Str != "%X%V %W" {
		return nil, false
	}
	sunday, isLit := literal(c.Args[1])
	yw, isCall := unparen(c.Args[0]).(*ast.FuncCallExpr)
	if !isLit || !sunday.IsText || sunday.Str != " Sunday" || !isCall || yw.FnName.L != "yearweek" || len(yw.Args) != 1 {
		return nil, false
	}
	col, days, isCol := sc.shiftedColumn(yw.Args[0])
	switch {
	case isCol && days == 0:
		return &dateKey{col: col, part: PartWeekSunday, kind: "yearweek", label: dateLabel(false)}, true
	case isCol && days == -1:
		// The Sunday before the day before: the weeks from Monday,
		// labelled by the Sunday before theirs (Metabase's Monday weeks
		// then add a day).
		return &dateKey{col: col, part: PartWeekMonday, kind: "yearweek of the day before", label: shiftedDateLabel(false, -1), shift: -1}, true
	}
	return nil, false
}

// metabaseQuarter recognises Metabase's quarter,
// STR_TO_DATE(CONCAT(YEAR(col), '-', ((QUARTER(col) * 3) - 2), '-01'),
// '%Y-%m-%d'): the first day of col's quarter, a date.
func (sc *scope) metabaseQuarter(inner ast.ExprNode, f Value) (*dateKey, bool) {
	c, ok := unparen(inner).(*ast.FuncCallExpr)
	if !ok || c.FnName.L != "concat" || len(c.Args) != 4 || !f.IsText || f.Str != "%Y-%m-%d" {
		return nil, false
	}
	dash, okDash := literal(c.Args[1])
	first, okFirst := literal(c.Args[3])
	col, okYear := sc.dateColumnOf(c.Args[0], "year")
	if !okDash || !okFirst || !okYear || dash.Str != "-" || first.Str != "-01" {
		return nil, false
	}
	// ((QUARTER(col) * 3) - 2)
	minus, okMinus := unparen(c.Args[2]).(*ast.BinaryOperationExpr)
	if !okMinus || minus.Op != opcode.Minus {
		return nil, false
	}
	times, okTimes := unparen(minus.L).(*ast.BinaryOperationExpr)
	two, okTwo := literal(minus.R)
	if !okTimes || times.Op != opcode.Mul || !okTwo || two.IsText || two.Num != 2 {
		return nil, false
	}
	three, okThree := literal(times.R)
	other, okQuarter := sc.dateColumnOf(times.L, "quarter")
	if !okThree || three.IsText || three.Num != 3 || !okQuarter || other != col {
		return nil, false
	}
	return &dateKey{col: col, part: PartQuarter, kind: "metabase quarter", label: dateLabel(false)}, true
}

// dateColumnOf returns the date or timestamp column of name(col); ok is
// false when e is no such call.
func (sc *scope) dateColumnOf(e ast.ExprNode, name string) (*catalog.Column, bool) {
	arg := dateFunc(e, name)
	if arg == nil {
		return nil, false
	}
	return sc.dateColumn(arg)
}

// supersetQuarter recognises Superset's quarter, MAKEDATE(YEAR(col), 1) +
// INTERVAL QUARTER(col) QUARTER - INTERVAL 1 QUARTER: the first day of
// col's quarter, a date.
func (sc *scope) supersetQuarter(e ast.ExprNode) (*dateKey, bool) {
	sub, ok := unparen(e).(*ast.FuncCallExpr)
	if !ok || sub.FnName.L != "date_sub" || len(sub.Args) != 3 {
		return nil, false
	}
	one, okOne := literal(sub.Args[1])
	unit, okUnit := sub.Args[2].(*ast.TimeUnitExpr)
	add, okAdd := unparen(sub.Args[0]).(*ast.FuncCallExpr)
	if !okOne || one.IsText || one.Num != 1 || !okUnit || unit.Unit != ast.TimeUnitQuarter || !okAdd || add.FnName.L != "date_add" || len(add.Args) != 3 {
		return nil, false
	}
	unit, okUnit = add.Args[2].(*ast.TimeUnitExpr)
	makedate, okMake := unparen(add.Args[0]).(*ast.FuncCallExpr)
	if !okUnit || unit.Unit != ast.TimeUnitQuarter || !okMake || makedate.FnName.L != "makedate" || len(makedate.Args) != 2 {
		return nil, false
	}
	day, okDay := literal(makedate.Args[1])
	col, okYear := sc.dateColumnOf(makedate.Args[0], "year")
	other, okQuarter := sc.dateColumnOf(add.Args[1], "quarter")
	if !okDay || day.IsText || day.Num != 1 || !okYear || !okQuarter || other != col {
		return nil, false
	}
	return &dateKey{col: col, part: PartQuarter, kind: "superset quarter", label: dateLabel(false)}, true
}

// lookerQuarter recognises Looker's quarter,
// CONCAT(CAST(YEAR(col) AS CHAR), '-Q', CAST(QUARTER(col) AS CHAR)) (the
// CASTs optional, any text between): col's quarters labelled as the text
// ('2024-Q1').
func (sc *scope) lookerQuarter(c *ast.FuncCallExpr) (*dateKey, bool) {
	if c.FnName.L != "concat" || len(c.Args) < 3 {
		return nil, false
	}
	uncast := func(e ast.ExprNode) ast.ExprNode {
		if f, ok := unparen(e).(*ast.FuncCastExpr); ok && f.Tp.GetType() == mysql.TypeVarString {
			return f.Expr
		}
		return e
	}
	col, okYear := sc.dateColumnOf(uncast(c.Args[0]), "year")
	other, okQuarter := sc.dateColumnOf(uncast(c.Args[len(c.Args)-1]), "quarter")
	if !okYear || !okQuarter || col != other {
		return nil, false
	}
	var sep strings.Builder
	for _, a := range c.Args[1 : len(c.Args)-1] {
		v, ok := literal(a)
		if !ok || !v.IsText {
			return nil, false
		}
		sep.WriteString(v.Str)
	}
	between := sep.String()
	return &dateKey{col: col, part: PartQuarter, kind: "quarter " + between, label: func(t time.Time) Value {
		return Value{Str: fmt.Sprintf("%d%s%d", t.Year(), between, (int(t.Month())+2)/3), IsText: true}
	}}, true
}
