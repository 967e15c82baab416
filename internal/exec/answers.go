package exec

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// Repeated answers (Executor.SetRepeatWindow). A statement whose plan is
// identical to one answered within the window gets the answer released
// then, at no cost: repeating a statement can neither average the noise
// away nor spend budget. The answer is post-processing of a released
// value, so handing it out again reveals nothing new about the data; the
// window is the assumption that the table did not change meanwhile.
//
// Whose answers: on a table with a table cap (catalog.Table.Epsilon), any
// analyst's, as a synopsis answers everyone there (DESIGN: shared releases
// need a table cap, which bounds what all analysts learn together); on a
// table without one, the analyst's own only (the user is part of the
// key). Otherwise an analyst with no budget left could read, for free,
// answers that only other analysts' budgets paid for, and learn whether
// someone asked a statement (a stored answer) or not (a refusal). The
// note says an answer is repeated, not when it was released.
//
// Identical means the same typed plan, not the same SQL text: the same
// table (with its declared columns and bounds), the same filter (its
// conditions in any order, IN lists in any order), the same releases
// (statistic, mechanism with its parameters, ε, δ, trim) and the same
// outputs (aggregate and derivation; the column labels may differ). The
// key is a SHA-256 of a canonical encoding of the whole plan that walks
// every field, exported or not, so a field added to a plan later takes
// part in the key without anyone remembering to add it.
//
// The key also hashes the backend's identity (backend.Backend.Identity:
// its driver, database and session zone), which the plan does not hold but
// the answer depends on: a proxy restarted on another database, or with
// another backend.time_zone (a timestamptz read in another zone), answers
// afresh.
//
// The answers live in the ledger's state storage (budget.Ledger state
// under "answer:" + the answer space's tag + ":" + the key's hex), so
// every proxy sharing the ledger agrees. An answer shared on a table is
// stored in the space of the analyst who paid for it (payerKey), and the
// table's key holds a pointer to it (sharedPointer), written in the same
// transaction: lookups are the table's, bounds the payer's. One writer: an
// answer is stored with an insert-if-absent (or, replacing an expired one,
// a compare-and-swap from the expired bytes) and released only if that
// write succeeded; a statement that loses the race discards its own answer
// unreleased and returns the winner's. Within one process, identical
// statements wait for each other (a mutex per key), so only statements
// racing from different proxies ever pay twice.
//
// Bounds. The ledger is shared by every analyst, so what one analyst can
// make it store is bounded. An answer space is the answers one analyst
// stored on tables without a table cap, or those one analyst paid for on
// one table with a table cap (a space per analyst there too, so that one
// analyst filling it cannot keep the others' answers from being stored;
// the table's own space holds a pointer of under 200 bytes per answer its
// analysts stored, so it is bounded by theirs). Before it stores an
// answer, a statement deletes up to answerSweep answers of any space last
// written more than a window ago (expired: no statement repeats them), a
// deletion that keeps an answer written again meanwhile
// (budget.Ledger.DeleteStaleStates); and it stores its answer only if its
// space then holds, written within the window, fewer than maxSpaceAnswers
// answers and at most maxSpaceBytes bytes with it (checked before the
// write, so concurrent statements of one space may overshoot by one answer
// each). An answer not stored is still released and paid; an identical
// statement is then answered afresh and paid again, so neither bound lets
// noise be averaged away. Stale answers are deleted at least answerSweep
// times as fast as a space can store new ones, so the ledger holds about
// two windows' worth of each space's bounds at most.
type answerStore struct {
	keys keyLocks
}

// maxSpaceBytes bounds the bytes an answer space stores within a window,
// and so the bytes of one stored answer (well under 4 MiB, MySQL's
// default max_allowed_packet).
const maxSpaceBytes = 1 << 20

// maxSpaceAnswers bounds the answers an answer space stores within a
// window.
const maxSpaceAnswers = 256

// answerSweep is how many expired answers a statement deletes, at most,
// before it stores its own.
const answerSweep = 8

// answerKeyPrefix begins the ledger state keys of repeated answers.
const answerKeyPrefix = "answer:"

// storedAnswer is the ledger value of a released answer: the outputs'
// values, floats as their bits so that every value round-trips exactly.
type storedAnswer struct {
	ReleasedAt int64         `json:"released_at"` // Unix microseconds
	Values     []storedValue `json:"values"`
	// Result is a RunQuery statement's whole result (runRepeatableQuery).
	Result *storedResult `json:"result,omitempty"`
}

