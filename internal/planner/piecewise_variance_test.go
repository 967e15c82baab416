package planner_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestPiecewiseVarianceOfZeroOneColumn: VARIANCE of a 0/1 column with
// SET @dp_mechanism = 'piecewise' answers. It was refused with 1231 at
// every ε ("smoothing ρ = 0.5, must be in [0, U-L]; change @dp_epsilon"):
// the planner gave the variance the quantile's ρ = ½ of an integer column,
// in the column's units, where the variance's ρ is in squared units on
// [0, V_max], V_max = ¼. On 400 ones and 600 zeros (variance 0.24) every
// answer lies in [0, ¼] (3 draws at ε = 0.1, 21 at ε = 1), and at ε = 1
// the median error is below 0.01 (the noise's scale is about 2·0.6²/(1000·ε) ≈ 7·10^-4).
func TestPiecewiseVarianceOfZeroOneColumn(t *testing.T) {
	cat := testCatalog()
	p := planner.New(cat)
	st, err := sqlrewrite.NewParser(cat).Parse("SELECT VARIANCE(sex) FROM pums")
	if err != nil {
		t.Fatal(err)
	}
	data := make([]float64, 1000)
	for i := 600; i < len(data); i++ {
		data[i] = 1
	}
	for _, eps := range []float64{0.1, 1} {
		plan, err := p.Plan(st.(*sqlrewrite.Select), planner.Settings{Epsilon: eps, Mechanism: "piecewise"})
		if err != nil {
			t.Fatalf("ε = %g: %v", eps, err)
		}
		draws := byte(21)
		if eps < 1 {
			draws = 3 // K ≈ 850 levels: about 0.3 s each
		}
		var errs []float64
		for seed := range draws {
			est, err := runReleaseOn(rand.NewChaCha8([32]byte{seed}), plan.Releases[0], data)
			if err != nil {
				t.Fatalf("ε = %g: %v", eps, err)
			}
			if est.Refused || !(est.Value >= 0 && est.Value <= 0.25) {
				t.Fatalf("ε = %g: got %+v, want a variance in [0, 0.25]", eps, est)
			}
			errs = append(errs, math.Abs(est.Value-0.24))
		}
		slices.Sort(errs)
		if eps == 1 && errs[len(errs)/2] > 0.01 {
			t.Errorf("ε = 1: median error %v over 21 draws, want below 0.01", errs[len(errs)/2])
		}
	}
}
