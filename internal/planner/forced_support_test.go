package planner_test

import (
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestForcedMechanismNamesSQLForms: a forced mechanism that answers none
// of a statement's aggregates is refused with the aggregates it answers
// written as SQL, and the way back to auto; the message said "it answers
// quantile 0.5, quantile 0.9", names no client can write.
func TestForcedMechanismNamesSQLForms(t *testing.T) {
	cat := testCatalog()
	for _, c := range []struct {
		mechanism, sql, answers string
	}{
		{"exponential", "SELECT AVG(age) FROM pums", "it answers MEDIAN(col), PERCENTILE_CONT(col, p), MIN(col), MAX(col) ("},
		{"smooth", "SELECT AVG(age) FROM pums", "it answers MEDIAN(col) ("},
		{"laplace", "SELECT MEDIAN(age) FROM pums", "it answers COUNT(*), COUNT(col), COUNT(DISTINCT col), SUM(col), AVG(col), VARIANCE(col), STDDEV(col) ("},
		{"ptr", "SELECT AVG(age) FROM pums", "it answers MEDIAN(col), IQR(col), REGR_SLOPE(y, x), REGR_INTERCEPT(y, x) ("},
		{"trimmed", "SELECT MEDIAN(age) FROM pums", "it answers AVG(col) ("},
	} {
		st, err := sqlrewrite.NewParser(cat).Parse(c.sql)
		if err != nil {
			t.Fatal(err)
		}
		_, err = planner.New(cat).Plan(st.(*sqlrewrite.Select), planner.Settings{Epsilon: 1, Delta: 1e-6, Mechanism: c.mechanism})
		if err == nil {
			t.Errorf("%s with %s: planned, want a refusal", c.sql, c.mechanism)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, c.answers) || !strings.Contains(msg, "SET @dp_mechanism = 'auto'") {
			t.Errorf("%s with %s: %q, want %q and SET @dp_mechanism = 'auto'", c.sql, c.mechanism, msg, c.answers)
		}
	}
}
