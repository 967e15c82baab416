package sqlrewrite_test

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// parseFetch reads the compact fetch description of the fetch-sql golden
// command, one element per line:
//
//	table pums                              Fetch.Table (may be schema.name)
//	filter age [18, 65)                     a Range; ( ) open, [ ] closed, -inf/inf unbounded
//	filter state in ("CA", "NY")            an In; strings in double quotes, numbers bare
//	summary count(*)                        CountAll
//	summary count(age)                      CountNonNull
//	summary sum(age) [0, 100]               ClampedSum
//	summary sumsq(age) [0, 100]             ClampedSumSquares
//	window age [0, 100] offset 10 limit 5   Window
//	histogram income [0, 500000] bins 10    Histogram
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

var (
	tableLine     = regexp.MustCompile(`^table (\S+)$`)
	inLine        = regexp.MustCompile(`^filter (\S+) in \((.*)\)$`)
	rangeLine     = regexp.MustCompile(`^filter (\S+) ([\[(])(\S+), (\S+)([\])])$`)
	countAllLine  = regexp.MustCompile(`^summary count\(\*\)$`)
	termLine      = regexp.MustCompile(`^summary (count|sum|sumsq)\((\S+)\)(?: \[(\S+), (\S+)\])?$`)
	windowLine    = regexp.MustCompile(`^window (\S+) \[(\S+), (\S+)\] offset (-?\d+) limit (-?\d+)$`)
	histogramLine = regexp.MustCompile(`^histogram (\S+) \[(\S+), (\S+)\] bins (-?\d+)$`)
)

func parseFetchLine(f *sqlrewrite.Fetch, line string) error {
	var nums numbers
	if m := tableLine.FindStringSubmatch(line); m != nil {
		f.Table = m[1]
		return nil
	}
	if m := inLine.FindStringSubmatch(line); m != nil {
		vals, err := parseValues(m[2])
		f.Filter = append(f.Filter, sqlrewrite.Condition{Column: m[1], In: vals})
		return err
	}
	if m := rangeLine.FindStringSubmatch(line); m != nil {
		r := &sqlrewrite.Range{LowerOpen: m[2] == "(", UpperOpen: m[5] == ")"}
		if m[3] != "-inf" {
			r.Lower, r.HasLower = nums.float(m[3]), true
		}
		if m[4] != "inf" {
			r.Upper, r.HasUpper = nums.float(m[4]), true
		}
		f.Filter = append(f.Filter, sqlrewrite.Condition{Column: m[1], Range: r})
		return nums.err
	}
	if countAllLine.MatchString(line) {
		f.Summary = append(f.Summary, sqlrewrite.SummaryTerm{Kind: sqlrewrite.CountAll})
		return nil
	}
	if m := termLine.FindStringSubmatch(line); m != nil {
		kind := map[string]sqlrewrite.TermKind{"count": sqlrewrite.CountNonNull, "sum": sqlrewrite.ClampedSum, "sumsq": sqlrewrite.ClampedSumSquares}[m[1]]
		t := sqlrewrite.SummaryTerm{Kind: kind, Column: m[2]}
		if m[3] != "" {
			t.Lower, t.Upper = nums.float(m[3]), nums.float(m[4])
		}
		f.Summary = append(f.Summary, t)
		return nums.err
	}
	if m := windowLine.FindStringSubmatch(line); m != nil {
		f.Window = &sqlrewrite.Window{Column: m[1], Lower: nums.float(m[2]), Upper: nums.float(m[3]),
			Offset: nums.int(m[4]), Limit: nums.int(m[5])}
		return nums.err
	}
	if m := histogramLine.FindStringSubmatch(line); m != nil {
		f.Histogram = &sqlrewrite.Histogram{Column: m[1], Lower: nums.float(m[2]), Upper: nums.float(m[3]),
			Bins: int(nums.int(m[4]))}
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

// parseValues reads a comma-separated list of double-quoted strings and numbers.
func parseValues(s string) ([]sqlrewrite.Value, error) {
	var vals []sqlrewrite.Value
	for s = strings.TrimSpace(s); s != ""; {
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