type storedValue struct {
	Null        bool   `json:"null,omitempty"`
	Value       uint64 `json:"value"`
	Low         uint64 `json:"low,omitempty"`
	High        uint64 `json:"high,omitempty"`
	HasInterval bool   `json:"has_interval,omitempty"`
	Note        string `json:"note,omitempty"`
}

// lock takes key's lock (keyLocks.lock): one statement at a time
// answers or releases an answer of key in a process.
func (s *answerStore) lock(ctx context.Context, key string) (unlock func(), err error) {
	return s.keys.lock(ctx, key, "an identical statement's answer")
}

// runRepeatable answers plan from a stored answer released within the
// window, or releases a new one (paying for it) and stores it.
func (e *Executor) runRepeatable(ctx context.Context, user string, plan *planner.Plan, src noise.Source) (*Result, error) {
	fresh := func() (*Result, *storedAnswer, error) {
		released, err := e.paidRelease(ctx, user, plan, src)
		if err != nil {
			return nil, nil, err
		}
		values, err := evaluate(plan, released)
		if err != nil {
			return nil, nil, err
		}
		mine := &storedAnswer{}
		for _, v := range values {
			mine.Values = append(mine.Values, storedValue{Null: v.Null, Value: math.Float64bits(v.Value),
				Low: math.Float64bits(v.Low), High: math.Float64bits(v.High), HasInterval: v.HasInterval, Note: v.Note})
		}
		return resultOf(plan, values), mine, nil
	}
	owner := answerOwner(plan.Table, user)
	key, err := answerKey(plan, owner, e.backend.Identity())
	if err != nil {
		// A plan this code cannot compare (a new kind of field) is answered
		// afresh and paid, as without a window; the log says why.
		e.log.Error("statement answered without the repeat window: its plan has no key", "err", err)
		res, _, err := fresh()
		return res, err
	}
	return e.repeated(ctx, key, payerKey(key, owner, plan.Table.Name, user), fresh, func(a *storedAnswer) (*Result, error) { return repeatedResult(plan, a) })
}

// runRepeatableQuery is runRepeatable for a statement RunQuery answers
// (GROUP BY, aggregates with their own conditions, partition selection):
// its whole result is stored, keyed by the whole query plan (its output
// labels, HAVING, ORDER BY and LIMIT included: another spelling of them is
// another statement, answered afresh and paid).
func (e *Executor) runRepeatableQuery(ctx context.Context, user string, qp *planner.QueryPlan, src noise.Source) (*Result, error) {
	fresh := func() (*Result, *storedAnswer, error) {
		res, err := e.runQuery(ctx, user, qp, src)
		if err != nil {
			return nil, nil, err
		}
		stored, err := storeResult(res)
		if err != nil {
			return nil, nil, dperr.Wrap(dperr.Internal, err, "internal error: cannot record the answer; its budget is spent")
		}
		return res, &storedAnswer{Result: stored}, nil
	}
	owner := answerOwner(qp.Table, user)
	key, err := queryAnswerKey(qp, owner, e.backend.Identity())
	if err != nil {
		e.log.Error("statement answered without the repeat window: its plan has no key", "err", err)
		return e.runQuery(ctx, user, qp, src)
	}
	return e.repeated(ctx, key, payerKey(key, owner, qp.Table.Name, user), fresh, func(a *storedAnswer) (*Result, error) {
		if a.Result == nil {
			return nil, dperr.New(dperr.Internal, "internal error: a stored answer does not fit its statement")
		}
		res, err := a.Result.result()
		if err != nil {
			return nil, dperr.Wrap(dperr.Internal, err, "internal error: a stored answer is unreadable")
		}
		res.Warnings = append(res.Warnings, note(repeatedNote[2:]))
		return res, nil
	})
}

