package privtest

import (
	"fmt"

	"gonum.org/v1/gonum/stat/distuv"
)

// minExpected is the smallest expected cell count the chi-square
// approximation is trusted with; smaller cells are pooled.
const minExpected = 5

// ChiSquare tests observed counts against cell probabilities probs (summing
// to 1; the counts sum to the number of draws). Cells whose expected count
// is below 5 are pooled into one cell. It returns the Pearson statistic and
// the critical value of the chi-square distribution with (cells - 1)
// degrees of freedom at 1 - falseRejection: a correct sampler gives
// stat > critical with probability about falseRejection.
func ChiSquare(observed []int, probs []float64, falseRejection float64) (stat, critical float64, err error) {
	if len(observed) != len(probs) {
		return 0, 0, fmt.Errorf("privtest.ChiSquare: %d counts for %d probabilities", len(observed), len(probs))
	}
	total := 0
	for _, c := range observed {
		total += c
	}
	var pooledObs, pooledExp float64
	cells := 0
	for i, c := range observed {
		e := probs[i] * float64(total)
		if e < minExpected {
			pooledObs += float64(c)
			pooledExp += e
			continue
		}
		d := float64(c) - e
		stat += d * d / e
		cells++
	}
	if pooledExp > 0 {
		d := pooledObs - pooledExp
		stat += d * d / pooledExp
		cells++
	} else if pooledObs > 0 {
		return 0, 0, fmt.Errorf("privtest.ChiSquare: %v draws in cells of probability 0", pooledObs)
	}
	if cells < 2 {
		return 0, 0, fmt.Errorf("privtest.ChiSquare: %d usable cells, need 2", cells)
	}
	critical = distuv.ChiSquared{K: float64(cells - 1)}.Quantile(1 - falseRejection)
	return stat, critical, nil
}
