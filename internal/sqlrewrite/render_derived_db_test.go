package sqlrewrite_test

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// derivedCase is the table of the derived-column tests: rows of a (an
// integer in [0, 100]), b (a multiple of 0.25 in [0, 1000]) and s ('CA',
// 'NY' or NULL), some a and b NULL, with ev0 and ev1 the values Go
// computes for the row expressions derivedColumns: TRUNCATE((a + b) ·
// 10^15), up to 1.1·10^18, and CASE WHEN s = 'CA' THEN a ELSE b END.
type derivedCase struct {
	create, insert []string
	derived        []sqlrewrite.DerivedColumn
}

func newDerivedCase(double string) derivedCase {
	col := func(name string, lo, hi float64) *sqlrewrite.RowExpr {
		return &sqlrewrite.RowExpr{Kind: sqlrewrite.RowColumn, Column: name, Lower: lo, Upper: hi}
	}
	op := func(o byte, x, y *sqlrewrite.RowExpr) *sqlrewrite.RowExpr {
		return &sqlrewrite.RowExpr{Kind: sqlrewrite.RowOp, Op: o, Args: []*sqlrewrite.RowExpr{x, y}}
	}
	c := derivedCase{
		create: []string{fmt.Sprintf("CREATE TABLE dp_derived (a INTEGER, b %[1]s, s VARCHAR(8), ev0 %[1]s, ev1 %[1]s)", double)},
		derived: []sqlrewrite.DerivedColumn{
			{Name: "dpproxy_e0", Expr: &sqlrewrite.RowExpr{Kind: sqlrewrite.RowFunc, Func: sqlrewrite.FuncTruncate,
				Args: []*sqlrewrite.RowExpr{op('*', op('+', col("a", 0, 100), col("b", 0, 1000)), &sqlrewrite.RowExpr{Kind: sqlrewrite.RowConst, Num: 1e15})}}},
			{Name: "dpproxy_e1", Expr: &sqlrewrite.RowExpr{Kind: sqlrewrite.RowCase,
				When: [][]sqlrewrite.Condition{{{Column: "s", In: []sqlrewrite.Value{{Str: "CA", IsText: true}}, Text: true}}},
				Args: []*sqlrewrite.RowExpr{col("a", 0, 100), col("b", 0, 1000)}}},
		},
	}
	lit := func(v float64, ok bool) string {
		if !ok {
			return "NULL"
		}
		return strconv.FormatFloat(v, 'e', -1, 64)
	}
	var values []string
	for i := range 300 {
		a, aOK := float64(i*37%101), i%17 != 0
		b, bOK := float64(i*53%4001)/4, i%19 != 0
		s := []string{"CA", "NY", ""}[i%3]
		e1, e1OK := b, bOK
		if s == "CA" {
			e1, e1OK = a, aOK
		}
		values = append(values, fmt.Sprintf("(%s, %s, %s, %s, %s)", lit(a, aOK), lit(b, bOK), map[string]string{"CA": "'CA'", "NY": "'NY'", "": "NULL"}[s],
			lit(math.Trunc((a+b)*1e15), aOK && bOK), lit(e1, e1OK)))
	}
	c.insert = []string{"INSERT INTO dp_derived (a, b, s, ev0, ev1) VALUES " + strings.Join(values, ", ")}
	return c
}

