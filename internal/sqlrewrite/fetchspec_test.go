package sqlrewrite_test

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// parseFetch reads the compact fetch description of the fetch-sql golden
// command, one element per line:
//
//	table pums                              Fetch.Table (may be schema.name)
//	partitions pums_a,archive.pums_b        Fetch.Partitions
//	booleans paid,member                    Fetch.Booleans (PostgreSQL booleans)
//	filter age [18, 65)                     a Range; ( ) open, [ ] closed, -inf/inf unbounded
//	filter state in ("CA", "NY")            an In; strings in double quotes, numbers bare
//	boolean or(age [18, 65), not(sex in (1)))
//	                                        Fetch.Boolean: and(...), or(...), not(...) of
//	                                        conditions, any number of arguments
//	summary count(*)                        CountAll
//	summary count(age)                      CountNonNull
//	summary sum(age) [0, 100]               ClampedSum
//	summary sumsq(age) [0, 100]             ClampedSumSquares
//	summary distinct(age)                   CountDistinctValues
//	window age [0, 100] offset 10 limit 5   Window (a trailing " grid 0.0625":
//	                                        GridUnit, then " grouped": Grouped)
//	gridsums age [0, 100] unit 0.0625       GridSums (a trailing " sumonly":
//	                                        SumOnly, then " float": FloatSum,
//	                                        then " ranks offset 10 limit 5":
//	                                        Ranks)
//	pairs income [0, 500000] age [0, 100]  Pairs (y then x)
//	histogram income [0, 500000] bins 10    Histogram
//	cells sex in (0, 1)                     a categorical dimension of Cells
//	cells age edges (0, 10, 20)             a bucketed dimension of Cells
//	cells id by value (3, 7)                a categorical dimension grouped by value (CellDim.ByValue)
//	cells day date month 2015-01-01 2024-12-31
//	                                        a date dimension (parts year, month,
//	                                        day, monthofyear, quarter, dayofweek,
//	                                        dayofmonth, week, isoweek; the last
//	                                        six take a cycle: (1, 2, 3))
//	filter day date 2020-01-01 until 2021-01-01
//	                                        a date range [lo, hi)
//	cells age tiers [-inf, 18) [18, 64]     a tiered dimension (first match, then ELSE)
//	cells age tiers [18, 64] else-unreadable
//	                                        the unreadable values in the ELSE
//	                                        cell (UnreadableInElse)
//	cells age tiers [18, 64] null-unreadable
//	                                        the unreadable values in a cell
//	                                        of their own (UnreadableInNull)
//	grouped                                 (last) the cells and summary
//	                                        lines so far become a GroupedSummary
//	grouped histogram                       (last) the cells and histogram
//	                                        lines so far become a GroupedHistogram
//	grouped gridsums                        (last) the cells and gridsums
//	                                        lines so far become a GroupedGridSums
//	keys name                               KeyCounts (" numeric": Numeric)
//	unit person_id rows 1 groups 2 order a,b by key
//	                                        (after keys) a UnitBound by the
//	                                        private key, salt 0123…cdef twice
//	derived dpproxy_e0 age [0, 100] + income [0, 500000]
//	                                        a DerivedColumn: a column, or two
//	                                        joined by + - * /, with their bounds
//	profile age [0, 100]                    (last) a Profile; the summary lines
//	                                        so far become its carried terms
//	                                        (" bins 16": grouped by 16 bins)
func parseFetch(input string) (sqlrewrite.Fetch, error) {
	var f sqlrewrite.Fetch
	for _, line := range strings.Split(strings.TrimSpace(input), "\n") {
		line = strings.TrimSpace(line)
		if err := parseFetchLine(&f, line); err != nil {
			return f, fmt.Errorf("%q: %w", line, err)
		}
	}
	return f, nil
}

var datePartNames = map[string]sqlrewrite.DatePart{"year": sqlrewrite.PartYear, "month": sqlrewrite.PartMonth, "day": sqlrewrite.PartDay,
	"monthofyear": sqlrewrite.PartMonthOfYear, "quarter": sqlrewrite.PartQuarterOfYear, "dayofweek": sqlrewrite.PartDayOfWeek, "dayofmonth": sqlrewrite.PartDayOfMonth,
	"week": sqlrewrite.PartWeekOfYear, "isoweek": sqlrewrite.PartISOWeek, "hour": sqlrewrite.PartHour, "minute": sqlrewrite.PartMinute}

