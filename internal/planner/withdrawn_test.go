package planner_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestWithdrawnMechanismIsRefusedNamingPtr: 'ptr-robust' is refused (1235)
// as not available whatever the statement asks (it used to name an empty
// list of aggregates for MEDIAN and IQR), naming 'ptr' and the mechanisms
// that answer MEDIAN and IQR; it is not among the names offered as valid,
// and an unknown name is still an invalid setting.
func TestWithdrawnMechanismIsRefusedNamingPtr(t *testing.T) {
	cat := testCatalog()
	p := planner.New(cat)
	parser := sqlrewrite.NewParser(cat)
	for _, sql := range []string{
		"SELECT MEDIAN(income) FROM pums",
		"SELECT IQR(income) FROM pums",
		"SELECT REGR_SLOPE(income, age) FROM pums",
		"SELECT COUNT(*) FROM pums",
	} {
		st, err := parser.Parse(sql)
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Plan(st.(*sqlrewrite.Select), planner.Settings{Epsilon: 1, Delta: 1e-6, Mechanism: "ptr-robust"})
		for _, want := range []string{"mechanism 'ptr-robust' is not available", "SET @dp_mechanism = 'ptr'",
			"MEDIAN is answered by exponential, permute-flip, piecewise, inverse, smooth, preprocess, ptr", "IQR by ptr"} {
			if dperr.KindOf(err) != dperr.Unsupported || err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: got %v, want 1235 containing %q", sql, err, want)
			}
		}
	}
	if err := p.Withdrawn("ptr-robust"); err == nil {
		t.Error("Withdrawn(ptr-robust): nil")
	}
	if err := p.Withdrawn("ptr"); err != nil {
		t.Errorf("Withdrawn(ptr): %v", err)
	}
	if names := p.MechanismNames(); slices.Contains(names, "ptr-robust") || !slices.Contains(names, "ptr") {
		t.Errorf("MechanismNames: %v", names)
	}
	st, _ := parser.Parse("SELECT COUNT(*) FROM pums")
	_, err := p.Plan(st.(*sqlrewrite.Select), planner.Settings{Epsilon: 1, Mechanism: "nosuch"})
	if dperr.KindOf(err) != dperr.InvalidValue || strings.Contains(err.Error(), "ptr-robust") {
		t.Errorf("unknown mechanism: got %v, want 1231 without ptr-robust among the valid names", err)
	}
}
