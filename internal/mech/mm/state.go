package mm

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// ErrState: a serialized median-mechanism state is corrupt, truncated,
// of another version, or inconsistent.
var ErrState = errors.New("mech: invalid median mechanism state")

// The state format, version 2 (little-endian; version 1 kept the pool's
// stream as a math/rand ChaCha8 state and is refused):
//
//	"DPMMSVT2"                 8-byte magic and version
//	uint64 L, then L bytes     JSON of mmRecord: configuration, plan, the
//	                           SECRET ρ, counters, cuts, cache, pool RNG state
//	PoolSize·cells float64     the pool's candidates, candidate-major
//	32 bytes                   SHA-256 of everything before
//
// The checksum catches truncation and corruption, not tampering: the
// state is as sensitive as a key (it holds ρ) and is stored as one.
// Restoring it resumes the instance exactly: same plan, same run and ρ,
// same pool and pool random stream, so the guarantee continues unchanged.
const mmStateMagic = "DPMMSVT2"

// mmRecord is the JSON part of the state.
type mmRecord struct {
	Cells       int
	Config      Config
	Plan        Plan
	Rho         int64 // SECRET
	Hard        int
	Halted      bool
	Answered    int
	Cuts        []mmCutRecord
	Cache       map[string]Answer // hex SHA-256 of the predicate → answer
	PoolRNG     []byte            // the pool's noise.Stream state
	PoolRepairs int
}

// mmCutRecord is one consistency cut: its predicate's runs [lo, hi) and
// the released answer with the cut's half-width.
type mmCutRecord struct {
	Runs              [][2]int
	Center, HalfWidth int64
}

// MarshalBinary returns the instance's state in the format above. The
// result contains the secret ρ.
func (m *MedianMechanism) MarshalBinary() ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.marshal()
}

// marshal serializes the state; the caller holds the lock.
func (m *MedianMechanism) marshal() ([]byte, error) {
	rng, err := m.pool.rng.MarshalBinary()
	if err != nil {
		return nil, err
	}
	rec := mmRecord{
		Cells: m.cells, Config: m.cfg, Plan: m.plan, Rho: m.rho, Hard: m.hard, Halted: m.halted,
		Answered: m.answered, Cache: map[string]Answer{}, PoolRNG: rng, PoolRepairs: m.pool.repairs,
	}
	for _, c := range m.pool.cuts {
		r := mmCutRecord{Center: c.center, HalfWidth: c.halfWidth}
		for _, run := range c.pred.runs {
			r.Runs = append(r.Runs, [2]int{run.lo, run.hi})
		}
		rec.Cuts = append(rec.Cuts, r)
	}
	for k, a := range m.cache {
		rec.Cache[hex.EncodeToString(k[:])] = a
	}
	js, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 0, len(mmStateMagic)+8+len(js)+8*len(m.pool.points)+sha256.Size)
	buf = append(buf, mmStateMagic...)
	buf = binary.LittleEndian.AppendUint64(buf, uint64(len(js)))
	buf = append(buf, js...)
	for _, f := range m.pool.points {
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(f))
	}
	sum := sha256.Sum256(buf)
	return append(buf, sum[:]...), nil
}

// UnmarshalBinary replaces the instance's state by a state from
// MarshalBinary (or a commit), after checking its integrity and
// consistency: var m MedianMechanism; err := m.UnmarshalBinary(state).
func (m *MedianMechanism) UnmarshalBinary(data []byte) error {
	restored, err := mmUnmarshal(data)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrState, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cfg, m.plan, m.noise, m.cells, m.pool = restored.cfg, restored.plan, restored.noise, restored.cells, restored.pool
	m.rho, m.hard, m.halted, m.cache, m.void, m.answered = restored.rho, restored.hard, restored.halted, restored.cache, false, restored.answered
	return nil
}

