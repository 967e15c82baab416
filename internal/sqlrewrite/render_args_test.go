package sqlrewrite_test

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// The tokens checkArgsOrder reads: a quoted identifier, a placeholder, or
// LIMIT or OFFSET.
var (
	graveTokens  = regexp.MustCompile("`([^`]*)`|\\?|\\b(?:LIMIT|OFFSET) ")
	doubleTokens = regexp.MustCompile(`"([^"]*)"|\$(\d+)|\b(?:LIMIT|OFFSET) `)
)

// labelValues prefixes every text value a fetch binds (conditions' values
// and LIKE patterns, cell and group keys' values) with its column's name
// and a colon, so that checkArgsOrder can tell which column each belongs
// to. Dates and timestamps, which the renderer writes as literals, are
// left alone.
func labelValues(v reflect.Value, column string) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			labelValues(v.Elem(), column)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			labelValues(v.Index(i), column)
		}
	case reflect.Struct:
		switch x := v.Addr().Interface().(type) {
		case *sqlrewrite.Value:
			if x.IsText && !x.Null && x.Temporal == "" && column != "" {
				x.Str = column + ":" + x.Str
			}
			return
		case *sqlrewrite.Condition:
			column = x.Column
			if x.Like != nil {
				like := column + ":" + *x.Like
				x.Like = &like
			}
		case *sqlrewrite.CellDim:
			column = x.Column
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				labelValues(v.Field(i), column)
			}
		}
	}
}

// checkArgsOrder checks, for a fetch whose text values labelValues has
// labelled, that in every dialect each placeholder binds a value of the
// column quoted nearest before it in the text (`c` = ?, `c` IN (?, ?),
// CASE WHEN `c` = ? …), or after LIMIT or OFFSET a rank (an int64): on
// MySQL and SQLite the arguments in the textual order of the ?s, on
// PostgreSQL the one each $n numbers. It returns the number of dialects
// f renders on.
func checkArgsOrder(t *testing.T, name string, f sqlrewrite.Fetch) int {
	t.Helper()
	var rendered int
	for _, d := range []sqlrewrite.Dialect{sqlrewrite.MySQL, sqlrewrite.SQLite, sqlrewrite.PostgreSQL} {
		q, args, err := sqlrewrite.Render(f, d)
		if err != nil {
			continue
		}
		rendered++
		tokens := graveTokens
		if d == sqlrewrite.PostgreSQL {
			tokens = doubleTokens
		}
		var column string
		var used int
		rank := false // the placeholder follows LIMIT or OFFSET
		for _, m := range tokens.FindAllStringSubmatch(q, -1) {
			switch {
			case strings.HasPrefix(m[0], "`") || strings.HasPrefix(m[0], `"`):
				if m[1] != "C" { // PostgreSQL's COLLATE "C"
					column, rank = m[1], false
				}
				continue
			case m[0] == "LIMIT " || m[0] == "OFFSET ":
				rank = true
				continue
			case m[0] == "?":
				used++
			default:
				n, _ := strconv.Atoi(m[2])
				used = max(used, n)
			}
			if used > len(args) {
				t.Errorf("%s: %v: placeholder %s beyond the %d arguments: %s", name, d, m[0], len(args), q)
				break
			}
			arg := args[used-1]
			if m[0] != "?" {
				n, _ := strconv.Atoi(m[2])
				arg = args[n-1]
			}
			if _, isRank := arg.(int64); rank != isRank {
				t.Errorf("%s: %v: a placeholder binds %#v, after LIMIT or OFFSET: %v; %q\n%s", name, d, arg, rank, args, q)
			} else if s, ok := arg.(string); !rank && (!ok || !strings.HasPrefix(s, column+":")) {
				t.Errorf("%s: %v: a placeholder after %q binds %#v; %q\n%s", name, d, column, arg, args, q)
			}
			rank = false
		}
		if used != len(args) {
			t.Errorf("%s: %v: %d arguments, %d bound: %s", name, d, len(args), used, q)
		}
	}
	return rendered
}

// TestRenderArgsOrderGoldens checks the argument order (checkArgsOrder) of
// every fetch of the fetch-sql golden files.
func TestRenderArgsOrderGoldens(t *testing.T) {
	var rendered int
	datadriven.Walk(t, "../../testdata/queries/rewrite", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd == "fetch-sql" {
				if f, err := parseFetch(d.Input); err == nil {
					labelValues(reflect.ValueOf(&f), "")
					rendered += checkArgsOrder(t, d.Pos, f)
				}
			}
			return d.Expected
		})
	})
	if rendered < 100 {
		t.Errorf("only %d golden renderings", rendered)
	}
	t.Logf("%d golden renderings checked", rendered)
}

