package exec

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dpproxy/dpproxy/internal/budget"
)

// Shared releases (synopses, interactive instances) are stored as budget
// ledger state values in one envelope: an 8-byte little-endian length, a
// JSON header of that length describing the release, then the
// mechanism's binary state. A value must fit the ledger: each store
// checks, from public facts only and before any reservation, that the
// largest value its release can take is within
// budget.Ledger.StateValueLimit (interactiveStore.fit, synopsisStore.fit).

// encodeEnvelope serializes header as JSON, followed by state.
func encodeEnvelope(header any, state []byte) ([]byte, error) {
	js, err := json.Marshal(header)
	if err != nil {
		return nil, err
	}
	buf := binary.LittleEndian.AppendUint64(make([]byte, 0, 8+len(js)+len(state)), uint64(len(js)))
	return append(append(buf, js...), state...), nil
}

// isEnvelope reports whether value is an envelope rather than JSON (a
// synopsis stored before the envelope): an envelope's length has zero
// high bytes, and JSON never holds a zero byte.
func isEnvelope(value []byte) bool {
	return len(value) >= 8 && binary.LittleEndian.Uint64(value)>>32 == 0
}

// decodeEnvelope parses value's header into header (unknown fields
// refused) and returns the state after it.
func decodeEnvelope(value []byte, header any) (state []byte, err error) {
	if len(value) < 8 || binary.LittleEndian.Uint64(value) > uint64(len(value)-8) {
		return nil, errors.New("truncated")
	}
	n := int(binary.LittleEndian.Uint64(value))
	dec := json.NewDecoder(bytes.NewReader(value[8 : 8+n]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(header); err != nil {
		return nil, err
	}
	return value[8+n:], nil
}

// envelopeHeaderRoom bounds a stored header's JSON besides its key and
// its noisy cells: the field names, the mechanism, a rule's reason (under
// 400 bytes), the numbers, the time and a unit salt, with a wide margin.
const envelopeHeaderRoom = 4096

// envelopeBound bounds an envelope's bytes besides the mechanism's state
// and a header's noisy cells, for a release whose key has keyLen bytes:
// the length, and the header's JSON with the key escaped at worst
// (\u00XX, 6 bytes a byte).
func envelopeBound(keyLen int) int64 { return int64(8 + envelopeHeaderRoom + 6*keyLen) }

// stateLimitText names limit, the ledger's limit on a stored value, in
// refusals.
func stateLimitText(limit int64) string {
	return fmt.Sprintf("the %d bytes a value in the budget ledger may take (%d on every ledger; on MySQL/MariaDB at most a quarter of max_allowed_packet, less 64 KiB)", limit, budget.MaxStateValue)
}

// notStored is the mechanism a stored header names in place of a release
// whose creation read the data but could not store it (storeRelease). Its
// text is that of the first such marks, of interactive instances.
const notStored = "none: the instance could not be stored"

// storeRelease stores value, a release its creation paid for after
// reading data, under key if nothing is stored there yet (an
// insert-if-absent swap; false when another creation stored first, to be
// adopted). When the ledger refuses the value it stores mark instead, if
// nothing is stored and the ledger takes it: a small value whose header
// names notStored, so that every later statement fails, uncharged, naming
// the failure, instead of reopening the claim (reopenIfAbandoned) to pay
// again for a creation that would likely fail again, each statement of
// each analyst charged the release's ε (found by an independent review).
// Whether the store fails does not depend on the data: the value is
// within a public bound that fits the ledger (the stores' fit), so only
// the ledger's own failures remain. When the mark cannot be stored either
// (the ledger is down), the claim is reopened as after a crash.
func storeRelease(ctx context.Context, ledger *budget.Ledger, key string, value, mark []byte) (bool, error) {
	ctx = context.WithoutCancel(ctx)
	stored, err := ledger.SwapState(ctx, key, nil, value)
	if err != nil {
		_, _ = ledger.SwapState(ctx, key, nil, mark) // on failure: reopened as after a crash
	}
	return stored, err
}