var (
	tableLine      = regexp.MustCompile(`^table (\S+)$`)
	partitionsLine = regexp.MustCompile(`^partitions (\S+)$`)
	booleansLine   = regexp.MustCompile(`^booleans (\S+)$`)
	filterLine     = regexp.MustCompile(`^filter (.*)$`)
	booleanLine    = regexp.MustCompile(`^boolean (.*)$`)
	inPrefix       = regexp.MustCompile(`^(\S+) in \(`)
	nullPrefix     = regexp.MustCompile(`^(\S+) is (not )?null( \[text\])?`)
	orNullPrefix   = regexp.MustCompile(`^ or null( \[text\])?`)
	rangePrefix    = regexp.MustCompile(`^(\S+) ([\[(])([^\s,]+), ([^\s\])]+)([\])])`)
	countAllLine   = regexp.MustCompile(`^summary count\(\*\)$`)
	termLine       = regexp.MustCompile(`^summary (count|sum|sumsq|distinct)\((\S+)\)(?: \[(\S+), (\S+)\])?$`)
	windowLine     = regexp.MustCompile(`^window (\S+) \[(\S+), (\S+)\] offset (-?\d+) limit (-?\d+)(?: grid (\S+))?( grouped)?$`)
	gridSumsLine   = regexp.MustCompile(`^gridsums (\S+) \[(\S+), (\S+)\] unit (\S+)( sumonly)?( float)?(?: ranks offset (-?\d+) limit (-?\d+))?$`)
	pairsLine      = regexp.MustCompile(`^pairs (\S+) \[(\S+), (\S+)\] (\S+) \[(\S+), (\S+)\]$`)
	histogramLine  = regexp.MustCompile(`^histogram (\S+) \[(\S+), (\S+)\] bins (-?\d+)$`)
	cellsLine      = regexp.MustCompile(`^cells (\S+) (in|edges|by value) \((.*)\)$`)
	// cells day date|timestamp year|month|day|monthofyear|quarter|dayofweek|dayofmonth 2015-01-01 2024-12-31 [(cycle)]
	dateCellsLine = regexp.MustCompile(`^cells (\S+) (date|timestamp) (\w+) (\S+) (\S+)(?: \((.*)\))?$`)
	// filter day date 2020-01-01 until 2021-01-01: a date range [lo, hi)
	dateFilterLine = regexp.MustCompile(`^filter (\S+) (date|timestamp) (\S+) until (\S+)$`)
	tiersLine      = regexp.MustCompile(`^cells (\S+) tiers (.*)$`)
	keysLine       = regexp.MustCompile(`^keys (\S+)( numeric)?$`)
	unitKeyLine    = regexp.MustCompile(`^unit (\S+) rows (\d+) groups (\d+) order (\S+) by key$`)
	profileLine    = regexp.MustCompile(`^profile (\S+) \[(\S+), (\S+)\]( bins (\d+))?$`)
	derivedLine    = regexp.MustCompile(`^derived (\S+) (\S+) \[(\S+), (\S+)\](?: ([-+*/]) (\S+) \[(\S+), (\S+)\])?$`)
)