// derivedShapes are fetches of every shape that read the columns e0 and
// e1, and the options that filter their rows; with floatSums, also the
// grid sums of e0 as DOUBLE (GridSums.FloatSum, MySQL's).
func derivedShapes(e0, e1 string, floatSums bool) (shapes map[string]sqlrewrite.Fetch, options map[string]func(*sqlrewrite.Fetch)) {
	text := func(s string) []sqlrewrite.Value { return []sqlrewrite.Value{{Str: s, IsText: true}} }
	big := 1.1e18
	sDim := sqlrewrite.CellDim{Column: "s", Values: append(text("CA"), text("NY")...)}
	e0Dim := sqlrewrite.CellDim{Column: e0, Edges: sqlrewrite.DoubleEdges([]float64{0, 1e17, 3e17, 6e17, big})}
	terms := []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}, {Kind: sqlrewrite.CountNumbers, Column: e0},
		{Kind: sqlrewrite.ClampedSum, Column: e0, Upper: big}, {Kind: sqlrewrite.ClampedSumSquares, Column: e1, Upper: 1000}}
	grid := sqlrewrite.GridSums{Column: e1, Upper: 1000, Unit: 0.25}
	ranks := grid
	ranks.Ranks = &sqlrewrite.RankSlice{Offset: 3, Limit: 50}
	sums := sqlrewrite.GridSums{Column: e0, Upper: big, Unit: 0x1p30, SumOnly: true}
	shapes = map[string]sqlrewrite.Fetch{
		"summary":         {Summary: terms},
		"window":          {Window: &sqlrewrite.Window{Column: e0, Upper: big, Limit: 300}},
		"window grid":     {Window: &sqlrewrite.Window{Column: e1, Upper: 1000, Offset: 5, Limit: 40, GridUnit: 0.25}},
		"window grouped":  {Window: &sqlrewrite.Window{Column: e1, Upper: 1000, Limit: 300, Grouped: true}},
		"histogram":       {Histogram: &sqlrewrite.Histogram{Column: e0, Upper: big, Bins: 8}},
		"pairs":           {Pairs: &sqlrewrite.Pairs{Y: e1, X: "a", YUpper: 1000, XUpper: 100}},
		"grid sums":       {GridSums: &grid},
		"grid ranks":      {GridSums: &ranks},
		"cells":           {Cells: &sqlrewrite.Cells{Dims: []sqlrewrite.CellDim{sDim, e0Dim}}},
		"grouped":         {Grouped: &sqlrewrite.GroupedSummary{Dims: []sqlrewrite.CellDim{sDim, e0Dim}, Terms: terms}},
		"grouped grid":    {GroupedGrid: &sqlrewrite.GroupedGridSums{Dims: []sqlrewrite.CellDim{sDim}, Grid: grid}},
		"e0 sums":         {GridSums: &sums},
		"grouped e0 sums": {GroupedGrid: &sqlrewrite.GroupedGridSums{Dims: []sqlrewrite.CellDim{sDim}, Grid: sums}},
		"grouped hist":    {GroupedHist: &sqlrewrite.GroupedHistogram{Dims: []sqlrewrite.CellDim{sDim}, Histogram: sqlrewrite.Histogram{Column: e0, Upper: big, Bins: 4}}},
		"key counts":      {Keys: &sqlrewrite.KeyCounts{Column: "s"}},
		"profile":         {Profile: &sqlrewrite.Profile{Column: e1, Upper: 1000, Terms: terms[2:]}},
		"profile bins":    {Profile: &sqlrewrite.Profile{Column: e0, Upper: big, Bins: 8, Terms: terms[2:3]}},
		"stored window":   {Window: &sqlrewrite.Window{Column: "a", Upper: 100, Offset: 2, Limit: 30}},
		"stored b window": {Window: &sqlrewrite.Window{Column: "b", Upper: 1000, Limit: 300}},
	}
	if floatSums {
		float := sums
		float.FloatSum = true
		shapes["e0 float sums"] = sqlrewrite.Fetch{GridSums: &float}
		shapes["grouped e0 float sums"] = sqlrewrite.Fetch{GroupedGrid: &sqlrewrite.GroupedGridSums{Dims: []sqlrewrite.CellDim{sDim}, Grid: float}}
	}
	options = map[string]func(*sqlrewrite.Fetch){
		"": func(*sqlrewrite.Fetch) {},
		"filter s": func(f *sqlrewrite.Fetch) {
			f.Filter = []sqlrewrite.Condition{{Column: "s", In: text("CA"), Text: true}}
		},
		"filter e0 and a": func(f *sqlrewrite.Fetch) {
			f.Filter = []sqlrewrite.Condition{{Column: e0, Range: &sqlrewrite.Range{Lower: 2e17, HasLower: true}},
				{Column: "a", Range: &sqlrewrite.Range{Upper: 60, HasUpper: true}}}
		},
		"boolean s or e1": func(f *sqlrewrite.Fetch) {
			f.Boolean = &sqlrewrite.Predicate{Op: sqlrewrite.Or, Args: []*sqlrewrite.Predicate{
				{Op: sqlrewrite.Leaf, Leaf: &sqlrewrite.Condition{Column: "s", In: text("NY"), Text: true}},
				{Op: sqlrewrite.Leaf, Leaf: &sqlrewrite.Condition{Column: e1, Range: &sqlrewrite.Range{Lower: 500, HasLower: true}}}}}
		},
	}
	return shapes, options
}