// repeated answers from the answer found under key if it was released
// within the window (replay), or runs fresh, which pays for a new answer,
// stores it (one writer: insert-if-absent or compare-and-swap from what
// was found under key) and releases it only if that write succeeded; a
// statement that loses the race releases the winner's answer, never its
// own. payer is "" for an analyst's own answers, stored under key; for
// answers shared on a table, it is the key the statement's analyst stores
// the answer under (payerKey), and key holds a sharedPointer to it,
// written in the same transaction.
func (e *Executor) repeated(ctx context.Context, key, payer string, fresh func() (*Result, *storedAnswer, error), replay func(*storedAnswer) (*Result, error)) (*Result, error) {
	unlock, err := e.answers.lock(ctx, key)
	if err != nil {
		return nil, err
	}
	defer unlock()
	shared := payer != ""
	old, stored, err := e.loadAnswer(ctx, key, shared)
	if err != nil {
		return nil, err
	}
	if stored != nil && e.fresh(stored) {
		return replay(stored)
	}
	res, mine, err := fresh()
	if err != nil {
		return nil, err
	}
	mine.ReleasedAt = time.Now().UnixMicro()
	value, err := json.Marshal(mine)
	if err != nil {
		return nil, dperr.Wrap(dperr.Internal, err, "internal error: cannot record the answer")
	}
	// The answer is paid for: from here on the statement's context no
	// longer decides whether it is recorded.
	settle := context.WithoutCancel(ctx)
	store := key
	if shared {
		store = payer
	}
	if why := e.roomFor(settle, store, len(value)); why != "" {
		// Released and paid, but not kept.
		res.Warnings = append(res.Warnings, note(why+": an identical statement is answered afresh and paid"))
		return res, nil
	}
	for range maxStoreAttempts {
		swaps := []budget.StateSwap{{Key: key, Old: old, New: value}}
		if shared {
			swaps, err = e.sharedSwaps(settle, key, old, payer, mine.ReleasedAt, value)
			if err != nil {
				return nil, err
			}
		}
		swapped, err := e.ledger.SwapStates(settle, swaps...)
		if err != nil {
			return nil, dperr.Wrap(dperr.Internal, err, "internal error: the answer could not be recorded; its budget is spent")
		}
		if swapped {
			return res, nil
		}
		// Another proxy stored an answer first: release that one, never
		// ours, even if the window has passed meanwhile (it replaced the
		// one this statement found, so it is the newest released answer;
		// handing it out again reveals nothing new). If there is none,
		// the expired answer this statement found was deleted meanwhile:
		// store ours as the first. A shared answer's swap may also lose
		// on the payer's key alone (its expired answer deleted meanwhile),
		// key still holding what this statement found: then try again.
		found := old
		old, stored, err = e.loadAnswer(settle, key, shared)
		if err != nil {
			return nil, err
		}
		if stored != nil && !bytes.Equal(old, found) {
			return replay(stored)
		}
	}
	return nil, dperr.New(dperr.Internal, "internal error: the answer could not be recorded (identical statements of other proxies kept replacing it); its budget is spent")
}

// maxStoreAttempts bounds the swaps of one statement's answer.
const maxStoreAttempts = 4

// sharedPointer is the ledger value, under a shared answer's key, that
// names the key its payer stored the answer under (payerKey).
type sharedPointer struct {
	ReleasedAt int64  `json:"released_at"` // Unix microseconds, as the answer's
	Answer     string `json:"answer"`
}

// sharedSwaps are the swaps that store value, a shared answer released at
// releasedAt, under payer and point key (which held old) to it, in one
// transaction: payer's swap is from what it holds now (an expired answer
// of the same analyst, or nothing).
func (e *Executor) sharedSwaps(ctx context.Context, key string, old []byte, payer string, releasedAt int64, value []byte) ([]budget.StateSwap, error) {
	pointer, err := json.Marshal(sharedPointer{ReleasedAt: releasedAt, Answer: payer})
	if err != nil {
		return nil, dperr.Wrap(dperr.Internal, err, "internal error: cannot record the answer")
	}
	held, ok, err := e.ledger.GetState(ctx, payer)
	if err != nil {
		return nil, dperr.Wrap(dperr.Internal, err, "internal error: budget ledger unavailable")
	}
	if !ok {
		held = nil
	}
	return []budget.StateSwap{{Key: key, Old: old, New: pointer}, {Key: payer, Old: held, New: value}}, nil
}

// roomFor deletes up to answerSweep expired answers, then returns why an
// answer of size bytes under key is not to be stored, or "" if its answer
// space has room for it (the bounds above). A ledger failure of the sweep
// or the count is logged; the answer is then not stored.
func (e *Executor) roomFor(ctx context.Context, key string, size int) string {
	if size > maxSpaceBytes {
		return fmt.Sprintf("this answer (%d bytes stored) is larger than the %d bytes the repeat window keeps", size, maxSpaceBytes)
	}
	cutoff := time.Now().Add(-e.repeatWindow)
	if _, err := e.ledger.DeleteStaleStates(ctx, answerKeyPrefix, cutoff, answerSweep); err != nil {
		e.log.Error("deleting expired repeated answers failed", "err", err)
	}
	n, bytes, err := e.ledger.StateUsage(ctx, answerSpace(key), cutoff)
	switch {
	case err != nil:
		e.log.Error("counting stored repeated answers failed; the answer is not kept", "err", err)
		return "the repeat window could not record this answer"
	case n >= maxSpaceAnswers || bytes+int64(size) > maxSpaceBytes:
		return fmt.Sprintf("the repeat window keeps at most %d answers and %d bytes per analyst (per table, on a table with a table cap), and holds %d answers and %d bytes", maxSpaceAnswers, maxSpaceBytes, n, bytes)
	}
	return ""
}

