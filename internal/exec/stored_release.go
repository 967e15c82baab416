package exec

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

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

// Storing a release. A release is stored once, by the creation that paid
// for it (storeRelease), and a failure to store it must neither charge its
// release again nor lose it while its process lives, nor depend on the
// data. Its value is within a public bound that fits the ledger (the
// stores' fit, checked before the reservation), so no store fails for a
// reason the public facts determine: only the ledger's own failures
// remain (a lost connection, a timeout, a full disk, a ledger down for a
// while), each of which may be over at the next attempt. So a failure
// leaves no mark in the ledger (earlier versions stored one, which refused
// every later statement until the configuration changed, even after a
// transient error: an independent review), and:
//
//   - storeRelease retries the insert-if-absent swap a few times with
//     backoff (storeAttempts), outliving the statement but within a third
//     of the creation's lease, and reads the key back when the last
//     attempt's outcome is unknown;
//   - if each attempt fails, the creation keeps the release, paid, in its
//     process's memory, unstored, and answers from it (a synopsis, a noisy
//     histogram over X: post-processing of the paid release; a Median
//     Mechanism, whose answers are commits of its stored state, answers
//     once stored). Every later statement of the process that needs it
//     tries the swap again first and answers from the copy meanwhile,
//     uncharged; once the swap succeeds the release is stored as any other,
//     and if another creation stored one first, that one is adopted and the
//     copy dropped.
//
// Other proxies, and this one after a restart, do not see the unstored
// copy: by the claim protocol (reopenIfAbandoned) a creation whose
// reservation is settled with nothing stored is over, so the next of
// their statements that needs the release creates it again, charged
// again; of the two, the first stored is the one every proxy then answers
// from. Every release is thus paid for by the statement that created it
// and released only to the process that created it until stored, and
// neither the charges nor the answers depend on the data: whether a store
// fails is the ledger's doing alone. A ledger that keeps refusing costs
// one creation per process that needs the release, never one per
// statement.

// storeAttempts is how many times storeRelease tries the swap, and
// storeBackoff the wait before the second attempt, doubled before each
// later one.
const (
	storeAttempts = 3
	storeBackoff  = 100 * time.Millisecond
)

// storeRelease stores value, a release its creation paid for after
// reading data, under key if nothing is stored there yet (an
// insert-if-absent swap, whose read-back also recognizes a value an
// earlier attempt stored although its commit was not acknowledged). It
// reports false when another creation stored first (to be adopted). A
// ledger error is retried storeAttempts times, outliving ctx (the release
// is paid: storing it must not end with the statement) but within bound
// in all, so that a row another session holds locked holds the statement
// no longer; if the last attempt fails, its outcome unknown, the value
// read back (bounded too) decides, and otherwise the last error is
// returned, and the caller keeps the release unstored (see above).
func storeRelease(ctx context.Context, ledger *budget.Ledger, key string, value []byte, bound time.Duration) (stored bool, err error) {
	ctx = context.WithoutCancel(ctx)
	sctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	for attempt, wait := 1, storeBackoff; ; attempt, wait = attempt+1, 2*wait {
		if stored, err = ledger.SwapState(sctx, key, nil, value); err == nil {
			return stored, nil
		}
		if attempt == storeAttempts || !pause(sctx, wait) {
			break
		}
	}
	rctx, rcancel := context.WithTimeout(ctx, bound)
	defer rcancel()
	if cur, found, rerr := ledger.GetState(rctx, key); rerr == nil && found {
		return bytes.Equal(cur, value), nil
	}
	return false, err
}

// pause waits for d, or until ctx ends: it reports whether d passed.
func pause(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}
