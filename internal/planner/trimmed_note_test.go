package planner_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestTrimmedNoReplyNamesANoisyCount: the trimmed mean's No Reply for a
// table too small at this ε and δ gives the size as the noisy count it is
// ("about 1162 rows are too few" on a 1000-row table read as a true size).
func TestTrimmedNoReplyNamesANoisyCount(t *testing.T) {
	cat := testCatalog()
	p := planner.New(cat)
	st, err := sqlrewrite.NewParser(cat).Parse("SELECT AVG(age) FROM pums")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := p.Plan(st.(*sqlrewrite.Select), planner.Settings{Epsilon: 0.1, Delta: 1e-7, Mechanism: "trimmed", Trim: planner.DefaultTrim})
	if err != nil {
		t.Fatal(err)
	}
	ages := make([]float64, 1000)
	for i := range ages {
		ages[i] = float64(i % 100)
	}
	slices.Sort(ages)
	est, err := runReleaseOn(rand.NewChaCha8([32]byte{3}), plan.Releases[0], ages)
	if err != nil {
		t.Fatal(err)
	}
	if !est.Refused || !strings.Contains(est.Note, "No Reply: a noisy count of about ") || !strings.Contains(est.Note, " rows is too few") {
		t.Errorf("got %+v, want a No Reply naming a noisy count", est)
	}
}
