package mm

import (
	"errors"
	"fmt"
	"math"
	"math/big"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// ErrInfeasible: the median mechanism cannot meet its accuracy target
// with even one hard query (too few rows for ε and α).
var ErrInfeasible = errors.New("mech: median mechanism infeasible")

// Config configures one median-mechanism instance. Every field is public
// and fixed when the instance is created.
type Config struct {
	// Epsilon is the instance's whole allotment from the ledger: the noisy
	// row count, every easy/hard test and every hard answer.
	Epsilon float64
	// Alpha is the target accuracy as a fraction of the noisy row count n̂
	// (0.05: every answer within ±5% of n̂ rows), in (0, 1).
	Alpha float64
	// Beta is the probability that the accuracy statement fails, in (0, 1);
	// 0 means DefaultBeta.
	Beta float64
	// PlannedQueries is the horizon k of the accuracy statement; 0 means
	// DefaultPlannedQueries. Privacy does not depend on it.
	PlannedQueries int
	// CountShare is the share of Epsilon spent on the noisy row count, in
	// (0, 1); 0 means DefaultCountShare. Unused with PublicRows.
	CountShare float64
	// PublicRows, when positive, is a public row count: a size hint from
	// the configuration (DESIGN §2), or a noisy count the caller has
	// already released (see RowCountEpsilon). It becomes n̂ and no budget
	// of this instance is spent counting rows. A wrong value costs
	// accuracy, never privacy.
	PublicRows int64
	// RowCountEpsilon, when positive, says PublicRows is a row count the
	// caller released with DLap(1/RowCountEpsilon) noise and paid for
	// outside Epsilon (the planner's n̂, so that the row count is released
	// once): the consistency cuts allow for that noise (E_n). 0 means
	// PublicRows is taken as exact. It requires PublicRows.
	RowCountEpsilon float64
	// HardCap is the cap H on hard queries; 0 means the largest feasible.
	HardCap int
	// MaxHardCap, when positive, bounds the largest feasible H chosen when
	// HardCap is 0 (and HardCap itself): a caller whose store caps the
	// state's size takes it from HardCapWithin (size.go). A smaller H only
	// halts the instance sooner; every bound still holds.
	MaxHardCap int `json:",omitempty"`
	// PoolSize is the number N of candidates; 0 means DefaultPoolSize.
	PoolSize int
	// MixingSteps is the number of hit-and-run steps per candidate and per
	// cell after each hard query; 0 means DefaultMixingSteps.
	MixingSteps int
}

// mmMaxPlannedQueries bounds PlannedQueries, keeping the confidence
// 1 − β/(3k) of the per-test noise bound distinguishable from 1.
const mmMaxPlannedQueries = 1 << 30

// Defaults of Config.
const (
	DefaultBeta           = 0.05
	DefaultPlannedQueries = 5000
	DefaultCountShare     = 0.03
	DefaultPoolSize       = 200
	DefaultMixingSteps    = 5
)

// withDefaults returns c with its zero fields set to the defaults.
func (c Config) withDefaults() Config {
	if c.Beta == 0 {
		c.Beta = DefaultBeta
	}
	if c.PlannedQueries == 0 {
		c.PlannedQueries = DefaultPlannedQueries
	}
	if c.CountShare == 0 {
		c.CountShare = DefaultCountShare
	}
	if c.PoolSize == 0 {
		c.PoolSize = DefaultPoolSize
	}
	if c.MixingSteps == 0 {
		c.MixingSteps = DefaultMixingSteps
	}
	return c
}

// validate checks a configuration with its defaults applied.
func (c Config) validate() error {
	if err := mech.CheckEpsilon(c.Epsilon); err != nil {
		return err
	}
	inUnit := func(v float64) bool { return v > 0 && v < 1 }
	switch {
	case !inUnit(c.Alpha):
		return fmt.Errorf("%w: median mechanism alpha %v, must be in (0, 1)", mech.ErrInvalidInput, c.Alpha)
	case !inUnit(c.Beta):
		return fmt.Errorf("%w: median mechanism beta %v, must be in (0, 1)", mech.ErrInvalidConfidence, c.Beta)
	case !inUnit(c.CountShare):
		return fmt.Errorf("%w: median mechanism count share %v, must be in (0, 1)", mech.ErrInvalidInput, c.CountShare)
	case c.RowCountEpsilon != 0 && (c.PublicRows <= 0 || mech.CheckEpsilon(c.RowCountEpsilon) != nil):
		return fmt.Errorf("%w: median mechanism row count ε %v with public rows %d", mech.ErrInvalidInput, c.RowCountEpsilon, c.PublicRows)
	case c.PlannedQueries < 1 || c.PlannedQueries > mmMaxPlannedQueries || c.HardCap < 0 || c.PoolSize < 1 || c.MixingSteps < 1 || c.PublicRows < 0 ||
		c.MaxHardCap < 0 || c.MaxHardCap > 0 && c.HardCap > c.MaxHardCap:
		return fmt.Errorf("%w: median mechanism planned queries %d, hard cap %d (at most %d), pool %d, mixing steps %d, public rows %d",
			mech.ErrInvalidInput, c.PlannedQueries, c.HardCap, c.MaxHardCap, c.PoolSize, c.MixingSteps, c.PublicRows)
	}
	return nil
}

// countEpsilon returns the ε spent on the noisy row count.
func (c Config) countEpsilon() float64 {
	count, _ := c.epsilonShares()
	return count
}

// epsilonShares splits Epsilon between the noisy row count (0 with a
// public row count) and the runs, rounded down so that their exact sum is
// at most Epsilon (mech.SplitShare).
func (c Config) epsilonShares() (count, rest float64) {
	if c.PublicRows > 0 {
		return 0, c.Epsilon
	}
	return mech.SplitShare(c.Epsilon, c.CountShare)
}

// Plan holds the public parameters of an instance, fixed when it is
// created (from the configuration and n̂ only) and stored with its state.
// Counts are in rows; every bound holds with the probabilities of the
// MedianMechanism doc comment.
type Plan struct {
	// RowCount is n̂, the released (or configured) row count.
	RowCount int64
	// CountEpsilon is the ε spent on n̂ (0 with a public row count).
	CountEpsilon float64
	// TestEpsilon and AnswerEpsilon are the shares of the easy/hard tests
	// and of the hard answers; each of the HardCap runs spends
	// (TestEpsilon + AnswerEpsilon)/HardCap.
	TestEpsilon, AnswerEpsilon float64
	// HardCap is H, the number of hard answers after which the instance halts.
	HardCap int
	// Threshold is T: a query is hard when |c − μ| + ν ≥ T + ρ.
	Threshold int64
	// ThresholdBound and QueryBound bound |ρ| and |ν| (E_ρ, E_ν).
	ThresholdBound, QueryBound int64
	// EasyAlpha = T + E_ρ + E_ν bounds the error of an easy answer;
	// HardAlpha = E_ans bounds the error of a hard one.
	EasyAlpha, HardAlpha int64
	// RowCountBound bounds |n̂ − n| (E_n; 0 with an exact public row count).
	RowCountBound int64
	// SlabHalfWidth is w = 2·E_ans + E_n, the half-width of a consistency cut.
	SlabHalfWidth int64
	// Beta and PlannedQueries are the configuration's.
	Beta           float64
	PlannedQueries int
}

// mmNoise holds the discrete Laplace mechanisms of a plan (all in rows,
// sensitivity 1 for a count): the run threshold ρ ~ DLap(2H/ε_test), the
// per-test noise ν ~ DLap(4H/ε_test) and the hard answer's DLap(H/ε_ans).
type mmNoise struct {
	threshold, query, answer *noise.DiscreteLaplace
}

// newMMNoise returns the noise of H runs with the given ε shares, each
// run's share rounded down (mech.EvenShare) so that H runs spend at most
// the shares exactly.
func newMMNoise(hardCap int, testEpsilon, answerEpsilon float64) (mmNoise, error) {
	perRunTest, perRunAnswer := mech.EvenShare(testEpsilon, hardCap), mech.EvenShare(answerEpsilon, hardCap)
	threshold, err := noise.NewDiscreteLaplace(2, perRunTest)
	if err != nil {
		return mmNoise{}, err
	}
	query, err := noise.NewDiscreteLaplace(4, perRunTest)
	if err != nil {
		return mmNoise{}, err
	}
	answer, err := noise.NewDiscreteLaplace(1, perRunAnswer)
	if err != nil {
		return mmNoise{}, err
	}
	return mmNoise{threshold: threshold, query: query, answer: answer}, nil
}

// spentEpsilon returns the ε spent after hard completed runs, and the open
// run's test share unless halted: the row count's share plus the runs'
// shares (each rounded down as the noise uses it, newMMNoise), summed
// exactly and rounded up, so that a refund of the rest never returns ε
// that was spent.
func (p Plan) spentEpsilon(hard int, halted bool) float64 {
	perRunTest, perRunAnswer := mech.EvenShare(p.TestEpsilon, p.HardCap), mech.EvenShare(p.AnswerEpsilon, p.HardCap)
	spent := new(big.Rat).SetFloat64(p.CountEpsilon)
	run := new(big.Rat).Add(new(big.Rat).SetFloat64(perRunTest), new(big.Rat).SetFloat64(perRunAnswer))
	spent.Add(spent, run.Mul(run, big.NewRat(int64(hard), 1)))
	if !halted {
		spent.Add(spent, new(big.Rat).SetFloat64(perRunTest))
	}
	f, _ := spent.Float64()
	if new(big.Rat).SetFloat64(f).Cmp(spent) < 0 {
		f = math.Nextafter(f, math.Inf(1))
	}
	return f
}

// noise returns the plan's noise mechanisms.
func (p Plan) noise() (mmNoise, error) {
	return newMMNoise(p.HardCap, p.TestEpsilon, p.AnswerEpsilon)
}

// PlanFor returns the plan of an instance configured by cfg over n̂ =
// rowCount rows (public: the release of NewMedianMechanism or
// cfg.PublicRows), without touching any data: the planner can show it in
// EXPLAIN. It fails with ErrInfeasible, naming the fewest rows that would
// do, when not even one hard query fits the accuracy target.
//
// The plan (the digest's §7.2 in rows, with discrete Laplace noise):
//
//	A = H·(2·ln(3H/β) + 4·ln(3k/β)),  B = H·ln(3H/β)
//	ε_test = ε'·√(2A)/(√(2A) + √(3B)),  ε_ans = ε' − ε_test   (ε' = ε − ε_n)
//	E_ρ, E_ν, E_ans = the exact discrete Laplace quantiles at 1 − β/(3H),
//	  1 − β/(3k), 1 − β/(3H);  E_svt = E_ρ + E_ν;  E_n = the quantile at 1 − β
//	T = ⌊α·n̂⌋ − E_svt,  w = 2·E_ans + E_n
//	feasible iff T − E_svt ≥ w + E_ans + 1, i.e. ⌊α·n̂⌋ ≥ 2·E_svt + 3·E_ans + E_n + 1
//
// and H is cfg.HardCap or else the largest feasible value (at most
// cfg.MaxHardCap when that is set). The split
// minimises 2·E_svt + 3·E_ans (the digest's choice, derived for continuous
// Laplace tails b·ln(1/p), which the discrete quantiles match to a row).
func PlanFor(cfg Config, rowCount int64) (Plan, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return Plan{}, err
	}
	if rowCount < 1 {
		return Plan{}, fmt.Errorf("%w: median mechanism over %d rows", ErrInfeasible, rowCount)
	}
	countBound, err := mmCountBound(cfg)
	if err != nil {
		return Plan{}, err
	}
	budget := math.Floor(cfg.Alpha * float64(rowCount))
	try := func(h int) (Plan, bool, error) {
		p, err := mmPlanWithCap(cfg, rowCount, countBound, h)
		return p, err == nil && float64(p.feasibilityNeed()) <= budget, err
	}
	if cfg.HardCap > 0 {
		return mmFeasibleOrExplain(try, cfg, countBound, cfg.HardCap)
	}
	best, ok, err := try(1)
	if err != nil || !ok {
		return mmFeasibleOrExplain(try, cfg, countBound, 1)
	}
	// Feasibility is monotone in H (every bound grows with H): double, then
	// bisect, below MaxHardCap + 1 when it is set.
	lo, hi := 1, 2
	for cfg.MaxHardCap == 0 || hi <= cfg.MaxHardCap {
		p, ok, err := try(hi)
		if err != nil || !ok {
			break
		}
		best, lo, hi = p, hi, 2*hi
	}
	if cfg.MaxHardCap > 0 {
		hi = min(hi, cfg.MaxHardCap+1)
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if p, ok, err := try(mid); err == nil && ok {
			best, lo = p, mid
		} else {
			hi = mid
		}
	}
	return best, nil
}

