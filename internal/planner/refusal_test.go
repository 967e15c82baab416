package planner_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestTinyEpsilonPTRRefusedNamingTheSmallest: a PTR release whose stability
// test would need a distance cap beyond 2^22 ranks (REGR_SLOPE at
// @dp_epsilon = 10^-6 ran 19 to 35 s, 10^-7 seven minutes, past the
// statement timeout, to answer NULL; 10^-9 would allocate tens of GB) is
// refused when planned, before anything is reserved, with 1231 naming the
// smallest @dp_epsilon that is accepted: that value plans, and 0.9 times it
// is refused again. The refusal is a function of the statement alone.
func TestTinyEpsilonPTRRefusedNamingTheSmallest(t *testing.T) {
	cat := testCatalog()
	p := planner.New(cat)
	parse := func(sql string) *sqlrewrite.Select {
		st, err := sqlrewrite.NewParser(cat).Parse(sql)
		if err != nil {
			t.Fatal(err)
		}
		return st.(*sqlrewrite.Select)
	}
	smallest := regexp.MustCompile(`the smallest @dp_epsilon this statement accepts at @dp_delta = 1e-07 is ([0-9]+(?:\.[0-9]+)?(?:e[+-][0-9]+)?)[ .]`)
	for _, tc := range []struct{ sql, mechanism string }{
		{"SELECT REGR_SLOPE(income, age) FROM pums", "auto"},
		{"SELECT REGR_INTERCEPT(income, age) FROM pums", "ptr"},
		{"SELECT IQR(income) FROM pums", "auto"},
		{"SELECT MEDIAN(income) FROM pums", "ptr"},
		{"SELECT AVG(age) FROM pums", "trimmed"},
		{"SELECT REGR_SLOPE(income, age), IQR(age) FROM pums", "auto"},
	} {
		for _, eps := range []float64{1e-6, 1e-7, 1e-9} {
			s := planner.Settings{Epsilon: eps, Delta: 1e-7, Mechanism: tc.mechanism, Trim: planner.DefaultTrim}
			_, err := p.Plan(parse(tc.sql), s)
			if dperr.KindOf(err) != dperr.InvalidValue {
				t.Fatalf("%s at ε = %g: got %v, want an InvalidValue refusal", tc.sql, eps, err)
			}
			m := smallest.FindStringSubmatch(err.Error())
			if m == nil || !strings.Contains(err.Error(), "beyond 2^22") {
				t.Fatalf("%s at ε = %g: %q names no smallest ε or no cap", tc.sql, eps, err)
			}
			least, perr := strconv.ParseFloat(m[1], 64)
			if perr != nil || !(least > eps) {
				t.Fatalf("%s at ε = %g: smallest ε %q", tc.sql, eps, m[1])
			}
			s.Epsilon = least
			if _, err := p.Plan(parse(tc.sql), s); err != nil {
				t.Errorf("%s at the named ε = %g: %v", tc.sql, least, err)
			}
			s.Epsilon = 0.9 * least
			if _, err := p.Plan(parse(tc.sql), s); dperr.KindOf(err) != dperr.InvalidValue {
				t.Errorf("%s at 0.9 × the named ε: got %v, want refused", tc.sql, err)
			}
			if eps == 1e-6 {
				t.Logf("%s (%s): smallest accepted ε %g", tc.sql, tc.mechanism, least)
			}
		}
	}
}

// TestRefusalSuggestsOnlyWhatHelps: a release that no @dp_epsilon up to the
// cap makes acceptable (PTR at δ > 0.5 per release) is refused without
// suggesting a larger ε, naming δ and the mechanism instead; one whose ε
// share is above what any release accepts says to lower ε.
func TestRefusalSuggestsOnlyWhatHelps(t *testing.T) {
	cat := testCatalog()
	p := planner.New(cat)
	for _, tc := range []struct {
		sql       string
		s         planner.Settings
		want, not string
	}{
		{"SELECT MEDIAN(income) FROM pums", planner.Settings{Epsilon: 1, Delta: 0.9, Mechanism: "ptr"},
			"no @dp_epsilon up to 100 makes it acceptable: change @dp_delta, or SET @dp_mechanism to another mechanism", "smallest @dp_epsilon"},
		{"SELECT MEDIAN(income) FROM pums", planner.Settings{Epsilon: 1e-5, Delta: 1e-7, Mechanism: "piecewise"},
			"the smallest @dp_epsilon this statement accepts at @dp_delta = 1e-07 is 1.6e-05. Why: ", "no @dp_epsilon"},
		{"SELECT AVG(income) FROM pums", planner.Settings{Epsilon: 150, Delta: 1e-7},
			"lower @dp_epsilon", "smallest @dp_epsilon"},
	} {
		st, err := sqlrewrite.NewParser(cat).Parse(tc.sql)
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Plan(st.(*sqlrewrite.Select), tc.s)
		if dperr.KindOf(err) != dperr.InvalidValue || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), tc.not) {
			t.Errorf("%s with %+v: got %v, want InvalidValue saying %q and not %q", tc.sql, tc.s, err, tc.want, tc.not)
		}
	}
}
