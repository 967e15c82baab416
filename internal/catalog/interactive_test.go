package catalog

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

const interactiveConfig = `
backend: {driver: sqlite, dsn: "data.db"}
users:
  - {name: alice, password_hash: "*0123456789ABCDEF0123456789ABCDEF01234567", epsilon: 5, delta: 0}
tables:
  - name: pums
    epsilon: 5
    columns:
      - {name: age, type: integer, lower: 0, upper: 100}
      - {name: sex, type: integer, lower: 0, upper: 1}
      - {name: state, type: text}
    interactive:
      columns:
        - {name: AGE, edges: [0, 18, 65, 100]}
        - {name: sex, values: [0, 1.0]}
        - {name: state, values: [CA, NY]}
      epsilon: 1
      alpha: 0.05
`

func TestInteractiveDefaultsAndCells(t *testing.T) {
	c, err := ParseConfig(strings.NewReader(interactiveConfig))
	if err != nil {
		t.Fatal(err)
	}
	in := c.Tables[0].Interactive
	if got, want := in.Cells(), 3*2*2; got != want {
		t.Errorf("cells: got %v, want %v", got, want)
	}
	if in.Beta != DefaultInteractiveBeta || in.PlannedQueries != DefaultInteractivePlannedQueries || in.Mechanism != InteractiveAuto {
		t.Errorf("defaults: got %+v", in)
	}
	if got, want := in.Columns[0].Name, "age"; got != want {
		t.Errorf("column name: got %v, want %v (the declared spelling)", got, want)
	}
	if got, want := in.Columns[1].Values[1], "1"; got != want {
		t.Errorf("numeric value: got %v, want %v (canonical)", got, want)
	}
}

// TestInteractiveValidationNamesTheField changes one thing and checks the
// error names the field.
func TestInteractiveValidationNamesTheField(t *testing.T) {
	for _, tc := range []struct{ from, to, field string }{
		{"{name: AGE, edges", "{name: height, edges", "tables[0].interactive.columns[0].name"},
		{"edges: [0, 18, 65, 100]", "edges: [0, 65, 18]", "tables[0].interactive.columns[0].edges"},
		{"edges: [0, 18, 65, 100]", "edges: [0]", "tables[0].interactive.columns[0].edges"},
		{"{name: state, values: [CA, NY]}", "{name: state, edges: [0, 1]}", "tables[0].interactive.columns[2].edges"},
		{"{name: sex, values: [0, 1.0]}", "{name: sex, values: [0, one]}", "tables[0].interactive.columns[1].values[1]"},
		{"{name: sex, values: [0, 1.0]}", "{name: sex, values: [0, 0.0]}", "tables[0].interactive.columns[1].values[1]"},
		// A category with a NUL byte: PostgreSQL rejects it as a bind argument.
		{"{name: state, values: [CA, NY]}", `{name: state, values: [CA, "N\0Y"]}`, "tables[0].interactive.columns[2].values[1]"},
		{"{name: sex, values: [0, 1.0]}", "{name: sex}", "tables[0].interactive.columns[1]"},
		{"{name: state, values: [CA, NY]}", "{name: sex, values: [0]}", "tables[0].interactive.columns[2].name"},
		{"epsilon: 1\n", "epsilon: 0\n", "tables[0].interactive.epsilon"},
		// Above privacy.max_epsilon (10): the statement that creates the
		// instance pays all of it.
		{"epsilon: 1\n      alpha", "epsilon: 11\n      alpha", "tables[0].interactive.epsilon"},
		{"alpha: 0.05", "alpha: 1.5", "tables[0].interactive.alpha"},
		{"alpha: 0.05", "alpha: 0.05\n      mechanism: svt", "tables[0].interactive.mechanism"},
		{"alpha: 0.05", "alpha: 0.05\n      planned_queries: -3", "tables[0].interactive.planned_queries"},
	} {
		cfg := strings.Replace(interactiveConfig, tc.from, tc.to, 1)
		_, err := ParseConfig(strings.NewReader(cfg))
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != tc.field {
			t.Errorf("%s → %s: got %v, want an error naming %s", tc.from, tc.to, err, tc.field)
		}
	}
}

// TestInteractiveDomainTooLarge: 2·2·40000 cells exceed 2^16.
func TestInteractiveDomainTooLarge(t *testing.T) {
	values := make([]string, 40000)
	for i := range values {
		values[i] = "v" + strconv.Itoa(i)
	}
	cfg := strings.Replace(interactiveConfig, "edges: [0, 18, 65, 100]", "values: [0, 1]", 1)
	cfg = strings.Replace(cfg, "values: [CA, NY]", "values: ["+strings.Join(values, ", ")+"]", 1)
	_, err := ParseConfig(strings.NewReader(cfg))
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "tables[0].interactive.columns" {
		t.Errorf("got %v, want an error naming tables[0].interactive.columns", err)
	}
}

// TestInteractiveRequiresTableCap: an interactive instance answers every
// analyst once built, so the table must declare a cap that admits its ε.
func TestInteractiveRequiresTableCap(t *testing.T) {
	for _, tc := range []struct{ from, to string }{
		{"    epsilon: 5\n", ""},
		{"    epsilon: 5\n", "    epsilon: 0.5\n"},
	} {
		_, err := ParseConfig(strings.NewReader(strings.Replace(interactiveConfig, tc.from, tc.to, 1)))
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != "tables[0].epsilon" {
			t.Errorf("%q → %q: got %v, want an error naming tables[0].epsilon", tc.from, tc.to, err)
		}
	}
}