// FeasibleRows returns the fewest rows n̂ over which PlanFor(cfg, n̂)
// finds a plan: it fails with ErrInfeasible below and succeeds at and
// above. Feasibility is ⌊α·n̂⌋ ≥ 2·E_svt + 3·E_ans + E_n + 1 at cfg.HardCap
// hard queries, or at one when it is 0 (PlanFor's first try), and every
// bound of the right side depends on cfg alone, not on n̂ (cfg.PublicRows
// decides only whether ε pays for the row count; its value is unused).
// It reads no data: EXPLAIN states it as the public condition under which
// a Median Mechanism is created.
func FeasibleRows(cfg Config) (int64, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return 0, err
	}
	countBound, err := mmCountBound(cfg)
	if err != nil {
		return 0, err
	}
	p, err := mmPlanWithCap(cfg, 1, countBound, max(cfg.HardCap, 1))
	if err != nil {
		return 0, err
	}
	return mmMinRows(p.feasibilityNeed(), cfg.Alpha), nil
}

// mmFeasibleOrExplain returns the plan with cap h if it is feasible, and
// otherwise ErrInfeasible with the fewest rows that would make it so.
func mmFeasibleOrExplain(try func(int) (Plan, bool, error), cfg Config, countBound int64, h int) (Plan, error) {
	p, ok, err := try(h)
	if err != nil {
		return Plan{}, err
	}
	if !ok {
		return Plan{}, fmt.Errorf("%w: %d hard queries at ε=%v and α=%v need at least %d rows, have %d",
			ErrInfeasible, h, cfg.Epsilon, cfg.Alpha, mmMinRows(p.feasibilityNeed(), cfg.Alpha), p.RowCount)
	}
	return p, nil
}

