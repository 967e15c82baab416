package bench

import (
	"encoding/csv"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
)

// ptrColumnKinds are the synthetic distributions of the PTR column
// benchmark: Synthetic's "normal" (N(100, 15²) in [0, 1000]) and
// "lognormal" (exp(N(10, 1)) in [0, 10^6]), "student-t3", and
// "normal-wide", the normal values with untrustworthy bounds.
var ptrColumnKinds = []string{"normal", "lognormal", "student-t3", "normal-wide"}

// ptrWideBound is the bound of "normal-wide": [−10^6, 10^6] for values
// near 100, the case PTR is for (its noise does not grow with the bounds).
const ptrWideBound = 1e6

// ptrStudentT3 draws a Student-t variate with 3 degrees of freedom:
// Z/√(χ²₃/3), finite variance but polynomial tails.
func ptrStudentT3(rng *rand.Rand) float64 {
	chi := 0.0
	for range 3 {
		z := rng.NormFloat64()
		chi += z * z
	}
	return rng.NormFloat64() / math.Sqrt(chi/3)
}

// ptrColumnDataset returns n values of kind (one of ptrColumnKinds) with a
// fixed seed. "student-t3" is 100 + 15·t₃ clamped to the generous public
// bounds [−1000, 1000]: a heavy-tailed column whose analyst cannot declare
// tight bounds. "normal-wide" is Synthetic's "normal" with the bounds
// [−10^6, 10^6].
func ptrColumnDataset(kind string, n int, seed uint64) (*Dataset, error) {
	switch kind {
	case "normal-wide":
		d, err := Synthetic("normal", n, seed)
		if err != nil {
			return nil, err
		}
		d.Name, d.Lower, d.Upper = fmt.Sprintf("%s-n%d", kind, n), -ptrWideBound, ptrWideBound
		return d, nil
	case "student-t3":
	default:
		return Synthetic(kind, n, seed)
	}
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	const lo, hi = -1000, 1000
	values := make([]float64, n)
	for i := range values {
		values[i] = math.Min(math.Max(100+15*ptrStudentT3(rng), lo), hi)
	}
	slices.Sort(values)
	return &Dataset{Name: fmt.Sprintf("%s-n%d", kind, n), Values: values, Lower: lo, Upper: hi}, nil
}

// ptrLinearModel is the synthetic regression model y = a + b·x + noise with
// x ~ U(0, 100), public bounds x ∈ [0, 100] and y ∈ [−1000, 1000] (values
// clamped to them, as the database does).
var ptrLinearModel = struct {
	intercept, slope, noiseScale float64
	xLower, xUpper               float64
	yLower, yUpper               float64
}{10, 2, 10, 0, 100, -1000, 1000}

// ptrNoiseKinds are the noises of the synthetic regressions: Gaussian
// (σ = 10) and heavy-tailed (10·t₃).
var ptrNoiseKinds = []string{"gaussian", "student-t3"}

// ptrLinearRows draws n rows of the synthetic model with the given noise.
func ptrLinearRows(noise string, n int, rng *rand.Rand) (x, y []float64, err error) {
	m := ptrLinearModel
	draw := rng.NormFloat64
	switch noise {
	case "gaussian":
	case "student-t3":
		draw = func() float64 { return ptrStudentT3(rng) }
	default:
		return nil, nil, fmt.Errorf("unknown regression noise %q", noise)
	}
	x, y = make([]float64, n), make([]float64, n)
	for i := range n {
		x[i] = m.xLower + (m.xUpper-m.xLower)*rng.Float64()
		y[i] = math.Min(math.Max(m.intercept+m.slope*x[i]+m.noiseScale*draw(), m.yLower), m.yUpper)
	}
	return x, y, nil
}

// ptrPair is a real pair of columns: the response y and the regressor x,
// row by row, with their public bounds.
type ptrPair struct {
	name           string
	x, y           []float64
	xLower, xUpper float64
	yLower, yUpper float64
}

// ptrPUMSIncomeAge loads PUMS income (y, bounds [0, 500000]) against age
// (x, bounds [0, 100]) row by row from dir/pums/PUMS.csv: the bounds
// SmartNoise's metadata declares, as PUMS does.
func ptrPUMSIncomeAge(dir string) (*ptrPair, error) {
	f, err := openData(dir, "pums", "PUMS.csv")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(recs) < 2 {
		return nil, fmt.Errorf("pums: no rows")
	}
	age, income := slices.Index(recs[0], "age"), slices.Index(recs[0], "income")
	if age < 0 || income < 0 {
		return nil, fmt.Errorf("pums: columns age and income needed, got %v", recs[0])
	}
	p := &ptrPair{name: "pums income ~ age", xLower: 0, xUpper: 100, yLower: 0, yUpper: 500000}
	for i, r := range recs[1:] {
		x, errX := strconv.ParseFloat(r[age], 64)
		y, errY := strconv.ParseFloat(r[income], 64)
		if errX != nil || errY != nil {
			return nil, fmt.Errorf("pums row %d: age %q, income %q", i+2, r[age], r[income])
		}
		p.x = append(p.x, math.Min(math.Max(x, p.xLower), p.xUpper))
		p.y = append(p.y, math.Min(math.Max(y, p.yLower), p.yUpper))
	}
	return p, nil
}

// ptrOLS returns the least-squares intercept and slope of y on x.
func ptrOLS(x, y []float64) (intercept, slope float64) {
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx, my = mx/n, my/n
	var sxy, sxx float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
	}
	slope = sxy / sxx
	return my - slope*mx, slope
}

// ptrTheilSen returns the Theil–Sen slope (the median of the pairwise
// slopes over pairs with distinct x) and the intercept median(y − b·x): the
// non-private robust fit closest to R_S's median of block fits.
func ptrTheilSen(x, y []float64) (intercept, slope float64) {
	var slopes []float64
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			if x[i] != x[j] {
				slopes = append(slopes, (y[j]-y[i])/(x[j]-x[i]))
			}
		}
	}
	slices.Sort(slopes)
	slope = ptrPercentile(slopes, 0.5)
	residuals := make([]float64, len(x))
	for i := range x {
		residuals[i] = y[i] - slope*x[i]
	}
	slices.Sort(residuals)
	return ptrPercentile(residuals, 0.5), slope
}