// loadAnswer returns the bytes stored under key and the answer they hold
// (nil, nil when there is none): for a shared answer (shared true), the
// answer their sharedPointer names (nil when it was deleted, as expired).
func (e *Executor) loadAnswer(ctx context.Context, key string, shared bool) ([]byte, *storedAnswer, error) {
	raw, ok, err := e.ledger.GetState(ctx, key)
	if err != nil {
		return nil, nil, dperr.Wrap(dperr.Internal, err, "internal error: budget ledger unavailable")
	}
	if !ok {
		return nil, nil, nil
	}
	value := raw
	if shared {
		var p sharedPointer
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, nil, dperr.Wrap(dperr.Internal, err, "internal error: a stored answer is unreadable")
		}
		if value, ok, err = e.ledger.GetState(ctx, p.Answer); err != nil {
			return nil, nil, dperr.Wrap(dperr.Internal, err, "internal error: budget ledger unavailable")
		}
		if !ok {
			return raw, nil, nil
		}
	}
	var a storedAnswer
	if err := json.Unmarshal(value, &a); err != nil {
		return nil, nil, dperr.Wrap(dperr.Internal, err, "internal error: a stored answer is unreadable")
	}
	return raw, &a, nil
}

func (e *Executor) fresh(a *storedAnswer) bool {
	return time.Since(time.UnixMicro(a.ReleasedAt)) < e.repeatWindow
}

// repeatedResult rebuilds the result of plan from a stored answer; each
// note says the answer is a repeated one.
func repeatedResult(plan *planner.Plan, a *storedAnswer) (*Result, error) {
	if len(a.Values) != len(plan.Outputs) {
		return nil, dperr.New(dperr.Internal, "internal error: a stored answer does not fit its statement")
	}
	values := make([]planner.Value, len(a.Values))
	for i, s := range a.Values {
		values[i] = planner.Value{Null: s.Null, Estimate: planner.Estimate{Value: math.Float64frombits(s.Value),
			Low: math.Float64frombits(s.Low), High: math.Float64frombits(s.High), HasInterval: s.HasInterval, Note: s.Note}}
	}
	res := resultOf(plan, values)
	for i := range res.Warnings {
		res.Warnings[i].Message += repeatedNote
	}
	return res, nil
}

// repeatedNote ends the notes of a repeated answer.
const repeatedNote = "; repeated answer: the answer of an identical statement released within the repeat window, no budget spent"

// answerOwner returns whose answers a statement of user on t may repeat:
// "" (everyone's) on a table with a table cap, else user's own.
func answerOwner(t *catalog.Table, user string) string {
	if t.Epsilon > 0 {
		return ""
	}
	return user
}

// answerKey returns the ledger state key of plan's answers released to
// owner ("" for answers shared by every analyst) by the backend of
// identity backend (backend.Backend.Identity).
func answerKey(plan *planner.Plan, owner, backend string) (string, error) {
	canon := *plan
	canon.Filter = slices.Clone(plan.Filter)
	canon.Outputs = slices.Clone(plan.Outputs)
	for i := range canon.Outputs {
		canon.Outputs[i].Label = "" // the client's alias or spelling
	}
	return canonicalKey("plan", canon, owner, plan.Table.Name, backend)
}

// queryAnswerKey returns the ledger state key of the answers of a RunQuery
// statement released to owner by the backend of identity backend.
func queryAnswerKey(qp *planner.QueryPlan, owner, backend string) (string, error) {
	return canonicalKey("query", *qp, owner, qp.Table.Name, backend)
}

// canonicalKey hashes the kind, the backend's identity, the owner and the
// canonical encoding of v (lengths first: no two (kind, backend, owner, v)
// encode alike), after the tag of its answer space: the owner's, or for
// answers shared by every analyst (owner ""), the table's. The backend is
// part of the key because what a plan answers depends on it too (the
// database, the zone its columns with a time zone are read in): a proxy
// restarted on another never repeats the first one's answers.
func canonicalKey(kind string, v any, owner, table, backend string) (string, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s backend %d:%s owner %d:%s;", kind, len(backend), backend, len(owner), owner)
	if err := encodeCanonical(&b, reflect.ValueOf(v), 0); err != nil {
		return "", err
	}
	sum := sha256.Sum256(b.Bytes())
	space := fmt.Sprintf("user %d:%s", len(owner), owner)
	if owner == "" {
		space = fmt.Sprintf("table %d:%s", len(table), table)
	}
	return answerKeyPrefix + spaceTag(space) + ":" + hex.EncodeToString(sum[:]), nil
}

