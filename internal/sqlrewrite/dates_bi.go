package sqlrewrite

import (
	"fmt"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

// The time buckets BI tools write as arithmetic on a date column
// (Metabase's months, years and weeks, Superset's hours, minutes and
// weeks, Looker's weeks). Each is recognised as one of the parts of
// dates.go, whose domain comes from the declared bounds only: what the
// expression computes is decided from its text, by evaluating it on
// sample dates of every weekday (and every minute of a day), never from
// the data.

// formatConcat recognises CONCAT(DATE_FORMAT(col, f), 'lit', ...): one
// DATE_FORMAT of a date column and text literals without '%' (Metabase's
// month CONCAT(DATE_FORMAT(col, '%Y-%m'), '-01')), the key
// DATE_FORMAT(col, f + lit): the same text on every row. ok is false for
// another CONCAT.
func (sc *scope) formatConcat(c *ast.FuncCallExpr, e ast.ExprNode) (k *dateKey, ok bool, err error) {
	var f strings.Builder
	var col *catalog.Column
	for _, a := range c.Args {
		if v, isLit := literal(a); isLit && v.IsText && !strings.Contains(v.Str, "%") {
			f.WriteString(v.Str)
			continue
		}
		x, isCall := unparen(a).(*ast.FuncCallExpr)
		if !isCall || x.FnName.L != "date_format" || len(x.Args) != 2 || col != nil {
			return nil, false, nil
		}
		c, isCol := sc.dateColumn(x.Args[0])
		g, isLit := literal(x.Args[1])
		// A format ending in an odd run of '%' would join the next
		// literal's first character as a specifier.
		if !isCol || !isLit || !g.IsText || (len(g.Str)-len(strings.TrimRight(g.Str, "%")))%2 == 1 {
			return nil, false, nil
		}
		col = c
		f.WriteString(g.Str)
	}
	if col == nil {
		return nil, false, nil
	}
	k, err = formatKey(col, f.String(), e)
	return k, true, err
}

// makeDate recognises MAKEDATE(YEAR(col), 1) (Metabase's year): the first
// day of col's year, a date.
func (sc *scope) makeDate(x *ast.FuncCallExpr) (*dateKey, bool) {
	if x.FnName.L != "makedate" || len(x.Args) != 2 {
		return nil, false
	}
	one, isLit := literal(x.Args[1])
	col, isYear := sc.dateColumnOf(x.Args[0], "year")
	if !isLit || one.IsText || one.Null || one.Num != 1 || !isYear {
		return nil, false
	}
	return &dateKey{col: col, part: PartYear, kind: "makedate", label: dateLabel(false)}, true
}

// clockOf recognises Superset's hour and minute,
// DATE_ADD(DATE(col), INTERVAL HOUR(col) HOUR) and DATE_ADD(DATE(col),
// INTERVAL (HOUR(col) * 60 + MINUTE(col)) MINUTE) (any arithmetic of
// HOUR(col) and MINUTE(col) that gives the hour, or the minute of the
// day, at every minute of a day), DATE(col) also as CAST(col AS DATE):
// the hour or minute periods of a timestamp column, labelled as
// datetimes; of a date column, whose time is 00:00, its days labelled at
// midnight. ok is false for another DATE_ADD.
func (sc *scope) clockOf(x *ast.FuncCallExpr) (*dateKey, bool) {
	if x.FnName.L != "date_add" || len(x.Args) != 3 {
		return nil, false
	}
	unit, isUnit := x.Args[2].(*ast.TimeUnitExpr)
	if !isUnit || unit.Unit != ast.TimeUnitHour && unit.Unit != ast.TimeUnitMinute {
		return nil, false
	}
	day := dateFunc(x.Args[0], "date")
	if cast, isCast := unparen(x.Args[0]).(*ast.FuncCastExpr); isCast && cast.Tp.GetType() == mysql.TypeDate {
		day = cast.Expr
	}
	col, isCol := sc.dateColumn(day)
	if day == nil || !isCol {
		return nil, false
	}
	part, want := PartHour, func(t time.Time) int { return t.Hour() }
	if unit.Unit == ast.TimeUnitMinute {
		part, want = PartMinute, func(t time.Time) int { return t.Hour()*60 + t.Minute() }
	}
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for t := start; t.Before(start.AddDate(0, 0, 1)); t = t.Add(time.Minute) {
		if v, ok := sc.evalShift(x.Args[1], col, t, clockFuncs); !ok || v != want(t) {
			return nil, false
		}
	}
	if col.Type == catalog.Date {
		part = PartDay
	}
	return &dateKey{col: col, part: part, kind: "superset " + partNames[part], label: dateLabel(true)}, true
}

// weekShift recognises DATE_SUB(col, INTERVAL n DAY) and DATE_ADD(col,
// INTERVAL n DAY) whose n is arithmetic of DAYOFWEEK and WEEKDAY of col
// (or of col moved by whole days) that moves every day to the same day of
// its week: Superset's weeks from Monday, DATE_SUB(col, INTERVAL
// DAYOFWEEK(DATE_SUB(col, INTERVAL 1 DAY)) - 1 DAY), and ending
// Saturday, DATE_ADD(col, INTERVAL 7 - DAYOFWEEK(col) DAY), Looker's
// DATE_ADD(col, INTERVAL (0 - MOD((DAYOFWEEK(col) - 1) - 1 + 7, 7)) DAY).
// The key is the weeks from Sunday or Monday, labelled by the day the
// expression gives, within a week of their first (the first day, the
// Saturday ending a week from Sunday, or the one before it); DATE(...)
// of it makes the label a date.
func (sc *scope) weekShift(e ast.ExprNode) (*dateKey, bool) {
	x, isCall := unparen(e).(*ast.FuncCallExpr)
	if !isCall || x.FnName.L != "date_sub" && x.FnName.L != "date_add" || len(x.Args) != 3 {
		return nil, false
	}
	col, isCol := sc.dateColumn(x.Args[0])
	unit, isUnit := x.Args[2].(*ast.TimeUnitExpr)
	if !isCol || !isUnit || unit.Unit != ast.TimeUnitDay {
		return nil, false
	}
	sign := 1
	if x.FnName.L == "date_sub" {
		sign = -1
	}
	// The offset depends on the weekday only: one week of days decides.
	sunday := time.Date(2024, 1, 7, 0, 0, 0, 0, time.UTC)
	for _, part := range []DatePart{PartWeekSunday, PartWeekMonday} {
		shift, same := 0, true
		for i := 0; i < 7 && same; i++ {
			d := sunday.AddDate(0, 0, i)
			n, ok := sc.evalShift(x.Args[1], col, d, weekFuncs)
			if !ok {
				return nil, false
			}
			at := int(d.AddDate(0, 0, sign*n).Sub(periodStart(d, part)).Hours() / 24)
			if i == 0 {
				shift = at
			}
			same = at == shift
		}
		if same && shift > -7 && shift < 7 {
			return &dateKey{col: col, part: part, kind: fmt.Sprintf("%s %+d", partNames[part], shift), label: shiftedDateLabel(false, shift), shift: shift}, true
		}
	}
	return nil, false
}

// dayShift recognises DATE_ADD(k, INTERVAL n DAY) and DATE_SUB(k,
// INTERVAL n DAY) of a date key k labelled by a day (a date or a
// datetime) and a constant n: the same periods, labelled n days later
// (earlier), as Metabase's week from Monday moves its week from Sunday.
func (sc *scope) dayShift(x *ast.FuncCallExpr) (k *dateKey, ok bool, err error) {
	if x.FnName.L != "date_sub" && x.FnName.L != "date_add" || len(x.Args) != 3 {
		return nil, false, nil
	}
	unit, isUnit := x.Args[2].(*ast.TimeUnitExpr)
	n, isConst := sc.evalShift(x.Args[1], nil, time.Time{}, nil)
	if !isUnit || unit.Unit != ast.TimeUnitDay || !isConst || n < -7 || n > 7 {
		return nil, false, nil
	}
	if _, isCol := sc.dateColumn(x.Args[0]); isCol || !sc.mentionsDate(x.Args[0]) {
		return nil, false, nil
	}
	k, err = sc.dateKeyOf(x.Args[0])
	if err != nil {
		return nil, true, err
	}
	v := k.label(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC))
	if v.Temporal != catalog.Date && v.Temporal != catalog.Timestamp {
		return nil, true, refuseQuery("GROUP BY %s: only a key labelled by a day moves by whole days (%s)", restore(x), nearestDateForms)
	}
	if x.FnName.L == "date_sub" {
		n = -n
	}
	k.shift += n
	k.label, k.kind = shiftedDateLabel(v.Temporal == catalog.Timestamp, k.shift), fmt.Sprintf("%s %+d days", k.kind, n)
	return k, true, nil
}

