package catalog

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Interactive declares a table's interactive domain: a few columns, each
// categorical (a list of values) or bucketed numeric (public bucket edges),
// whose cross product is the finite domain X. Counting queries
// SELECT COUNT(*) FROM t WHERE <AND/OR/NOT of conditions on these columns>
// are answered over X by one mechanism instance per dataset (package
// planner's rule chooses the Median Mechanism or a one-shot noisy
// histogram), which spends Epsilon once for the whole interactive session.
//
// A row counts in X only when every domain column holds a declared value
// (categorical) or a number (bucketed): rows with NULL, or with a value
// missing from a categorical list, are outside X and never counted, even
// under NOT. A bucketed column's values outside the edges are counted in
// the first or last bucket, as the column's bounds clamp them.
type Interactive struct {
	// Columns are the domain's columns; the cell index is mixed radix,
	// the first column most significant.
	Columns []InteractiveColumn `yaml:"columns"`
	// Epsilon is spent once, when the instance is created, for every
	// counting query of every analyst on the table. Required.
	Epsilon float64 `yaml:"epsilon"`
	// Alpha is the target accuracy as a fraction of the (noisy) row count,
	// in (0, 1). Required.
	Alpha float64 `yaml:"alpha"`
	// Beta is the probability that the accuracy statement fails; default
	// DefaultInteractiveBeta.
	Beta float64 `yaml:"beta"`
	// PlannedQueries is the horizon of the accuracy statement (it sizes the
	// bounds, not the privacy); default DefaultInteractivePlannedQueries.
	PlannedQueries int `yaml:"planned_queries"`
	// Mechanism is auto (the planner's rule), median (the Median Mechanism,
	// MM-SVT) or histogram (a one-shot noisy histogram over X).
	Mechanism string `yaml:"mechanism"`
}

// InteractiveColumn is one column of an interactive domain: exactly one of
// Values (categorical) and Edges (bucketed numeric) is set.
type InteractiveColumn struct {
	// Name is a declared column of the table.
	Name string `yaml:"name"`
	// Values are the categories, in cell order: strings for a text column,
	// numbers for a numeric one.
	Values []string `yaml:"values"`
	// Edges e_0 < e_1 < … < e_k make k buckets [e_i, e_{i+1}) of a numeric
	// column (values below e_0 or from e_k on are clamped into the first
	// or last bucket).
	Edges []float64 `yaml:"edges"`
}

// The interactive mechanisms a configuration may name.
const (
	InteractiveAuto      = "auto"
	InteractiveMedian    = "median"
	InteractiveHistogram = "histogram"
)

// Defaults of Interactive.
const (
	DefaultInteractiveBeta           = 0.05
	DefaultInteractivePlannedQueries = 5000
)

// MaxInteractiveCells bounds |X|: the Median Mechanism's pool holds 200
// float64 per cell (mech.MMMaxCells).
const MaxInteractiveCells = 1 << 16

// Cells returns |X|, the product of the columns' sizes.
func (in *Interactive) Cells() int {
	n := 1
	for _, c := range in.Columns {
		n *= c.Size()
	}
	return n
}

// Size returns the number of values or buckets of the column.
func (c *InteractiveColumn) Size() int {
	if len(c.Edges) > 0 {
		return len(c.Edges) - 1
	}
	return len(c.Values)
}

// Bucketed reports whether the column is bucketed numeric.
func (c *InteractiveColumn) Bucketed() bool { return len(c.Edges) > 0 }

// NumericValues returns a numeric categorical column's values as numbers
// (validated at load).
func (c *InteractiveColumn) NumericValues() []float64 {
	out := make([]float64, len(c.Values))
	for i, v := range c.Values {
		out[i], _ = strconv.ParseFloat(v, 64)
	}
	return out
}

// Describe renders the column's cells for messages and EXPLAIN, e.g.
// "age in buckets [0, 10), [10, 20), …" or "sex in {0, 1}".
func (c *InteractiveColumn) Describe() string {
	if !c.Bucketed() {
		return fmt.Sprintf("%s in {%s}", c.Name, strings.Join(c.Values, ", "))
	}
	parts := make([]string, c.Size())
	for i := range parts {
		parts[i] = fmt.Sprintf("[%s, %s)", formatEdge(c.Edges[i]), formatEdge(c.Edges[i+1]))
	}
	return fmt.Sprintf("%s in buckets %s", c.Name, strings.Join(parts, ", "))
}

