package sqlrewrite_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestRewrite runs the golden files in testdata/queries/rewrite (regenerate
// with go test -run TestRewrite -rewrite). Commands:
//
//	parse
//	<one client SQL text>
//	----
//	<the statement, as formatStatement prints it>  or
//	error <code> (<sqlstate>): <kind>
//	<message>
//
//	fetch-sql dialect=sqlite|postgres|mysql|all
//	<a fetch description, see parseFetch>
//	----
//	<dialect>: <query>             (for each dialect; "all" is the three)
//	args: <bind arguments>         (when there are any; strings quoted)
//	or error: <the Render error>
//
// parse uses one Parser per file, as a connection does, over testCatalog,
// with its clock (CURDATE(), NOW()) at goldenNow.
func TestRewrite(t *testing.T) {
	datadriven.Walk(t, "../../testdata/queries/rewrite", func(t *testing.T, path string) {
		p := sqlrewrite.NewParser(testCatalog())
		p.SetNow(func() time.Time { return goldenNow })
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "parse":
				st, err := p.Parse(d.Input)
				if err != nil {
					return formatError(err)
				}
				return formatStatement(st)
			case "fetch-sql":
				return fetchSQL(t, d)
			}
			d.Fatalf(t, "unknown command %q", d.Cmd)
			return ""
		})
	})
}

var dialectsByName = map[string][]sqlrewrite.Dialect{
	"sqlite":   {sqlrewrite.SQLite},
	"postgres": {sqlrewrite.PostgreSQL},
	"mysql":    {sqlrewrite.MySQL},
	"all":      {sqlrewrite.SQLite, sqlrewrite.PostgreSQL, sqlrewrite.MySQL},
}

func fetchSQL(t *testing.T, d *datadriven.TestData) string {
	var name string
	d.ScanArgs(t, "dialect", &name)
	dialects, ok := dialectsByName[name]
	if !ok {
		d.Fatalf(t, "unknown dialect %q", name)
	}
	f, err := parseFetch(d.Input)
	if err != nil {
		d.Fatalf(t, "bad fetch description: %v", err)
	}
	var b strings.Builder
	for _, dl := range dialects {
		query, args, err := sqlrewrite.Render(f, dl)
		if err != nil {
			fmt.Fprintf(&b, "%s: error: %v\n", dl, err)
			continue
		}
		fmt.Fprintf(&b, "%s: %s\n", dl, query)
		if len(args) > 0 {
			fmt.Fprintf(&b, "args: %s\n", formatArgs(args))
		}
	}
	return b.String()
}

// formatArgs prints bind arguments as %q prints a list of strings, a
// rank (an int64) as a number.
func formatArgs(args []any) string {
	out := make([]string, len(args))
	for i, a := range args {
		if n, ok := a.(int64); ok {
			out[i] = fmt.Sprint(n)
		} else {
			out[i] = fmt.Sprintf("%q", a)
		}
	}
	return "[" + strings.Join(out, " ") + "]"
}

// testCatalog is the catalog of the golden files: the PUMS demo table with a
// text column added, and a table whose declared name has capitals.
func testCatalog() *catalog.Config {
	num := func(name string, typ catalog.ColumnType, lo, hi float64) catalog.Column {
		return catalog.Column{Name: name, Source: name, Type: typ, Lower: &lo, Upper: &hi}
	}
	return &catalog.Config{Tables: []catalog.Table{
		{Name: "pums", Source: "pums", Columns: []catalog.Column{
			num("age", catalog.Integer, 0, 100),
			domain(num("sex", catalog.Integer, 0, 1), "0", "1"),
			domain(num("educ", catalog.Integer, 1, 16), "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16"),
			domain(num("race", catalog.Integer, 1, 6), "1", "2", "3", "4", "5", "6"),
			num("income", catalog.Real, 0, 500000),
			domain(num("married", catalog.Integer, 0, 1), "0", "1"),
			domain(catalog.Column{Name: "state", Source: "state", Type: catalog.Text}, "CA", "NY", "WA"),
			{Name: "name", Source: "name", Type: catalog.Text, PartitionSelection: true},
		}},
		{Name: "Visits", Source: "analytics.visits", Columns: []catalog.Column{
			num("Duration", catalog.Real, 0, 3600),
		}},
		{Name: "events", Source: "events", Columns: []catalog.Column{
			num("amount", catalog.Real, 0, 1000),
			num("balance", catalog.Real, -1000, 1000),
			dated(catalog.Date, "day", "2015-01-01", "2024-12-31"),
			dated(catalog.Timestamp, "at", "2023-11-15 06:00:00", "2024-02-10 18:00:00"),
			dated(catalog.Date, "week", "2024-03-04", "2024-03-08"),
			dated(catalog.Date, "born", "1900-01-01", "2024-12-31"),
			dated(catalog.Timestamp, "tick", "2024-03-01 09:00:30", "2024-03-01 11:30:00"),
		}},
	}}
}