// formatOfKey is DATE_FORMAT(k, f) of a date key k labelled by a day (a
// date or a datetime; Looker's DATE_FORMAT(TIMESTAMP(DATE(...)),
// '%Y-%m-%d')): its periods labelled by f of that day, when f spells
// the periods' days (hours, minutes) apart: %Y for years, %m for
// quarters and months, %d for weeks and days, %H for hours, %i for
// minutes.
func (sc *scope) formatOfKey(arg ast.ExprNode, f string, e ast.ExprNode) (*dateKey, error) {
	k, err := sc.dateKeyOf(arg)
	if err != nil {
		return nil, err
	}
	v := k.label(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC))
	fk, err := formatKey(k.col, f, e)
	if err != nil {
		return nil, err
	}
	rank := map[DatePart]int{PartYear: 0, PartQuarter: 1, PartMonth: 1, PartWeekSunday: 2, PartWeekMonday: 2, PartDay: 2, PartHour: 3, PartMinute: 4}
	kr, known := rank[k.part]
	if v.Temporal != catalog.Date && v.Temporal != catalog.Timestamp || !known || rank[fk.part] < kr || k.shift != 0 && kr < 2 {
		return nil, refuseQuery("GROUP BY %s: DATE_FORMAT of a date key needs a format that tells its periods apart (%s)", restore(e), nearestDateForms)
	}
	shift := k.shift
	k.label, k.kind = func(t time.Time) Value {
		return Value{Str: dateFormat(f, t.AddDate(0, 0, shift)), IsText: true}
	}, k.kind+" format "+f
	return k, nil
}

