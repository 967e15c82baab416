package mm

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// mmNew returns an instance over hist with a seeded noise source.
func mmNew(t *testing.T, hist []int64, cfg Config, seed uint64) (*MedianMechanism, *rand.ChaCha8) {
	t.Helper()
	src := privtest.Seeded(t, seed)
	var n int64
	for _, h := range hist {
		n += h
	}
	m, err := NewMedianMechanism(src, len(hist), n, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m, src
}

// mmCount returns the count callback of q over hist.
func mmCount(hist []int64, q Predicate) func() (int64, error) {
	return func() (int64, error) { return q.Count(hist), nil }
}

// mmNoCount returns a count callback that fails t when called.
func mmNoCount(t *testing.T) func() (int64, error) {
	return func() (int64, error) {
		t.Errorf("count called: got a data access, want none")
		return 0, nil
	}
}

// mmSpread returns a histogram of rows rows spread evenly over the first
// used cells of a domain of cells cells.
func mmSpread(cells, used int, rows int64) []int64 {
	h := make([]int64, cells)
	for x := range used {
		h[x] = rows / int64(used)
	}
	return h
}

var mmDefault = Config{Epsilon: 1, Alpha: 0.05}

// TestMMEasyAnswerIsPoolMedian: on a uniform histogram a half-domain range
// is within a few hundred rows of the pool's median, far below T ≈ 3300,
// so it is easy (unless |ν − ρ| ≥ T − gap, probability below e^-25), and
// the answer is exactly the median fraction times n̂.
func TestMMEasyAnswerIsPoolMedian(t *testing.T) {
	hist := mmSpread(16, 16, 100000)
	m, src := mmNew(t, hist, mmDefault, 0x3b01)
	q := MmRangePredicate(16, 0, 7)
	want := int64(math.Round(m.pool.median(q) * float64(m.plan.RowCount)))
	calls := 0
	a, err := m.Answer(src, q, func() (int64, error) { calls++; return q.Count(hist), nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantAnswer := Answer{Count: want, Alpha: m.plan.EasyAlpha, AlphaFraction: float64(m.plan.EasyAlpha) / float64(m.plan.RowCount),
		Confidence: 0.95, HardCap: m.plan.HardCap}
	if a != wantAnswer || calls != 1 {
		t.Errorf("got %+v after %d count calls, want %+v after 1", a, calls, wantAnswer)
	}
	again, err := m.Answer(src, q, mmNoCount(t), nil)
	wantAnswer.Cached = true
	if err != nil || again != wantAnswer {
		t.Errorf("repeat: got %+v, %v, want %+v from the cache", again, err, wantAnswer)
	}
}

// TestMMHardAnswerHalvesPool: a true count T + E_svt + 1 rows from the
// pool's median is hard whenever |ρ| + |ν| ≤ E_svt (probability ≥ 1 − β
// by the plan); the answer is within E_ans, at most ⌊N/2⌋ of the old
// candidates survive the cut (the digest's halving), and every candidate
// of the refreshed pool satisfies it.
func TestMMHardAnswerHalvesPool(t *testing.T) {
	hist := mmSpread(64, 64, 100000)
	m, src := mmNew(t, hist, mmDefault, 0x3b02)
	q := MmRangePredicate(64, 10, 40)
	old := m.pool.answers(q)
	median := int64(math.Round(m.pool.median(q) * float64(m.plan.RowCount)))
	truth := median + m.plan.Threshold + m.plan.ThresholdBound + m.plan.QueryBound + 1
	a, err := m.Answer(src, q, func() (int64, error) { return truth, nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Hard || a.HardUsed != 1 || a.Alpha != m.plan.HardAlpha || math.Abs(float64(a.Count-truth)) > float64(a.Alpha) {
		t.Fatalf("got %+v, want a hard answer within %d of %d", a, m.plan.HardAlpha, truth)
	}
	cut := m.pool.cuts[0]
	lo, hi := cut.bounds()
	survivors := 0
	for _, v := range old {
		if v >= lo && v <= hi {
			survivors++
		}
	}
	if survivors > m.pool.size/2 {
		t.Errorf("survivors of the cut: got %d of %d, want at most half", survivors, m.pool.size)
	}
	if cut.center != a.Count || cut.halfWidth != m.plan.SlabHalfWidth {
		t.Errorf("cut: got center %d ± %d, want %d ± %d", cut.center, cut.halfWidth, a.Count, m.plan.SlabHalfWidth)
	}
	for i := range m.pool.size {
		if !mmSatisfies(m.pool.point(i), m.pool.cuts) {
			t.Fatalf("candidate %d: got outside the cut, want inside", i)
		}
	}
}

// TestMMHaltsAtCap: with the rows split over 4 of 64 cells, single-cell
// queries are far from the pool's median (≈ n/64 against n/4) and hard;
// after HardCap = 2 hard answers the instance refuses new queries without
// reading data, still serves cached ones, and has spent all of ε.
func TestMMHaltsAtCap(t *testing.T) {
	hist := mmSpread(64, 4, 100000)
	cfg := mmDefault
	cfg.HardCap = 2
	m, src := mmNew(t, hist, cfg, 0x3b03)
	cell := func(x int) Predicate { p, _ := NewPredicate(64, []int{x}); return p }
	for x := range 2 {
		a, err := m.Answer(src, cell(x), mmCount(hist, cell(x)), nil)
		if err != nil || !a.Hard || a.HardUsed != x+1 || a.HardCap != 2 {
			t.Fatalf("query %d: got %+v, %v, want hard answer %d of 2", x, a, err, x+1)
		}
	}
	if !m.Halted() || m.HardUsed() != 2 || math.Abs(m.SpentEpsilon()-cfg.Epsilon) > 1e-12 {
		t.Errorf("halted, hard, spent: got %v, %v, %v, want true, 2, %v", m.Halted(), m.HardUsed(), m.SpentEpsilon(), cfg.Epsilon)
	}
	if _, err := m.Answer(src, cell(2), mmNoCount(t), nil); !errors.Is(err, ErrHardQueryCapReached) {
		t.Errorf("after the cap: got %v, want ErrHardQueryCapReached", err)
	}
	if a, err := m.Answer(src, cell(0), mmNoCount(t), nil); err != nil || !a.Cached || !a.Hard {
		t.Errorf("cached after the cap: got %+v, %v, want the cached hard answer", a, err)
	}
}

func TestMMSpentEpsilon(t *testing.T) {
	m, _ := mmNew(t, mmSpread(8, 8, 100000), mmDefault, 0x3b04)
	p := m.Plan()
	want := p.CountEpsilon + p.TestEpsilon/float64(p.HardCap)
	if got := m.SpentEpsilon(); math.Abs(got-want) > 1e-15 || p.CountEpsilon != 0.03 {
		t.Errorf("fresh instance: got %v (count ε %v), want %v (count ε 0.03)", got, p.CountEpsilon, want)
	}
}

// TestMMCommit (issue 10, leak 2): every tested answer, easy or hard, is
// returned only after its state is committed, and a failed commit looks
// the same in both branches: the commit's error, the instance void, and
// the stored state without the withheld test. The old code committed hard
// answers only, so an easy answer came back despite a failing commit
// (checked: this test failed on it).
func TestMMCommit(t *testing.T) {
	failure := errors.New("disk full")
	for _, tc := range []struct {
		name string
		hist []int64
		q    Predicate
		hard bool
	}{
		{"easy", mmSpread(16, 16, 100000), MmRangePredicate(16, 0, 7), false},
		{"hard", mmSpread(64, 4, 100000), MmRangePredicate(64, 0, 0), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, src := mmNew(t, tc.hist, mmDefault, 0x3b05)
			before, err := m.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			var committed [][]byte
			good := func(state []byte) error { committed = append(committed, state); return nil }
			bad := func([]byte) error { return failure }
			probe := mmClone(t, src)

			if _, err := m.Answer(src, tc.q, mmCount(tc.hist, tc.q), bad); !errors.Is(err, failure) {
				t.Fatalf("failed commit: got %v, want the commit's error", err)
			}
			if _, err := m.Answer(src, tc.q, mmNoCount(t), good); !errors.Is(err, ErrVoid) {
				t.Errorf("after a failed commit: got %v, want ErrVoid", err)
			}
			var restored MedianMechanism
			if err := restored.UnmarshalBinary(before); err != nil || !restored.Tests(tc.q) {
				t.Fatalf("restored: %v, tests the query again %v, want true", err, restored.Tests(tc.q))
			}
			a, err := restored.Answer(probe, tc.q, mmCount(tc.hist, tc.q), good)
			if err != nil || a.Hard != tc.hard || len(committed) != 1 {
				t.Fatalf("got %+v, %v with %d commits, want hard=%v after 1 commit", a, err, len(committed), tc.hard)
			}
			var stored MedianMechanism
			if err := stored.UnmarshalBinary(committed[0]); err != nil || stored.Tests(tc.q) || stored.HardUsed() != restored.HardUsed() {
				t.Errorf("committed state: %v, tests again %v, hard %d, want the cached answer", err, stored.Tests(tc.q), stored.HardUsed())
			}
			if a, err := restored.Answer(probe, tc.q, mmNoCount(t), bad); err != nil || !a.Cached {
				t.Errorf("repeat: got %+v, %v, want the cached answer without a commit", a, err)
			}
		})
	}
}

func TestMMEmptyPredicateIsExact(t *testing.T) {
	m, src := mmNew(t, mmSpread(8, 8, 100000), mmDefault, 0x3b06)
	empty, _ := NewPredicate(8, nil)
	a, err := m.Answer(src, empty, mmNoCount(t), nil)
	if err != nil || a.Count != 0 || a.Alpha != 0 || a.Confidence != 1 || a.Hard {
		t.Errorf("got %+v, %v, want an exact 0", a, err)
	}
}

func TestMMRejects(t *testing.T) {
	hist := mmSpread(8, 8, 100000)
	m, src := mmNew(t, hist, mmDefault, 0x3b07)
	q := MmRangePredicate(8, 0, 3)
	failure := errors.New("backend down")
	for _, tc := range []struct {
		name  string
		pred  Predicate
		count func() (int64, error)
		want  error
	}{
		{"other domain", MmRangePredicate(9, 0, 3), mmNoCount(t), mech.ErrInvalidInput},
		{"negative count", q, func() (int64, error) { return -1, nil }, mech.ErrInvalidInput},
		{"count fails", q, func() (int64, error) { return 0, failure }, failure},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := m.Answer(src, tc.pred, tc.count, nil); !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name  string
		cells int
		rows  int64
		cfg   Config
		want  error
	}{
		{"no cells", 0, 1000, mmDefault, mech.ErrInvalidInput},
		{"negative rows", 8, -1, mmDefault, mech.ErrInvalidInput},
		{"bad config", 8, 1000, Config{Epsilon: 1}, mech.ErrInvalidInput},
		{"too few rows", 8, 1000, mmDefault, ErrInfeasible},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewMedianMechanism(src, tc.cells, tc.rows, tc.cfg); !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
}