// TestRenderArgsOrderShapes checks the argument order (checkArgsOrder) of
// every fetch shape, alone and with text arguments in every place a fetch
// binds one: the filter, the Boolean predicate, a derived column's CASE
// condition, group and cell keys, and a unit bound by text groups (with
// Within) or by a text private key.
func TestRenderArgsOrderShapes(t *testing.T) {
	text := func(s ...string) []sqlrewrite.Value {
		var vs []sqlrewrite.Value
		for _, x := range s {
			vs = append(vs, sqlrewrite.Value{Str: x, IsText: true})
		}
		return vs
	}
	cityDim := sqlrewrite.CellDim{Column: "city", Values: text("g1", "g2")}
	dims := []sqlrewrite.CellDim{cityDim, {Column: "age", Edges: sqlrewrite.DoubleEdges([]float64{0, 50, 100})}}
	terms := []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}, {Kind: sqlrewrite.ClampedSum, Column: "dpproxy_e0", Lower: 0, Upper: 100}}
	grid := sqlrewrite.GridSums{Column: "age", Lower: 0, Upper: 100, Unit: 1}
	shapes := map[string]func(*sqlrewrite.Fetch){
		"summary": func(f *sqlrewrite.Fetch) { f.Summary = terms },
		"window": func(f *sqlrewrite.Fetch) {
			f.Window = &sqlrewrite.Window{Column: "dpproxy_e0", Upper: 100, Offset: 1, Limit: 3}
		},
		"window grid": func(f *sqlrewrite.Fetch) {
			f.Window = &sqlrewrite.Window{Column: "age", Upper: 100, Limit: 3, GridUnit: 1}
		},
		"window grouped": func(f *sqlrewrite.Fetch) {
			f.Window = &sqlrewrite.Window{Column: "age", Upper: 100, Limit: 3, Grouped: true}
		},
		"histogram": func(f *sqlrewrite.Fetch) {
			f.Histogram = &sqlrewrite.Histogram{Column: "dpproxy_e0", Upper: 100, Bins: 4}
		},
		"pairs": func(f *sqlrewrite.Fetch) {
			f.Pairs = &sqlrewrite.Pairs{Y: "dpproxy_e0", X: "age", YUpper: 100, XUpper: 100}
		},
		"grid sums": func(f *sqlrewrite.Fetch) { g := grid; f.GridSums = &g },
		"grid ranks": func(f *sqlrewrite.Fetch) {
			g := grid
			g.Ranks = &sqlrewrite.RankSlice{Offset: 2, Limit: 5}
			f.GridSums = &g
		},
		"cells":        func(f *sqlrewrite.Fetch) { f.Cells = &sqlrewrite.Cells{Dims: dims} },
		"grouped":      func(f *sqlrewrite.Fetch) { f.Grouped = &sqlrewrite.GroupedSummary{Dims: dims, Terms: terms} },
		"grouped grid": func(f *sqlrewrite.Fetch) { f.GroupedGrid = &sqlrewrite.GroupedGridSums{Dims: dims, Grid: grid} },
		"grouped histogram": func(f *sqlrewrite.Fetch) {
			f.GroupedHist = &sqlrewrite.GroupedHistogram{Dims: dims, Histogram: sqlrewrite.Histogram{Column: "age", Upper: 100, Bins: 4}}
		},
		"key counts": func(f *sqlrewrite.Fetch) { f.Keys = &sqlrewrite.KeyCounts{Column: "name"} },
		"profile": func(f *sqlrewrite.Fetch) {
			f.Profile = &sqlrewrite.Profile{Column: "age", Upper: 100, Terms: terms[1:]}
		},
		"profile bins": func(f *sqlrewrite.Fetch) {
			f.Profile = &sqlrewrite.Profile{Column: "income", Upper: 1000, Bins: 8, Terms: terms[1:]}
		},
	}
	derived := []sqlrewrite.DerivedColumn{{Name: "dpproxy_e0", Expr: &sqlrewrite.RowExpr{Kind: sqlrewrite.RowCase,
		When: [][]sqlrewrite.Condition{{{Column: "name", In: text("d1"), Text: true}}},
		Args: []*sqlrewrite.RowExpr{{Kind: sqlrewrite.RowColumn, Column: "age", Lower: 0, Upper: 100}, {Kind: sqlrewrite.RowConst, Num: 0}}}}}
	unit := func(change func(*sqlrewrite.UnitBound)) func(*sqlrewrite.Fetch) {
		return func(f *sqlrewrite.Fetch) {
			u := &sqlrewrite.UnitBound{Column: "pid", MaxRows: 2, Order: []string{"age"}, Salt: strings.Repeat("ab", 16)}
			change(u)
			f.Unit = u
		}
	}
	options := map[string]func(*sqlrewrite.Fetch){
		"filter": func(f *sqlrewrite.Fetch) {
			f.Filter = []sqlrewrite.Condition{{Column: "state", In: text("f1", "f2"), Text: true}}
		},
		"boolean": func(f *sqlrewrite.Fetch) {
			f.Boolean = &sqlrewrite.Predicate{Op: sqlrewrite.Or, Args: []*sqlrewrite.Predicate{
				{Op: sqlrewrite.Leaf, Leaf: &sqlrewrite.Condition{Column: "state", In: text("b1"), Text: true}},
				{Op: sqlrewrite.Leaf, Leaf: &sqlrewrite.Condition{Column: "name", In: text("b2"), Text: true, Exact: true}}}}
		},
		"derived":    func(f *sqlrewrite.Fetch) { f.Derived = derived },
		"unit":       unit(func(*sqlrewrite.UnitBound) {}),
		"unit group": unit(func(u *sqlrewrite.UnitBound) { u.Groups, u.MaxGroups = []sqlrewrite.CellDim{cityDim}, 1 }),
		"unit group within": unit(func(u *sqlrewrite.UnitBound) {
			u.Groups, u.MaxGroups = []sqlrewrite.CellDim{cityDim}, 1
			u.Within = []sqlrewrite.Condition{{Column: "city", In: text("w1"), Text: true}}
		}),
		"unit key": unit(func(u *sqlrewrite.UnitBound) { u.Key, u.MaxGroups = "name", 1 }),
	}
	// Every shape with every subset of the options but at most one unit
	// bound.
	names := make([]string, 0, len(options))
	for n := range options {
		names = append(names, n)
	}
	var rendered int
	for shape, set := range shapes {
		for mask := 0; mask < 1<<len(names); mask++ {
			f := sqlrewrite.Fetch{Table: "t"}
			set(&f)
			var label []string
			units := 0
			for i, n := range names {
				if mask&(1<<i) != 0 {
					options[n](&f)
					label = append(label, n)
					if strings.HasPrefix(n, "unit") {
						units++
					}
				}
			}
			if units > 1 {
				continue
			}
			labelValues(reflect.ValueOf(&f), "")
			rendered += checkArgsOrder(t, fmt.Sprintf("%s with %v", shape, label), f)
		}
	}
	if rendered < 1000 {
		t.Errorf("only %d renderings", rendered)
	}
	t.Logf("%d renderings checked", rendered)
}