// shiftedDateLabel is dateLabel of the day days after a period's start.
func shiftedDateLabel(dateTime bool, days int) func(time.Time) Value {
	label := dateLabel(dateTime)
	return func(t time.Time) Value { return label(t.AddDate(0, 0, days)) }
}

// The functions evalShift reads of the column: weekFuncs of its days,
// clockFuncs of its time of day.
var (
	weekFuncs  = map[string]bool{"dayofweek": true, "weekday": true}
	clockFuncs = map[string]bool{"hour": true, "minute": true}
)

// evalShift evaluates the integer arithmetic e (literals, + - * and MOD,
// as MySQL computes them on integers) at a row whose col is t, the
// functions funcs of col, or of col moved by a constant number of days
// (DATE_SUB(col, INTERVAL 1 DAY)), reading t; ok is false for anything
// else.
func (sc *scope) evalShift(e ast.ExprNode, col *catalog.Column, t time.Time, funcs map[string]bool) (int, bool) {
	switch x := unparen(e).(type) {
	case *ast.UnaryOperationExpr:
		v, ok := sc.evalShift(x.V, col, t, funcs)
		return -v, ok && x.Op == opcode.Minus
	case *ast.BinaryOperationExpr:
		l, okL := sc.evalShift(x.L, col, t, funcs)
		r, okR := sc.evalShift(x.R, col, t, funcs)
		if !okL || !okR || abs(l) > 1<<20 || abs(r) > 1<<20 {
			return 0, false
		}
		switch x.Op {
		case opcode.Plus:
			return l + r, true
		case opcode.Minus:
			return l - r, true
		case opcode.Mul:
			return l * r, true
		case opcode.Mod:
			return l % (r + boolInt(r == 0)), r != 0 // MySQL's MOD: the dividend's sign, as Go's %
		}
		return 0, false
	case *ast.FuncCallExpr:
		if !funcs[x.FnName.L] || len(x.Args) != 1 {
			return 0, false
		}
		d, ok := sc.evalDay(x.Args[0], col, t)
		if !ok {
			return 0, false
		}
		switch x.FnName.L {
		case "dayofweek":
			return int(d.Weekday()) + 1, true
		case "weekday":
			return (int(d.Weekday()) + 6) % 7, true
		case "hour":
			return d.Hour(), true
		}
		return d.Minute(), true
	}
	v, ok := literal(e)
	if !ok || v.IsText || v.Null || v.Num != float64(int(v.Num)) || abs(int(v.Num)) > 1<<20 {
		return 0, false
	}
	return int(v.Num), true
}

