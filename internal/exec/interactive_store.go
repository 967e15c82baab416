package exec

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/mech/mm"
	"github.com/dpproxy/dpproxy/internal/planner"
)

// Interactive instances (planner.InteractivePlan) are stored next to the
// ledger (budget.Ledger.PutState under the plan's StateKey), so they
// survive restarts, and one instance serves every connection of the
// process: per-connection instances would multiply the privacy loss.
//
// Paying exactly once. The instance's whole ε is charged when it is
// created, by the statement that creates it, in one reservation on the
// analyst's accounts (their own and the table's cap, as any statement)
// and on a claim account named by the StateKey whose limit is that ε: a
// second creation, in this process (serialised by the store's mutex) or in
// another proxy sharing the ledger, cannot fit, so no second instance is
// released. Charging the creator mirrors the synopses (synopsis_store.go):
// the analyst who opens the session pays for it, every later count of
// every analyst is free, and the table's configured total caps what all
// analysts together spend, this ε included.
//
// Left open: several proxies answering from one Median Mechanism state
// concurrently would each advance their own copy; the state must have one
// owner process (the claim makes the creator unique, not the answerer).
type interactiveStore struct {
	ledger *budget.Ledger
	mu     sync.Mutex
	byKey  map[string]*interactiveInstance
}

// interactiveInstance is one dataset's instance. Noisy (histogram) or mm
// (Median Mechanism) is set. truth is the database's histogram over X,
// read once per process for the Median Mechanism's true counts; it is
// kept in memory only.
type interactiveInstance struct {
	header interactiveHeader
	mm     *mm.MedianMechanism

	truthMu sync.Mutex
	truth   []int64
}

// interactiveHeader is the stored description of an instance. The
// stored value is an 8-byte little-endian length, this header as JSON,
// then the Median Mechanism's state (which holds a secret: never log it).
type interactiveHeader struct {
	Key       string    `json:"key"`
	Mechanism string    `json:"mechanism"`
	Why       string    `json:"why"`
	NHat      int64     `json:"n_hat"`
	Epsilon   float64   `json:"epsilon"`
	Noise     float64   `json:"noise_epsilon,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	Noisy     []int64   `json:"noisy,omitempty"`
}

func newInteractiveStore(l *budget.Ledger) *interactiveStore {
	return &interactiveStore{ledger: l, byKey: map[string]*interactiveInstance{}}
}

// encode serializes the header and the Median Mechanism state mmState.
func (h *interactiveHeader) encode(mmState []byte) ([]byte, error) {
	js, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	buf := binary.LittleEndian.AppendUint64(nil, uint64(len(js)))
	return append(append(buf, js...), mmState...), nil
}

// load returns the stored instance of ip, or nil when there is none.
func (st *interactiveStore) load(ctx context.Context, ip *planner.InteractivePlan) (*interactiveInstance, error) {
	value, ok, err := st.ledger.GetState(ctx, ip.StateKey())
	if err != nil || !ok {
		return nil, err
	}
	bad := func(err error) error {
		return dperr.Wrap(dperr.Internal, err, "internal error: stored interactive state of table %s is unreadable", ip.Table.Name)
	}
	if len(value) < 8 || binary.LittleEndian.Uint64(value) > uint64(len(value)-8) {
		return nil, bad(errors.New("truncated"))
	}
	n := int(binary.LittleEndian.Uint64(value))
	inst := &interactiveInstance{}
	dec := json.NewDecoder(bytes.NewReader(value[8 : 8+n]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&inst.header); err != nil {
		return nil, bad(err)
	}
	if inst.header.Key != ip.Key {
		return nil, bad(fmt.Errorf("key %q, want %q", inst.header.Key, ip.Key))
	}
	if inst.header.Mechanism == planner.InteractiveMedian {
		inst.mm = &mm.MedianMechanism{}
		if err := inst.mm.UnmarshalBinary(value[8+n:]); err != nil {
			return nil, bad(err)
		}
	} else if len(inst.header.Noisy) != ip.Predicate.Cells() {
		return nil, bad(fmt.Errorf("%d noisy cells, want %d", len(inst.header.Noisy), ip.Predicate.Cells()))
	}
	return inst, nil
}

// put stores the instance with the Median Mechanism state mmState.
func (st *interactiveStore) put(ctx context.Context, ip *planner.InteractivePlan, h *interactiveHeader, mmState []byte) error {
	value, err := h.encode(mmState)
	if err != nil {
		return dperr.Wrap(dperr.Internal, err, "internal error: cannot encode interactive state")
	}
	return st.ledger.PutState(context.WithoutCancel(ctx), ip.StateKey(), value)
}

// createFunc reads the data and releases a new instance (setting
// *readData before the first read).
type createFunc func(ctx context.Context, readData *bool) (*interactiveInstance, error)

// obtain returns the instance of ip: cached, loaded, or created with
// create under a reservation of the instance's ε charged to accounts and
// the claim; created reports whether this call created it.
func (st *interactiveStore) obtain(ctx context.Context, ip *planner.InteractivePlan, accounts []string, claims claimer, create createFunc) (inst *interactiveInstance, created bool, err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if inst := st.byKey[ip.Key]; inst != nil {
		return inst, false, nil
	}
	if inst, err := st.load(ctx, ip); err != nil || inst != nil {
		if inst != nil {
			st.byKey[ip.Key] = inst
		}
		return inst, false, err
	}
	claim := ip.StateKey()
	eps := ip.Config.Epsilon
	if err := claims.ensureClaim(ctx, claim, eps); err != nil {
		return nil, false, err
	}
	res, err := st.ledger.Reserve(ctx, append(accounts, claim), budget.Cost{Epsilon: eps},
		fmt.Sprintf("%s: interactive counting instance", ip.Table.Name))
	if err != nil {
		if free, cerr := claims.claimFree(ctx, claim, eps); cerr == nil && !free {
			return nil, false, dperr.New(dperr.Internal, "internal error: the interactive instance of table %s is being created by another proxy; try again", ip.Table.Name)
		}
		return nil, false, err
	}
	readData := false
	defer func() {
		settle := context.WithoutCancel(ctx)
		var serr error
		if readData {
			serr = res.Commit(settle)
		} else {
			serr = res.Cancel(settle)
		}
		if serr != nil && err == nil {
			inst, created, err = nil, false, dperr.Wrap(dperr.Internal, serr, "internal error: budget ledger unavailable")
		}
	}()
	inst, err = create(ctx, &readData)
	if err != nil {
		return nil, false, err
	}
	var mmState []byte
	if inst.mm != nil {
		if mmState, err = inst.mm.MarshalBinary(); err != nil {
			return nil, false, dperr.Wrap(dperr.Internal, err, "internal error: cannot encode interactive state")
		}
	}
	if err := st.put(ctx, ip, &inst.header, mmState); err != nil {
		return nil, false, err
	}
	st.byKey[ip.Key] = inst
	return inst, true, nil
}

// claimer is the claim-account logic shared with the synopsis store.
type claimer interface {
	ensureClaim(ctx context.Context, claim string, eps float64) error
	claimFree(ctx context.Context, claim string, eps float64) (bool, error)
}
