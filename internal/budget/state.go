package budget

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"time"
)

// PutState stores value under key, replacing any earlier value. It is for
// mechanisms that keep state next to the ledger (DAWA synopses, Median
// Mechanism state); keys are up to 255 bytes, and values are limited only by
// the database (on MySQL/MariaDB, by max_allowed_packet: StateValueLimit).
func (l *Ledger) PutState(ctx context.Context, key string, value []byte) error {
	if err := validName("state key", key); err != nil {
		return err
	}
	if value == nil {
		value = []byte{} // the column is NOT NULL
	}
	upsert := l.dialect.upsert("dpproxy_state_v3", "state_key",
		[]string{"state_key", "state_value", "updated_at"}, []string{"state_value", "updated_at"})
	now := time.Now().UnixMicro()
	return ledgerError(l.inTx(ctx, func(tx *sql.Tx) error {
		_, err := l.exec(ctx, tx, upsert, key, value, now)
		return err
	}))
}

// MaxStateValue is the size, in bytes, of the largest state value a
// caller that bounds its values should store in any ledger: what a MySQL
// or MariaDB ledger at MariaDB's default max_allowed_packet of 16 MiB
// takes (stateValueLimit). It is the same for every ledger, so that what
// such a caller refuses does not depend on the ledger's database; it also
// bounds what one swap writes where the database sets no limit.
const MaxStateValue = (16<<20 - statementRoom) / 4

// statementRoom is the room a state swap's statement needs besides its
// values (the SQL, the key, the time), with a generous margin.
const statementRoom = 64 << 10

// stateValueLimit is the largest value a swap can store under a
// max_allowed_packet of packet bytes: the swap sends the old and the new
// value in one statement, each escaped at worst to twice its size (a DSN
// with interpolateParams=true escapes bytes such as 0x00 to two), and the
// rows read back must fit too.
func stateValueLimit(packet int64) int64 { return max(packet-statementRoom, 0) / 4 }

// StateValueLimit returns the size, in bytes, of the largest state value
// that callers bounding their values should store: MaxStateValue, or less
// on a MySQL/MariaDB ledger whose max_allowed_packet is below 16 MiB
// (read now: the server's value may change).
func (l *Ledger) StateValueLimit(ctx context.Context) (int64, error) {
	if l.dialect != MySQL {
		return MaxStateValue, nil
	}
	var packet int64
	if err := l.db.QueryRowContext(ctx, "SELECT @@max_allowed_packet").Scan(&packet); err != nil {
		return 0, ledgerError(err)
	}
	return min(MaxStateValue, stateValueLimit(packet)), nil
}

// GetState returns the value stored under key and true, or nil and false
// when there is none. A stored empty value is returned as a non-nil empty
// slice.
func (l *Ledger) GetState(ctx context.Context, key string) ([]byte, bool, error) {
	var value []byte
	err := l.inTx(ctx, func(tx *sql.Tx) error {
		return l.queryRow(ctx, tx, "SELECT state_value FROM dpproxy_state_v3 WHERE state_key = ?", key).Scan(&value)
	})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, ledgerError(err)
	case value == nil:
		value = []byte{}
	}
	return value, true, nil
}

// SwapState is a compare-and-swap on the value stored under key: with old
// non-nil it replaces the stored value by value if and only if the stored
// value is byte for byte old; with old nil it stores value if and only if
// nothing is stored under key yet. It reports whether it wrote. Several
// proxies sharing the ledger thereby change one shared state one at a
// time: of two swaps from the same old value exactly one succeeds, and the
// other must reload the state and decide again (DESIGN.md §2, "Shared
// state has one writer"). value must differ from old (a swap that changes
// nothing could not be told apart from a lost one on MySQL, which counts
// changed rows only).
func (l *Ledger) SwapState(ctx context.Context, key string, old, value []byte) (bool, error) {
	return l.SwapStates(ctx, StateSwap{Key: key, Old: old, New: value})
}

// StateSwap is one compare-and-swap of SwapStates or CancelIf: the value
// stored under Key from Old to New, with SwapState's rules (Old nil:
// insert-if-absent; New must differ from Old).
type StateSwap struct {
	Key      string
	Old, New []byte
}

// errSwapLost rolls back a transaction whose swap found another value.
var errSwapLost = errors.New("state swap lost")

// SwapStates performs every swap in one transaction, all or none: it
// reports true when each key held its Old value (or, for an Old of nil,
// nothing or New) and now holds New, and false, writing nothing, when any
// did not. It lets a shared state change only while its writer still
// holds a lease stored under another key (the lease's own swap, from the
// value the writer last stored, is one of the swaps).
func (l *Ledger) SwapStates(ctx context.Context, swaps ...StateSwap) (bool, error) {
	swaps, err := sortedSwaps(swaps)
	if err != nil {
		return false, err
	}
	err = l.inTx(ctx, func(tx *sql.Tx) error { return l.swapStates(ctx, tx, swaps) })
	return swapOutcome(err)
}