// feasibilityNeed returns 2·E_svt + 3·E_ans + E_n + 1: the plan is feasible
// iff ⌊α·n̂⌋ is at least this.
func (p Plan) feasibilityNeed() int64 {
	return 2*(p.ThresholdBound+p.QueryBound) + 3*p.HardAlpha + p.RowCountBound + 1
}

// mmMinRows returns the fewest rows r with ⌊α·r⌋ ≥ need (the bounds in rows
// do not depend on n̂), correcting the float quotient by a step either way.
func mmMinRows(need int64, alpha float64) int64 {
	fits := func(r int64) bool { return math.Floor(alpha*float64(r)) >= float64(need) }
	r := int64(math.Ceil(float64(need) / alpha))
	for !fits(r) {
		r++
	}
	for r > 1 && fits(r-1) {
		r--
	}
	return r
}

// mmCountBound returns E_n, the bound on |n̂ − n| at confidence 1 − β.
func mmCountBound(cfg Config) (int64, error) {
	countEpsilon := cfg.countEpsilon()
	if cfg.PublicRows > 0 {
		if cfg.RowCountEpsilon == 0 {
			return 0, nil
		}
		countEpsilon = cfg.RowCountEpsilon
	}
	d, err := noise.NewDiscreteLaplace(1, countEpsilon)
	if err != nil {
		return 0, err
	}
	return int64(d.HalfWidth(1 - cfg.Beta)), nil
}