// TestRenderUnitGroupArgsOrder: on a unit bound with text group keys and a
// derived column's text condition, each positional placeholder binds the
// string of its own comparison (the derived column's arguments were bound
// before the group key's, which comes first in the text, so the CASE
// tested the group's strings and the groups the CASE's: an independent
// review).
func TestRenderUnitGroupArgsOrder(t *testing.T) {
	text := func(s string) sqlrewrite.Value { return sqlrewrite.Value{Str: s, IsText: true} }
	f := sqlrewrite.Fetch{Table: "tu2",
		Derived: []sqlrewrite.DerivedColumn{{Name: "dpproxy_e0", Expr: &sqlrewrite.RowExpr{Kind: sqlrewrite.RowCase,
			When: [][]sqlrewrite.Condition{{{Column: "name", In: []sqlrewrite.Value{text("zz1")}, Text: true}}},
			Args: []*sqlrewrite.RowExpr{{Kind: sqlrewrite.RowColumn, Column: "age", Lower: 0, Upper: 100}, {Kind: sqlrewrite.RowConst, Num: 0}}}}},
		Unit: &sqlrewrite.UnitBound{Column: "pid", MaxRows: 2, Order: []string{"age"}, Salt: strings.Repeat("ab", 16),
			Groups: []sqlrewrite.CellDim{{Column: "city", Values: []sqlrewrite.Value{text("Rome"), text("Berlin")}}}, MaxGroups: 1},
		Summary: []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}}}
	for _, d := range []sqlrewrite.Dialect{sqlrewrite.MySQL, sqlrewrite.SQLite} {
		q, args, err := sqlrewrite.Render(f, d)
		if err != nil {
			t.Fatal(err)
		}
		parts := strings.Split(q, "?")
		var names, cities int
		for i := range args {
			if strings.HasSuffix(parts[i], "`name` = ") {
				names++
				if args[i] != "zz1" {
					t.Errorf("%v: name = ? binds %q; %v", d, args[i], args)
				}
			}
			if strings.HasSuffix(parts[i], "`city` = ") {
				cities++
				if args[i] != "Rome" && args[i] != "Berlin" {
					t.Errorf("%v: city = ? binds %q; %v", d, args[i], args)
				}
			}
		}
		if names == 0 || cities == 0 {
			t.Errorf("%v: the test found %d name and %d city comparisons in %s", d, names, cities, q)
		}
	}
}