func parseFetchLine(f *sqlrewrite.Fetch, line string) error {
	var nums numbers
	if m := dateFilterLine.FindStringSubmatch(line); m != nil {
		c := catalog.Column{Type: catalog.ColumnType(m[2])}
		lo, err := c.ParseTemporal(m[3])
		if err != nil {
			return err
		}
		hi, err := c.ParseTemporal(m[4])
		if err != nil {
			return err
		}
		f.Filter = append(f.Filter, sqlrewrite.Condition{Column: m[1], Temporal: c.Type,
			Range: &sqlrewrite.Range{Lower: lo, Upper: hi, HasLower: true, HasUpper: true, UpperOpen: true}})
		return nil
	}
	if m := tableLine.FindStringSubmatch(line); m != nil {
		f.Table = m[1]
		return nil
	}
	if m := partitionsLine.FindStringSubmatch(line); m != nil {
		f.Partitions = strings.Split(m[1], ",")
		return nil
	}
	if m := booleansLine.FindStringSubmatch(line); m != nil {
		f.Booleans = strings.Split(m[1], ",")
		return nil
	}
	if m := filterLine.FindStringSubmatch(line); m != nil {
		c, rest, err := parseCondition(m[1])
		if err == nil && rest != "" {
			err = fmt.Errorf("trailing %q", rest)
		}
		f.Filter = append(f.Filter, c)
		return err
	}
	if m := booleanLine.FindStringSubmatch(line); m != nil {
		pp := &predicateParser{rest: m[1]}
		p, err := pp.predicate()
		if err == nil && pp.rest != "" {
			err = fmt.Errorf("trailing %q", pp.rest)
		}
		f.Boolean = p
		return err
	}
	if countAllLine.MatchString(line) {
		f.Summary = append(f.Summary, sqlrewrite.SummaryTerm{Kind: sqlrewrite.CountAll})
		return nil
	}
	if m := termLine.FindStringSubmatch(line); m != nil {
		kind := map[string]sqlrewrite.TermKind{"count": sqlrewrite.CountNonNull, "sum": sqlrewrite.ClampedSum, "sumsq": sqlrewrite.ClampedSumSquares, "distinct": sqlrewrite.CountDistinctValues}[m[1]]
		t := sqlrewrite.SummaryTerm{Kind: kind, Column: m[2]}
		if m[3] != "" {
			t.Lower, t.Upper = nums.float(m[3]), nums.float(m[4])
		}
		f.Summary = append(f.Summary, t)
		return nums.err
	}
	if m := windowLine.FindStringSubmatch(line); m != nil {
		f.Window = &sqlrewrite.Window{Column: m[1], Lower: nums.float(m[2]), Upper: nums.float(m[3]),
			Offset: nums.int(m[4]), Limit: nums.int(m[5]), Grouped: m[7] != ""}
		if m[6] != "" {
			f.Window.GridUnit = nums.float(m[6])
		}
		return nums.err
	}
	if m := gridSumsLine.FindStringSubmatch(line); m != nil {
		f.GridSums = &sqlrewrite.GridSums{Column: m[1], Lower: nums.float(m[2]), Upper: nums.float(m[3]), Unit: nums.float(m[4]), SumOnly: m[5] != "", FloatSum: m[6] != ""}
		if m[7] != "" {
			f.GridSums.Ranks = &sqlrewrite.RankSlice{Offset: nums.int(m[7]), Limit: nums.int(m[8])}
		}
		return nums.err
	}
	if m := pairsLine.FindStringSubmatch(line); m != nil {
		f.Pairs = &sqlrewrite.Pairs{Y: m[1], YLower: nums.float(m[2]), YUpper: nums.float(m[3]),
			X: m[4], XLower: nums.float(m[5]), XUpper: nums.float(m[6])}
		return nums.err
	}
	if m := histogramLine.FindStringSubmatch(line); m != nil {
		f.Histogram = &sqlrewrite.Histogram{Column: m[1], Lower: nums.float(m[2]), Upper: nums.float(m[3]),
			Bins: int(nums.int(m[4]))}
		return nums.err
	}
	if m := dateCellsLine.FindStringSubmatch(line); m != nil {
		if f.Cells == nil {
			f.Cells = &sqlrewrite.Cells{}
		}
		c := catalog.Column{Type: catalog.ColumnType(m[2])}
		lo, err := c.ParseTemporal(m[4])
		if err != nil {
			return err
		}
		hi, err := c.ParseTemporal(m[5])
		if err != nil {
			return err
		}
		part, ok := datePartNames[m[3]]
		if !ok {
			return fmt.Errorf("unknown date part %q", m[3])
		}
		axis := &sqlrewrite.DateAxis{Type: c.Type, Part: part, Lower: lo, Upper: hi}
		if m[6] != "" {
			vals, err := parseValues(m[6])
			if err != nil {
				return err
			}
			for _, v := range vals {
				axis.Cycle = append(axis.Cycle, int(v.Num))
			}
		}
		f.Cells.Dims = append(f.Cells.Dims, sqlrewrite.CellDim{Column: m[1], Date: axis})
		return nil
	}
	if m := cellsLine.FindStringSubmatch(line); m != nil {
		if f.Cells == nil {
			f.Cells = &sqlrewrite.Cells{}
		}
		vals, err := parseValues(m[3])
		d := sqlrewrite.CellDim{Column: m[1], Values: vals, ByValue: m[2] == "by value"}
		if m[2] == "edges" {
			d.Values = nil
			for _, v := range vals {
				d.Edges = append(d.Edges, sqlrewrite.Edge{Num: v.Num})
			}
		}
		f.Cells.Dims = append(f.Cells.Dims, d)
		return err
	}
	if m := tiersLine.FindStringSubmatch(line); m != nil {
		if f.Cells == nil {
			f.Cells = &sqlrewrite.Cells{}
		}
		d := sqlrewrite.CellDim{Column: m[1]}
		rest, inElse := strings.CutSuffix(m[2], " else-unreadable")
		rest, inNull := strings.CutSuffix(rest, " null-unreadable")
		switch {
		case inElse:
			d.Unreadable = sqlrewrite.UnreadableInElse
		case inNull:
			d.Unreadable = sqlrewrite.UnreadableInNull
		}
		for ; rest != ""; rest = strings.TrimPrefix(rest, " ") {
			c, after, err := parseCondition(m[1] + " " + rest)
			if err != nil {
				return err
			}
			if c.Range == nil {
				return fmt.Errorf("tiers need ranges, got %q", rest)
			}
			d.Tiers, rest = append(d.Tiers, *c.Range), after
		}
		f.Cells.Dims = append(f.Cells.Dims, d)
		return nil
	}
	if line == "grouped histogram" {
		if f.Cells == nil || f.Histogram == nil {
			return fmt.Errorf("grouped histogram needs cells and histogram lines before it")
		}
		f.GroupedHist = &sqlrewrite.GroupedHistogram{Dims: f.Cells.Dims, Histogram: *f.Histogram}
		f.Cells, f.Histogram = nil, nil
		return nil
	}
	if line == "grouped gridsums" {
		if f.Cells == nil || f.GridSums == nil {
			return fmt.Errorf("grouped gridsums needs cells and gridsums lines before it")
		}
		f.GroupedGrid = &sqlrewrite.GroupedGridSums{Dims: f.Cells.Dims, Grid: *f.GridSums}
		f.Cells, f.GridSums = nil, nil
		return nil
	}
	if line == "grouped" {
		if f.Cells == nil || len(f.Summary) == 0 {
			return fmt.Errorf("grouped needs cells and summary lines before it")
		}
		f.Grouped = &sqlrewrite.GroupedSummary{Dims: f.Cells.Dims, Terms: f.Summary}
		f.Cells, f.Summary = nil, nil
		return nil
	}
	if m := profileLine.FindStringSubmatch(line); m != nil {
		f.Profile = &sqlrewrite.Profile{Column: m[1], Lower: nums.float(m[2]), Upper: nums.float(m[3]), Terms: f.Summary}
		if m[4] != "" {
			f.Profile.Bins = int(nums.int(m[5]))
		}
		f.Summary = nil
		return nums.err
	}
	if m := keysLine.FindStringSubmatch(line); m != nil {
		f.Keys = &sqlrewrite.KeyCounts{Column: m[1], Numeric: m[2] != ""}
		return nil
	}
	if m := unitKeyLine.FindStringSubmatch(line); m != nil {
		if f.Keys == nil {
			return fmt.Errorf("unit ... by key needs a keys line before it")
		}
		f.Unit = &sqlrewrite.UnitBound{Column: m[1], MaxRows: nums.int(m[2]), MaxGroups: nums.int(m[3]), Order: strings.Split(m[4], ","),
			Salt: strings.Repeat("0123456789abcdef", 2), Key: f.Keys.Column, KeyNumeric: f.Keys.Numeric}
		return nums.err
	}
	if m := derivedLine.FindStringSubmatch(line); m != nil {
		e := &sqlrewrite.RowExpr{Kind: sqlrewrite.RowColumn, Column: m[2], Lower: nums.float(m[3]), Upper: nums.float(m[4])}
		if m[5] != "" {
			e = &sqlrewrite.RowExpr{Kind: sqlrewrite.RowOp, Op: m[5][0], Args: []*sqlrewrite.RowExpr{e,
				{Kind: sqlrewrite.RowColumn, Column: m[6], Lower: nums.float(m[7]), Upper: nums.float(m[8])}}}
		}
		f.Derived = append(f.Derived, sqlrewrite.DerivedColumn{Name: m[1], Expr: e})
		return nums.err
	}
	return fmt.Errorf("unknown fetch line")
}