// sortedSwaps validates swaps and returns them sorted by key, the order in
// which every transaction locks state rows (so two cannot deadlock).
func sortedSwaps(swaps []StateSwap) ([]StateSwap, error) {
	if len(swaps) == 0 {
		return nil, invalid("a state swap needs at least one key")
	}
	out := make([]StateSwap, len(swaps))
	for i, s := range swaps {
		if err := validName("state key", s.Key); err != nil {
			return nil, err
		}
		if s.New == nil {
			s.New = []byte{} // the column is NOT NULL
		}
		if s.Old != nil && bytes.Equal(s.Old, s.New) {
			return nil, invalid("state swap of %s changes nothing", s.Key)
		}
		out[i] = s
	}
	slices.SortFunc(out, func(a, b StateSwap) int { return strings.Compare(a.Key, b.Key) })
	for i := 1; i < len(out); i++ {
		if out[i].Key == out[i-1].Key {
			return nil, invalid("state key %s swapped twice in one transaction", out[i].Key)
		}
	}
	return out, nil
}

// swapStates runs the sorted swaps in tx, failing with errSwapLost at the
// first that finds another value (the caller then rolls tx back).
func (l *Ledger) swapStates(ctx context.Context, tx *sql.Tx, swaps []StateSwap) error {
	now := time.Now().UnixMicro()
	for _, s := range swaps {
		if s.Old == nil {
			// Insert-if-absent, then read back what is stored: the row
			// count cannot tell (a MySQL DSN with clientFoundRows=true
			// counts the kept duplicate as 1). Equal bytes stored by
			// another writer are the same state.
			insert := l.dialect.upsert("dpproxy_state_v3", "state_key", []string{"state_key", "state_value", "updated_at"}, nil)
			if _, err := l.exec(ctx, tx, insert, s.Key, s.New, now); err != nil {
				return err
			}
			var stored []byte
			if err := l.queryRow(ctx, tx, "SELECT state_value FROM dpproxy_state_v3 WHERE state_key = ?", s.Key).Scan(&stored); err != nil {
				return err
			}
			if !bytes.Equal(stored, s.New) {
				return errSwapLost
			}
			continue
		}
		res, err := l.exec(ctx, tx, "UPDATE dpproxy_state_v3 SET state_value = ?, updated_at = ? WHERE state_key = ? AND state_value = ?", s.New, now, s.Key, s.Old)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n != 1 {
			return errSwapLost
		}
	}
	return nil
}

// swapOutcome reports a transaction guarded by compare-and-swaps: true
// when it committed, false when a swap found another value (errSwapLost),
// or the ledger's error.
func swapOutcome(err error) (bool, error) {
	switch {
	case errors.Is(err, errSwapLost):
		return false, nil
	case err != nil:
		return false, ledgerError(err)
	}
	return true, nil
}

// likePrefix returns the LIKE pattern, with escape character '!', of the
// keys that begin with prefix.
func likePrefix(prefix string) string {
	return strings.NewReplacer("!", "!!", "%", "!%", "_", "!_").Replace(prefix) + "%"
}

// StateUsage returns how many values are stored under keys that begin
// with prefix (not empty) and were last written at or after since, and their total
// size in bytes.
func (l *Ledger) StateUsage(ctx context.Context, prefix string, since time.Time) (count, size int64, err error) {
	if err := validName("state key prefix", prefix); err != nil {
		return 0, 0, err
	}
	err = l.inTx(ctx, func(tx *sql.Tx) error {
		return l.queryRow(ctx, tx, "SELECT COUNT(*), COALESCE(SUM(LENGTH(state_value)), 0) FROM dpproxy_state_v3 WHERE state_key LIKE ? ESCAPE '!' AND updated_at >= ?",
			likePrefix(prefix), since.UnixMicro()).Scan(&count, &size)
	})
	if err != nil {
		return 0, 0, ledgerError(err)
	}
	return count, size, nil
}

// DeleteStaleStates deletes at most limit of the values stored under keys
// that begin with prefix (not empty) and were last written before before, and returns
// how many it deleted. A value written again meanwhile (a swap or a Put at
// or after before) is kept: the deletion is conditional on the time of the
// last write, in the same statement.
func (l *Ledger) DeleteStaleStates(ctx context.Context, prefix string, before time.Time, limit int) (int64, error) {
	if err := validName("state key prefix", prefix); err != nil {
		return 0, err
	}
	if limit <= 0 {
		return 0, nil
	}
	var deleted int64
	err := l.inTx(ctx, func(tx *sql.Tx) error {
		rows, err := l.query(ctx, tx, "SELECT state_key FROM dpproxy_state_v3 WHERE state_key LIKE ? ESCAPE '!' AND updated_at < ? LIMIT ?",
			likePrefix(prefix), before.UnixMicro(), limit)
		if err != nil {
			return err
		}
		var keys []any
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				rows.Close()
				return err
			}
			keys = append(keys, k)
		}
		rows.Close()
		if err := rows.Err(); err != nil || len(keys) == 0 {
			return err
		}
		res, err := l.exec(ctx, tx, "DELETE FROM dpproxy_state_v3 WHERE updated_at < ? AND state_key IN ("+placeholders(len(keys))+")",
			append([]any{before.UnixMicro()}, keys...)...)
		if err != nil {
			return err
		}
		deleted, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, ledgerError(err)
	}
	return deleted, nil
}