// mmPlanWithCap computes the plan for a given H (feasible or not).
func mmPlanWithCap(cfg Config, rowCount, countBound int64, hardCap int) (Plan, error) {
	h, beta, k := float64(hardCap), cfg.Beta, float64(cfg.PlannedQueries)
	a := h * (2*math.Log(3*h/beta) + 4*math.Log(3*k/beta))
	b := h * math.Log(3*h/beta)
	_, rest := cfg.epsilonShares()
	testEpsilon, answerEpsilon := mech.SplitShare(rest, math.Sqrt(2*a)/(math.Sqrt(2*a)+math.Sqrt(3*b)))
	noise, err := newMMNoise(hardCap, testEpsilon, answerEpsilon)
	if err != nil {
		return Plan{}, err
	}
	p := Plan{
		RowCount:       rowCount,
		CountEpsilon:   cfg.countEpsilon(),
		TestEpsilon:    testEpsilon,
		AnswerEpsilon:  answerEpsilon,
		HardCap:        hardCap,
		ThresholdBound: int64(noise.threshold.HalfWidth(1 - beta/(3*h))),
		QueryBound:     int64(noise.query.HalfWidth(1 - beta/(3*k))),
		HardAlpha:      int64(noise.answer.HalfWidth(1 - beta/(3*h))),
		RowCountBound:  countBound,
		Beta:           beta,
		PlannedQueries: cfg.PlannedQueries,
	}
	p.Threshold = int64(math.Floor(cfg.Alpha*float64(rowCount))) - p.ThresholdBound - p.QueryBound
	p.EasyAlpha = p.Threshold + p.ThresholdBound + p.QueryBound
	p.SlabHalfWidth = 2*p.HardAlpha + countBound
	return p, nil
}