// numbers parses numbers and keeps the first error.
type numbers struct{ err error }

func (n *numbers) float(s string) float64 {
	switch s {
	case "nan":
		return math.NaN()
	case "inf":
		return math.Inf(1)
	case "-inf":
		return math.Inf(-1)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && n.err == nil {
		n.err = err
	}
	return f
}

func (n *numbers) int(s string) int64 {
	i, err := strconv.ParseInt(s, 10, 64)
	if err != nil && n.err == nil {
		n.err = err
	}
	return i
}

// parseValues reads a comma-separated list of double-quoted strings,
// numbers and NULL (the NULL group; text when the list's first value is).
func parseValues(s string) ([]sqlrewrite.Value, error) {
	var vals []sqlrewrite.Value
	for s = strings.TrimSpace(s); s != ""; {
		if rest, ok := strings.CutPrefix(s, "NULL"); ok {
			vals = append(vals, sqlrewrite.Value{Null: true, IsText: len(vals) > 0 && vals[0].IsText})
			s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), ","))
			continue
		}
		if strings.HasPrefix(s, `"`) {
			q, err := strconv.QuotedPrefix(s)
			if err != nil {
				return nil, err
			}
			str, _ := strconv.Unquote(q)
			vals = append(vals, sqlrewrite.Value{Str: str, IsText: true})
			s = s[len(q):]
		} else {
			end := strings.IndexByte(s, ',')
			if end < 0 {
				end = len(s)
			}
			var nums numbers
			vals = append(vals, sqlrewrite.Value{Num: nums.float(strings.TrimSpace(s[:end]))})
			if nums.err != nil {
				return nil, nums.err
			}
			s = s[end:]
		}
		s = strings.TrimPrefix(strings.TrimSpace(s), ",")
		s = strings.TrimSpace(s)
	}
	return vals, nil
}