// TestDerivedColumnsReadAsStored renders, on every backend, fetches of
// every shape that read row expressions (derived columns) under filters
// on stored columns, on the row expressions and on both, and checks that
// each returns what the same fetch returns reading the expressions'
// values stored in columns of the table (computed by Go): reading the
// expressions through the derived table, fenced and on MySQL narrowed
// to the columns the fetch reads (or not fenced, for the grid sums
// without squares of e0, which read it once per row), changes no answer.
// The first row expression reaches 1.1·10^18: MariaDB's temporary column
// of TRUNCATE(x, 0) is DOUBLE(17, 0), which stored it as 10^17 until
// each derived column was cast to DOUBLE.
func TestDerivedColumnsReadAsStored(t *testing.T) {
	for _, b := range doubleBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			db := b.open(t)
			c := newDerivedCase(b.double)
			for _, q := range append(c.create, c.insert...) {
				if _, err := db.Exec(q); err != nil {
					t.Fatalf("%.80s: %v", q, err)
				}
			}
			derived, options := derivedShapes("dpproxy_e0", "dpproxy_e1", b.dialect == sqlrewrite.MySQL)
			stored, storedOptions := derivedShapes("ev0", "ev1", b.dialect == sqlrewrite.MySQL)
			run := func(f sqlrewrite.Fetch) ([][]string, string) {
				q, args, err := sqlrewrite.Render(f, b.dialect)
				if err != nil {
					t.Fatal(err)
				}
				rows, err := db.Query(q, args...)
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				got := testdb.Strings(t, rows, q)
				slices.SortFunc(got, func(x, y []string) int { return strings.Compare(strings.Join(x, "\x00"), strings.Join(y, "\x00")) })
				return got, q
			}
			for shape, f := range derived {
				for option, apply := range options {
					with, without := f, stored[shape]
					with.Table, without.Table = "dp_derived", "dp_derived"
					with.Derived = c.derived
					apply(&with)
					storedOptions[option](&without)
					got, q := run(with)
					want, _ := run(without)
					if !sameCells(got, want) {
						t.Errorf("%s, %s: %d rows %.300v, reading the stored values %d rows %.300v\n%s", shape, option, len(got), got, len(want), want, q)
					}
				}
			}
		})
	}
}

// sameCells reports whether two results have the same rows, numbers
// within a relative 10^-12 (the order of a sum of doubles is the
// backend's).
func sameCells(got, want [][]string) bool {
	return slices.EqualFunc(got, want, func(x, y []string) bool {
		return slices.EqualFunc(x, y, func(u, v string) bool {
			if u == v {
				return true
			}
			a, errA := strconv.ParseFloat(u, 64)
			b, errB := strconv.ParseFloat(v, 64)
			return errA == nil && errB == nil && math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b))
		})
	})
}

// TestDerivedTableMaterializedOnMariaDB: MariaDB computes a fetch's row
// expressions in a derived table it materializes, once per row, where it
// merged it into the statement around it and computed each expression at
// every reading (a bucket ladder reads it once per bucket below the
// row's own: a GROUP BY of 2,400 buckets, BenchmarkDerivedColumnFetches).
// EXPLAIN FORMAT=JSON shows the derived table materialized from the
// table, for a sum, a grouped sum, a ladder of buckets, a window and grid
// sums with Σk². The grid sums without squares (SUM's and AVG's), which
// read the expression once per row, are merged instead (no materialized
// table): writing every row to a temporary table first cost the grouped
// sums 15–30% of MariaDB's CPU (bench/RESULTS.md).
func TestDerivedTableMaterializedOnMariaDB(t *testing.T) {
	db := testdb.MySQL(t)
	c := newDerivedCase("DOUBLE")
	for _, q := range append(c.create, c.insert...) {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%.80s: %v", q, err)
		}
	}
	shapes, _ := derivedShapes("dpproxy_e0", "dpproxy_e1", true)
	for name, want := range map[string]bool{"summary": true, "grouped": true, "cells": true, "window": true, "grid sums": true,
		"e0 sums": false, "grouped e0 sums": false, "e0 float sums": false, "grouped e0 float sums": false} {
		f := shapes[name]
		f.Table, f.Derived = "dp_derived", c.derived
		q, args, err := sqlrewrite.Render(f, sqlrewrite.MySQL)
		if err != nil {
			t.Fatal(err)
		}
		var plan string
		if err := db.QueryRow("EXPLAIN FORMAT=JSON "+q, args...).Scan(&plan); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var tree any
		if err := json.Unmarshal([]byte(plan), &tree); err != nil {
			t.Fatal(err)
		}
		if got := materializes(tree, "dp_derived"); got != want {
			t.Errorf("%s: the derived table materialized %v, want %v:\n%s\n%s", name, got, want, q, plan)
		}
	}
}

// materializes reports whether an EXPLAIN FORMAT=JSON tree holds a
// materialized derived table that reads table.
func materializes(tree any, table string) bool {
	return findJSON(tree, func(k string, x any) bool {
		return k == "materialized" && findJSON(x, func(k string, x any) bool { return k == "table_name" && x == table })
	})
}

// findJSON reports whether a decoded JSON tree holds a key whose value
// satisfies match.
func findJSON(tree any, match func(key string, value any) bool) bool {
	switch v := tree.(type) {
	case map[string]any:
		for k, x := range v {
			if match(k, x) || findJSON(x, match) {
				return true
			}
		}
	case []any:
		return slices.ContainsFunc(v, func(x any) bool { return findJSON(x, match) })
	}
	return false
}