// payerKey returns "" for an answer of owner's own (owner not ""), stored
// under key; for an answer shared on table, the key user stores it under
// if they pay for it: key's hash in user's part of the table's answers, a
// space of its own, so that each analyst's answers there have the bounds
// of an answer space and no analyst can fill the table's for the others.
func payerKey(key, owner, table, user string) string {
	if owner != "" {
		return ""
	}
	space := fmt.Sprintf("table %d:%s user %d:%s", len(table), table, len(user), user)
	return answerKeyPrefix + spaceTag(space) + key[len(answerSpace(key))-1:]
}

// spaceTag is the tag of the answer space named space in its keys.
func spaceTag(space string) string {
	tag := sha256.Sum256([]byte(space))
	return hex.EncodeToString(tag[:spaceTagLen])
}

// spaceTagLen is the bytes of an answer space's tag in its keys: two
// spaces that share a tag (by chance) only share their bounds.
const spaceTagLen = 8

// answerSpace returns the prefix of the keys of key's answer space.
func answerSpace(key string) string {
	return key[:len(answerKeyPrefix)+2*spaceTagLen+1]
}

// maxCanonicalDepth bounds the nesting encodeCanonical follows (a cycle
// would otherwise never end). Plans are trees a few levels deep but for a
// WHERE with OR and NOT, whose predicate nests at most 100 nodes
// (sqlrewrite's bound), each three levels here (pointer, node, operands).
const maxCanonicalDepth = 512

// The element types of conjunctions and IN lists.
var (
	conditionType = reflect.TypeOf(sqlrewrite.Condition{})
	valueType     = reflect.TypeOf(sqlrewrite.Value{})
)

// encodeCanonical writes an encoding of v that is equal for equal plans:
// every struct field (exported or not) by name, floats as bits, the
// dynamic type of interfaces, map entries sorted, and the elements of a
// conjunction ([]sqlrewrite.Condition) and of an IN list sorted, since
// their order does not change the rows they select. Functions and
// channels cannot be compared: a plan holding one has no key.
func encodeCanonical(b *bytes.Buffer, v reflect.Value, depth int) error {
	if depth > maxCanonicalDepth {
		return errors.New("plan nested too deeply for a canonical encoding")
	}
	switch v.Kind() {
	case reflect.Bool:
		b.WriteString(strconv.FormatBool(v.Bool()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		b.WriteString(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		b.WriteString(strconv.FormatUint(v.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		b.WriteString("f" + strconv.FormatUint(math.Float64bits(v.Float()), 16))
	case reflect.String:
		b.WriteString(strconv.Quote(v.String()))
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			b.WriteString("nil")
			return nil
		}
		if v.Kind() == reflect.Interface {
			b.WriteString(v.Elem().Type().String())
		}
		b.WriteByte('&')
		return encodeCanonical(b, v.Elem(), depth+1)
	case reflect.Struct:
		b.WriteString(v.Type().String() + "{")
		for i := range v.NumField() {
			b.WriteString(v.Type().Field(i).Name + ":")
			if err := encodeCanonical(b, v.Field(i), depth+1); err != nil {
				return err
			}
			b.WriteByte(',')
		}
		b.WriteByte('}')
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			b.WriteString("nil")
			return nil
		}
		elems := make([][]byte, v.Len())
		for i := range elems {
			var e bytes.Buffer
			if err := encodeCanonical(&e, v.Index(i), depth+1); err != nil {
				return err
			}
			elems[i] = e.Bytes()
		}
		t := v.Type()
		if t.Elem() == conditionType || t.Elem() == valueType {
			slices.SortFunc(elems, bytes.Compare) // a conjunction, an IN list
		}
		b.WriteByte('[')
		for _, e := range elems {
			b.Write(e)
			b.WriteByte(',')
		}
		b.WriteByte(']')
	case reflect.Map:
		entries := make([][]byte, 0, v.Len())
		for it := v.MapRange(); it.Next(); {
			var e bytes.Buffer
			if err := encodeCanonical(&e, it.Key(), depth+1); err != nil {
				return err
			}
			e.WriteByte(':')
			if err := encodeCanonical(&e, it.Value(), depth+1); err != nil {
				return err
			}
			entries = append(entries, e.Bytes())
		}
		slices.SortFunc(entries, bytes.Compare)
		b.WriteByte('{')
		for _, e := range entries {
			b.Write(e)
			b.WriteByte(',')
		}
		b.WriteByte('}')
	default:
		return fmt.Errorf("plan holds a %s, which has no canonical encoding", v.Kind())
	}
	return nil
}
