package bench

import (
	"fmt"
	"slices"
	"sync"
)

// PTRConfig configures the PTR benchmark (RunPTR).
type PTRConfig struct {
	// Data is the shared data directory holding pums/PUMS.csv; empty
	// skips the PUMS columns and the real regression pair.
	Data string
	// Sizes are the synthetic sizes n.
	Sizes []int
	// Epsilons are the ε of every column cell and of the R_S cells.
	Epsilons []float64
	// Delta is the δ of every PTR release.
	Delta float64
	// ColumnTrials and RegressionTrials are the trials per column cell and
	// per R_S cell.
	ColumnTrials, RegressionTrials int
	// HampelEpsilons are the ε of the R_H cells (none: R_H is skipped), run
	// with HampelTrials trials each: R_H costs about a second or two of
	// CPU per release. R_S runs at these ε too.
	HampelEpsilons []float64
	HampelTrials   int
	// Seed determines the synthetic data and every noise draw.
	Seed uint64
	// Workers is the number of goroutines measuring in parallel.
	Workers int
}

// PTRResults are the cells RunPTR measured, in a fixed order.
type PTRResults struct {
	Config     PTRConfig
	Columns    []PTRColumnCell
	Regression []PTRRegressionCell
}

// RunPTR measures the PTR column estimators against their baselines and the
// PTR regressions: synthetic columns of ptrColumnKinds at every size, the
// PUMS columns age and income, synthetic linear data with ptrNoiseKinds
// noise at every size, and PUMS income against age. Results depend only on
// the configuration (not on Workers or scheduling).
func RunPTR(cfg PTRConfig) (*PTRResults, error) {
	if cfg.ColumnTrials < 1 || cfg.RegressionTrials < 1 || (len(cfg.HampelEpsilons) > 0 && cfg.HampelTrials < 1) {
		return nil, fmt.Errorf("ptr bench: trials must be positive, got %+v", cfg)
	}
	columns, err := ptrColumns(cfg)
	if err != nil {
		return nil, err
	}
	var pair *ptrPair
	if cfg.Data != "" {
		if pair, err = ptrPUMSIncomeAge(cfg.Data); err != nil {
			return nil, err
		}
	}
	res := &PTRResults{Config: cfg}
	var jobs []func() error
	for _, c := range columns {
		for _, s := range ptrColumnStatistics {
			for _, eps := range cfg.Epsilons {
				i := len(res.Columns)
				res.Columns = append(res.Columns, PTRColumnCell{})
				jobs = append(jobs, func() error {
					cell, err := measurePTRColumn(c, s, eps, cfg.Delta, cfg.ColumnTrials, cfg.Seed)
					res.Columns[i] = cell
					return err
				})
			}
		}
	}
	cells := ptrRegressionCells(cfg, pair)
	var slow []func() error
	for _, c := range cells {
		for t := range len(c.seconds) {
			job := func() error { return c.runTrial(t, cfg.Delta, cfg.Seed) }
			if c.cell.Mechanism == "R_H" {
				slow = append(slow, job)
			} else {
				jobs = append(jobs, job)
			}
		}
	}
	// The R_H trials (seconds each) go first so that the quick jobs fill
	// the workers' tails.
	jobs = append(slow, jobs...)
	if err := ptrRunJobs(jobs, cfg.Workers); err != nil {
		return nil, err
	}
	for _, c := range cells {
		res.Regression = append(res.Regression, c.result())
	}
	return res, nil
}

// ptrColumns loads the column datasets.
func ptrColumns(cfg PTRConfig) ([]*ptrColumn, error) {
	var out []*ptrColumn
	for _, kind := range ptrColumnKinds {
		for _, n := range cfg.Sizes {
			d, err := ptrColumnDataset(kind, n, cfg.Seed)
			if err != nil {
				return nil, err
			}
			out = append(out, newPTRColumn(d))
		}
	}
	if cfg.Data != "" {
		for _, col := range []string{"age", "income"} {
			d, err := PUMS(cfg.Data, col)
			if err != nil {
				return nil, err
			}
			out = append(out, newPTRColumn(d))
		}
	}
	return out, nil
}

// ptrShortcutEpsilons returns the ε of the R_S cells: every ε of the
// configuration, then the R_H ε not among them, so that R_S and R_H also
// compare at equal ε.
func ptrShortcutEpsilons(cfg PTRConfig) []float64 {
	out := slices.Clone(cfg.Epsilons)
	for _, eps := range cfg.HampelEpsilons {
		if !slices.Contains(out, eps) {
			out = append(out, eps)
		}
	}
	return out
}

// ptrRegressionCells lists the regression cells: R_S at its ε and R_H at
// its ε, on each noise at every size, then on the real pair.
func ptrRegressionCells(cfg PTRConfig, pair *ptrPair) []*ptrRegressionCell {
	var cells []*ptrRegressionCell
	add := func(c PTRRegressionCell, p *ptrPair) {
		for _, eps := range ptrShortcutEpsilons(cfg) {
			c.Mechanism, c.Epsilon = "R_S", eps
			cells = append(cells, newPTRRegressionCell(c, p, cfg.RegressionTrials))
		}
		for _, eps := range cfg.HampelEpsilons {
			c.Mechanism, c.Epsilon = "R_H", eps
			cells = append(cells, newPTRRegressionCell(c, p, cfg.HampelTrials))
		}
	}
	m := ptrLinearModel
	for _, noise := range ptrNoiseKinds {
		for _, n := range cfg.Sizes {
			add(PTRRegressionCell{Data: noise, N: n, Reference: [2]float64{m.intercept, m.slope}, Bounds: ptrCoefficientBounds(ptrLinearBounds())}, nil)
		}
	}
	if pair != nil {
		a, b := ptrOLS(pair.x, pair.y)
		ta, tb := ptrTheilSen(pair.x, pair.y)
		add(PTRRegressionCell{Data: pair.name, Real: true, N: len(pair.y), Reference: [2]float64{a, b}, TheilSen: [2]float64{ta, tb},
			Bounds: ptrCoefficientBounds(pair)}, pair)
	}
	return cells
}

// ptrRunJobs runs jobs on workers goroutines (at least one) and returns
// the first error.
func ptrRunJobs(jobs []func() error, workers int) error {
	queue := make(chan func() error)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for range max(workers, 1) {
		wg.Go(func() {
			for job := range queue {
				if err := job(); err != nil {
					once.Do(func() { first = err })
				}
			}
		})
	}
	for _, job := range jobs {
		queue <- job
	}
	close(queue)
	wg.Wait()
	return first
}