// goldenNow is the time of CURDATE() and NOW() in the golden files.
var goldenNow = time.Date(2024, 3, 31, 15, 30, 45, 0, time.UTC)

// dated declares a date or timestamp column with its bounds.
func dated(typ catalog.ColumnType, name, lower, upper string) catalog.Column {
	c := catalog.Column{Name: name, Source: name, Type: typ}
	lo, err := c.ParseTemporal(lower)
	if err != nil {
		panic(err)
	}
	hi, err := c.ParseTemporal(upper)
	if err != nil {
		panic(err)
	}
	c.Lower, c.Upper = &lo, &hi
	return c
}

// domain declares a column's values (a GROUP BY key with a public domain).
func domain(c catalog.Column, values ...string) catalog.Column {
	c.Values = values
	return c
}

// TestParserResultsOutliveNextParse checks that a statement stays intact
// after the same Parser parses other text (the TiDB parser reuses its own
// result objects between calls).
func TestParserResultsOutliveNextParse(t *testing.T) {
	for _, sql := range []string{
		"SELECT AVG(age) AS a, COUNT(*) FROM pums WHERE state IN ('CA') AND age > 3",
		"SELECT FLOOR(age / 10) * 10 AS b, COUNT(*), SUM(age BETWEEN 1 AND 2) FROM pums WHERE state = 'CA' OR NOT age > 3 GROUP BY b",
	} {
		p := sqlrewrite.NewParser(testCatalog())
		first, err := p.Parse(sql)
		if err != nil {
			t.Fatal(err)
		}
		want := formatStatement(first)
		for _, next := range []string{
			"SELECT SUM(income) AS zzzzzzzzzzzzzzzzzz FROM pums WHERE state = 'NY' AND educ BETWEEN 1 AND 2",
			"SELECT FLOOR(income / 70000) AS zzzzzzz, SUM(CASE WHEN educ < 9 THEN 1 END) FROM pums WHERE state <> 'WA' OR age < 1 GROUP BY 1",
			"SELECT @@version_comment LIMIT 1",
			"SET @dp_epsilon = 1",
		} {
			if _, err := p.Parse(next); err != nil {
				t.Fatalf("%s: %v", next, err)
			}
		}
		if got := formatStatement(first); got != want {
			t.Errorf("got %v, want %v", got, want)
		}
	}
}

// TestOrderByValue: a window and a ranked GridSums with OrderByValue sort
// by the value they read (position 1), on MySQL without the USE INDEX ()
// of a filtered window, whatever the filter; without it, an unfiltered
// window sorts by the qualified column.
func TestOrderByValue(t *testing.T) {
	window := sqlrewrite.Fetch{Table: "t", Window: &sqlrewrite.Window{Column: "x", Lower: 0, Upper: 100, Offset: 5, Limit: 3}}
	grid := sqlrewrite.Fetch{Table: "t", GridSums: &sqlrewrite.GridSums{Column: "x", Lower: 0, Upper: 100, Unit: 1, Ranks: &sqlrewrite.RankSlice{Offset: 5, Limit: 3}}}
	filtered := []sqlrewrite.Condition{{Column: "k", Range: &sqlrewrite.Range{HasLower: true, Lower: 1}}}
	for _, d := range []sqlrewrite.Dialect{sqlrewrite.SQLite, sqlrewrite.PostgreSQL, sqlrewrite.MySQL} {
		for _, f := range []sqlrewrite.Fetch{window, grid} {
			for _, filter := range [][]sqlrewrite.Condition{nil, filtered} {
				f.Filter = filter
				q, _, err := sqlrewrite.Render(f, d)
				if err != nil {
					t.Fatal(err)
				}
				if filter == nil && d != sqlrewrite.PostgreSQL && !strings.Contains(q, " ORDER BY `t`.`x` LIMIT ") {
					t.Errorf("%v: %s, want ORDER BY the column", d, q)
				}
				f.OrderByValue = true
				if q, _, err = sqlrewrite.Render(f, d); err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(q, " ORDER BY 1 LIMIT ") || strings.Contains(q, "USE INDEX") {
					t.Errorf("%v with OrderByValue: %s, want ORDER BY 1 and no USE INDEX", d, q)
				}
			}
		}
	}
	if q, err := sqlrewrite.ColumnProbe("s.t", "x", sqlrewrite.MySQL); err != nil || q != "SELECT `s`.`t`.`x` FROM `s`.`t` LIMIT 0" {
		t.Errorf("sqlrewrite.ColumnProbe = %q, %v", q, err)
	}
}