func formatEdge(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// applyDefaults fills in Beta, PlannedQueries and Mechanism.
func (in *Interactive) applyDefaults() {
	if in.Beta == 0 {
		in.Beta = DefaultInteractiveBeta
	}
	if in.PlannedQueries == 0 {
		in.PlannedQueries = DefaultInteractivePlannedQueries
	}
	if in.Mechanism == "" {
		in.Mechanism = InteractiveAuto
	}
}

// validate checks a table's interactive domain; f names the field.
func (in *Interactive) validate(f string, t *Table, p Privacy) error {
	if len(in.Columns) == 0 {
		return invalid(f+".columns", "at least one column is required")
	}
	seen := map[string]bool{}
	cells := 1
	for i := range in.Columns {
		c := &in.Columns[i]
		cf := fmt.Sprintf("%s.columns[%d]", f, i)
		col, ok := t.Column(c.Name)
		if !ok {
			return invalid(cf+".name", "%q is not a declared column of table %s", c.Name, t.Name)
		}
		c.Name = col.Name
		if seen[strings.ToLower(c.Name)] {
			return invalid(cf+".name", "duplicate column %q", c.Name)
		}
		seen[strings.ToLower(c.Name)] = true
		if err := c.validate(cf, col); err != nil {
			return err
		}
		cells *= c.Size()
		if cells > MaxInteractiveCells {
			return invalid(f+".columns", "the domain has more than %d cells (the product of the columns' sizes)", MaxInteractiveCells)
		}
	}
	if err := checkReleaseEpsilon(f+".epsilon", in.Epsilon); err != nil {
		return err
	}
	if in.Epsilon > p.MaxEpsilon {
		// The statement that creates the instance pays all of it.
		return invalid(f+".epsilon", "%g exceeds privacy.max_epsilon %g", in.Epsilon, p.MaxEpsilon)
	}
	if err := checkProbability(f+".alpha", in.Alpha); err != nil {
		return err
	}
	if err := checkProbability(f+".beta", in.Beta); err != nil {
		return err
	}
	if in.PlannedQueries < 1 || in.PlannedQueries > 1<<30 {
		return invalid(f+".planned_queries", "must be in [1, 2^30], got %d", in.PlannedQueries)
	}
	switch in.Mechanism {
	case InteractiveAuto, InteractiveMedian, InteractiveHistogram:
	default:
		return invalid(f+".mechanism", "must be auto, median or histogram, got %q", in.Mechanism)
	}
	return nil
}

// validate checks one domain column against its declaration.
func (c *InteractiveColumn) validate(f string, col *Column) error {
	switch {
	case col.Temporal():
		return invalid(f, "%s column %q cannot be in an interactive domain", col.Type, c.Name)
	case (len(c.Values) > 0) == (len(c.Edges) > 0):
		return invalid(f, "column %q needs exactly one of values (categorical) and edges (bucketed numeric)", c.Name)
	case c.Bucketed():
		if !col.Numeric() {
			return invalid(f+".edges", "only numeric columns can be bucketed; list the values of text column %q", c.Name)
		}
		if len(c.Edges) < 2 {
			return invalid(f+".edges", "at least two edges (one bucket) are required")
		}
		for i, e := range c.Edges {
			if math.IsNaN(e) || math.IsInf(e, 0) || i > 0 && !(e > c.Edges[i-1]) {
				return invalid(f+".edges", "edges must be finite and strictly increasing, got %v", c.Edges)
			}
		}
	default:
		seen := map[string]bool{}
		for j, v := range c.Values {
			if !ValidText(v) {
				return invalid(fmt.Sprintf("%s.values[%d]", f, j), "values must be valid UTF-8 without NUL bytes, got %q", v)
			}
			if col.Numeric() {
				x, err := strconv.ParseFloat(v, 64)
				if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
					return invalid(fmt.Sprintf("%s.values[%d]", f, j), "numeric column %q needs finite numbers, got %q", c.Name, v)
				}
				v = canonicalNumber(x)
				c.Values[j] = v
			}
			if seen[v] {
				return invalid(fmt.Sprintf("%s.values[%d]", f, j), "duplicate value %q", v)
			}
			seen[v] = true
		}
	}
	return nil
}