// mmUnmarshal parses and validates a state.
func mmUnmarshal(data []byte) (*MedianMechanism, error) {
	head := len(mmStateMagic) + 8
	if len(data) < head+sha256.Size || string(data[:len(mmStateMagic)]) != mmStateMagic {
		return nil, errors.New("not a version-2 state")
	}
	body := data[:len(data)-sha256.Size]
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], data[len(body):]) {
		return nil, errors.New("checksum mismatch")
	}
	n := binary.LittleEndian.Uint64(data[len(mmStateMagic):head])
	if n > uint64(len(body)-head) {
		return nil, errors.New("truncated record")
	}
	dec := json.NewDecoder(bytes.NewReader(body[head : head+int(n)]))
	dec.DisallowUnknownFields()
	var rec mmRecord
	if err := dec.Decode(&rec); err != nil {
		return nil, err
	}
	if err := mmCheckRecord(rec); err != nil {
		return nil, err
	}
	floats := body[head+int(n):]
	if len(floats) != 8*rec.Config.PoolSize*rec.Cells {
		return nil, fmt.Errorf("pool of %d bytes, want %d candidates of %d cells", len(floats), rec.Config.PoolSize, rec.Cells)
	}
	noise, err := rec.Plan.noise()
	if err != nil {
		return nil, err
	}
	pool, err := mmRestorePool(rec, floats)
	if err != nil {
		return nil, err
	}
	m := &MedianMechanism{
		cfg: rec.Config, plan: rec.Plan, noise: noise, cells: rec.Cells, pool: pool,
		rho: rec.Rho, hard: rec.Hard, halted: rec.Halted, answered: rec.Answered,
		cache: map[[sha256.Size]byte]Answer{},
	}
	for k, a := range rec.Cache {
		b, err := hex.DecodeString(k)
		if err != nil || len(b) != sha256.Size {
			return nil, fmt.Errorf("cache key %q", k)
		}
		m.cache[[sha256.Size]byte(b)] = a
	}
	return m, nil
}

// mmCheckRecord checks the counters and plan of a record.
func mmCheckRecord(rec mmRecord) error {
	if err := MmCheckCells(rec.Cells); err != nil {
		return err
	}
	if err := rec.Config.validate(); err != nil {
		return err
	}
	p := rec.Plan
	switch {
	case p.HardCap < 1 || p.RowCount < 1 || p.Threshold < 0:
		return fmt.Errorf("plan with cap %d, %d rows, threshold %d", p.HardCap, p.RowCount, p.Threshold)
	case rec.Hard < 0 || rec.Hard > p.HardCap || rec.Halted != (rec.Hard == p.HardCap):
		return fmt.Errorf("%d hard answers of %d, halted %v", rec.Hard, p.HardCap, rec.Halted)
	case len(rec.Cuts) != rec.Hard:
		return fmt.Errorf("%d cuts for %d hard answers", len(rec.Cuts), rec.Hard)
	}
	return nil
}

// mmRestorePool rebuilds the pool of a record from its candidates and
// checks every candidate lies on the simplex and satisfies every cut.
func mmRestorePool(rec mmRecord, floats []byte) (*mmPool, error) {
	rng := &noise.Stream{}
	if err := rng.UnmarshalBinary(rec.PoolRNG); err != nil {
		return nil, err
	}
	p := &mmPool{
		cells: rec.Cells, size: rec.Config.PoolSize, stepsPerCell: rec.Config.MixingSteps,
		repairs: rec.PoolRepairs, rng: rng,
		points: make([]float64, rec.Config.PoolSize*rec.Cells),
	}
	for i := range p.points {
		p.points[i] = math.Float64frombits(binary.LittleEndian.Uint64(floats[8*i:]))
	}
	for _, c := range rec.Cuts {
		pred, err := mmPredicateFromRuns(rec.Cells, c.Runs)
		if err != nil {
			return nil, err
		}
		if c.HalfWidth < 0 {
			return nil, fmt.Errorf("cut half-width %d", c.HalfWidth)
		}
		p.cuts = append(p.cuts, mmConstraint{pred: pred, center: c.Center, halfWidth: c.HalfWidth, scale: float64(rec.Plan.RowCount)})
	}
	p.rebuild()
	for i := range p.size {
		total := 0.0
		for _, f := range p.point(i) {
			if !(f >= 0) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("candidate %d has entry %v", i, f)
			}
			total += f
		}
		if math.Abs(total-1) > mmFeasibleTolerance || !p.feasible(i) {
			return nil, fmt.Errorf("candidate %d is off the simplex or outside a cut", i)
		}
	}
	return p, nil
}

// mmPredicateFromRuns rebuilds a predicate from canonical runs: ascending,
// non-empty, non-adjacent, within [0, cells).
func mmPredicateFromRuns(cells int, runs [][2]int) (Predicate, error) {
	p := Predicate{cells: cells}
	prev := -1
	for _, r := range runs {
		if r[0] <= prev || r[0] >= r[1] || r[1] > cells {
			return Predicate{}, fmt.Errorf("cut run [%d, %d) over %d cells", r[0], r[1], cells)
		}
		p.runs = append(p.runs, mmRun{r[0], r[1]})
		p.size += r[1] - r[0]
		prev = r[1]
	}
	return p, nil
}