// evalDay is col (t) or col moved by a constant number of days
// (shiftedColumn), for evalShift.
func (sc *scope) evalDay(e ast.ExprNode, col *catalog.Column, t time.Time) (time.Time, bool) {
	c, n, ok := sc.shiftedColumn(e)
	return t.AddDate(0, 0, n), ok && col != nil && c == col
}

// shiftedColumn recognises a date column moved by a constant number of
// days, at most a week: col, DATE_SUB(col, INTERVAL n DAY), DATE_ADD(col,
// INTERVAL n DAY), nested; days is the move.
func (sc *scope) shiftedColumn(e ast.ExprNode) (col *catalog.Column, days int, ok bool) {
	if c, isCol := sc.dateColumn(e); isCol {
		return c, 0, true
	}
	x, isCall := unparen(e).(*ast.FuncCallExpr)
	if !isCall || x.FnName.L != "date_sub" && x.FnName.L != "date_add" || len(x.Args) != 3 {
		return nil, 0, false
	}
	unit, isUnit := x.Args[2].(*ast.TimeUnitExpr)
	n, isConst := sc.evalShift(x.Args[1], nil, time.Time{}, nil)
	col, days, ok = sc.shiftedColumn(x.Args[0])
	if x.FnName.L == "date_sub" {
		n = -n
	}
	if !isUnit || unit.Unit != ast.TimeUnitDay || !isConst || !ok || abs(days+n) > 7 {
		return nil, 0, false
	}
	return col, days + n, true
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// componentPlus recognises a cyclic date component plus a whole number,
// either order (Metabase's week of the year, WEEK(col, 6) + 1): the
// component's cells, each labelled with its value plus the number. ok is
// false when x is no such sum.
func (sc *scope) componentPlus(x *ast.BinaryOperationExpr) (k *dateKey, ok bool, err error) {
	for _, p := range [][2]ast.ExprNode{{x.L, x.R}, {x.R, x.L}} {
		n, isNum := literal(p[1])
		if !isNum || n.IsText || n.Null || n.Num != float64(int(n.Num)) || abs(int(n.Num)) > 1000 || !sc.mentionsDate(p[0]) {
			continue
		}
		if _, isCol := sc.dateColumn(p[0]); isCol {
			continue
		}
		k, err = sc.dateKeyOf(p[0])
		if err != nil {
			return nil, true, err
		}
		if k.part.period() {
			return nil, true, refuseQuery("GROUP BY %s: only a cyclic date part (MONTH, WEEK, ...) plus a number is a key (%s)", restore(x), nearestDateForms)
		}
		k.add += int(n.Num)
		k.kind = fmt.Sprintf("%s %+d", k.kind, int(n.Num))
		return k, true, nil
	}
	return nil, false, nil
}
