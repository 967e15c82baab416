package mm

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"testing"
)

// TestMMStateBound: a state with every part at its longest (a full cache
// of answers with the longest numbers, H cuts of the predicate with the
// most runs, the extreme ρ and counters) stays within StateBound, which is
// not loose by more than a fifth.
func TestMMStateBound(t *testing.T) {
	for _, cells := range []int{1, 2, 9, 10, 99, 100, 101, 1000, 4097} {
		cfg := Config{Epsilon: 1, Alpha: 0.05, PoolSize: 4}
		m, _ := mmNew(t, mmSpread(cells, cells, 1_000_000), cfg, 0x5a01)
		var members []int
		for x := 0; x < cells; x += 2 {
			members = append(members, x)
		}
		alternate, err := NewPredicate(cells, members)
		if err != nil {
			t.Fatal(err)
		}
		for range m.plan.HardCap {
			m.pool.cuts = append(m.pool.cuts, mmConstraint{pred: alternate, center: math.MinInt64, halfWidth: math.MinInt64})
		}
		worst := -2.2250738585072014e-308
		for i := range MaxCachedAnswers {
			m.cache[sha256.Sum256(binary.LittleEndian.AppendUint64(nil, uint64(i)))] = Answer{Count: math.MinInt64, Alpha: math.MinInt64,
				AlphaFraction: worst, Confidence: worst, HardUsed: math.MinInt, HardCap: math.MinInt}
		}
		m.rho, m.hard, m.answered, m.pool.repairs = math.MinInt64, m.plan.HardCap, math.MinInt, math.MinInt
		state, err := m.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		bound := StateBound(cfg, cells, m.plan.HardCap)
		if got := int64(len(state)); got > bound || got < bound*4/5 {
			t.Errorf("%d cells, H = %d: state of %d bytes, want within [%d, %d]", cells, m.plan.HardCap, got, bound*4/5, bound)
		}
	}
}

// TestMMCacheBounded: after more distinct queries than MaxCachedAnswers
// the cache holds MaxCachedAnswers answers, the state stays within
// StateBound, and a query answered once the cache was full is tested
// again when repeated (a fresh test, not a cached answer). Before the
// bound the cache grew by an entry per distinct query (about 190 bytes),
// so the state outgrew any ledger's limit.
func TestMMCacheBounded(t *testing.T) {
	const cells = 128
	hist := mmSpread(cells, cells, 1_000_000)
	m, src := mmNew(t, hist, mmDefault, 0x5a02)
	var last Predicate
	asked := 0
	for lo := 0; lo < cells && asked <= MaxCachedAnswers+200; lo++ {
		for hi := lo; hi < cells && asked <= MaxCachedAnswers+200; hi++ {
			last = MmRangePredicate(cells, lo, hi)
			if _, err := m.Answer(src, last, mmCount(hist, last), nil); err != nil {
				t.Fatalf("query %d: %v", asked, err)
			}
			asked++
		}
	}
	if len(m.cache) != MaxCachedAnswers {
		t.Errorf("cache after %d distinct queries: %d answers, want %d", asked, len(m.cache), MaxCachedAnswers)
	}
	state, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if bound := StateBound(mmDefault, cells, m.plan.HardCap); int64(len(state)) > bound {
		t.Errorf("state of %d bytes, above its bound %d", len(state), bound)
	}
	if !m.Tests(last) {
		t.Errorf("a query answered with a full cache: cached, want a fresh test when repeated")
	}
	a, err := m.Answer(src, last, mmCount(hist, last), nil)
	if err != nil || a.Cached {
		t.Errorf("repeated query answered with a full cache: %+v, %v; want a fresh test", a, err)
	}
}

// TestPlanForMaxHardCap: MaxHardCap bounds the largest feasible H, and
// leaves it unchanged when above it; a HardCap above it is refused.
func TestPlanForMaxHardCap(t *testing.T) {
	cfg := Config{Epsilon: 1, Alpha: 0.05}
	free, err := PlanFor(cfg, 1_000_000)
	if err != nil || free.HardCap < 4 {
		t.Fatalf("plan without a cap: H = %d, %v; want at least 4", free.HardCap, err)
	}
	for _, max := range []int{1, 2, 3, free.HardCap - 1, free.HardCap, free.HardCap + 1, 4 * free.HardCap} {
		capped := cfg
		capped.MaxHardCap = max
		p, err := PlanFor(capped, 1_000_000)
		if want := min(max, free.HardCap); err != nil || p.HardCap != want {
			t.Errorf("MaxHardCap %d: H = %d, %v; want %d", max, p.HardCap, err, want)
		}
	}
	cfg.HardCap, cfg.MaxHardCap = 3, 2
	if _, err := PlanFor(cfg, 1_000_000); err == nil {
		t.Errorf("HardCap 3 above MaxHardCap 2: planned, want refused")
	}
}