// parseCondition reads one condition at the start of s, as formatCondition
// prints it, and returns what follows it.
func parseCondition(s string) (c sqlrewrite.Condition, rest string, err error) {
	if m := nullPrefix.FindStringSubmatch(s); m != nil {
		return sqlrewrite.Condition{Column: m[1], IsNull: true, Complement: m[2] != "", Text: m[3] != ""}, s[len(m[0]):], nil
	}
	if strings.HasPrefix(s, "not ") {
		c, rest, err := parseCondition(s[len("not "):])
		m := orNullPrefix.FindStringSubmatch(rest)
		if err == nil && m == nil {
			err = fmt.Errorf("no \"or null\" after %q", s)
		}
		if err != nil {
			return c, "", err
		}
		c.Complement, c.Text = true, m[1] != ""
		return c, rest[len(m[0]):], nil
	}
	if m := inPrefix.FindStringSubmatch(s); m != nil {
		rest = s[len(m[0]):]
		end, err := closingParen(rest)
		if err != nil {
			return c, "", err
		}
		vals, err := parseValues(rest[:end])
		return sqlrewrite.Condition{Column: m[1], In: vals}, rest[end+1:], err
	}
	if m := rangePrefix.FindStringSubmatch(s); m != nil {
		var nums numbers
		r := &sqlrewrite.Range{LowerOpen: m[2] == "(", UpperOpen: m[5] == ")"}
		if m[3] != "-inf" {
			r.Lower, r.HasLower = nums.float(m[3]), true
		}
		if m[4] != "inf" {
			r.Upper, r.HasUpper = nums.float(m[4]), true
		}
		return sqlrewrite.Condition{Column: m[1], Range: r}, s[len(m[0]):], nums.err
	}
	return c, "", fmt.Errorf("no condition at %q", s)
}

// closingParen is the index of the first ")" in s outside double quotes.
func closingParen(s string) (int, error) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			q, err := strconv.QuotedPrefix(s[i:])
			if err != nil {
				return 0, err
			}
			i += len(q) - 1
		case ')':
			return i, nil
		}
	}
	return 0, fmt.Errorf("no closing parenthesis in %q", s)
}

// predicateParser reads the predicate syntax of formatPredicate from rest.
type predicateParser struct{ rest string }

func (pp *predicateParser) predicate() (*sqlrewrite.Predicate, error) {
	if rest, ok := strings.CutPrefix(pp.rest, "never"); ok {
		pp.rest = rest
		return &sqlrewrite.Predicate{Op: sqlrewrite.Never}, nil
	}
	for op, name := range predicateOps {
		if !strings.HasPrefix(pp.rest, name+"(") {
			continue
		}
		pp.rest = pp.rest[len(name)+1:]
		p := &sqlrewrite.Predicate{Op: op}
		for {
			a, err := pp.predicate()
			if err != nil {
				return nil, err
			}
			p.Args = append(p.Args, a)
			switch {
			case strings.HasPrefix(pp.rest, ")"):
				pp.rest = pp.rest[1:]
				return p, nil
			case strings.HasPrefix(pp.rest, ", "):
				pp.rest = pp.rest[2:]
			default:
				return nil, fmt.Errorf("want \", \" or \")\" at %q", pp.rest)
			}
		}
	}
	c, rest, err := parseCondition(pp.rest)
	pp.rest = rest
	return &sqlrewrite.Predicate{Op: sqlrewrite.Leaf, Leaf: &c}, err
}
