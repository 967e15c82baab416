package budget

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"time"
)

// PutState stores value under key, replacing any earlier value. It is for
// mechanisms that keep state next to the ledger (DAWA synopses, Median
// Mechanism state); keys are up to 255 bytes, and values are limited only by
// the database (on MySQL/MariaDB, by max_allowed_packet).
func (l *Ledger) PutState(ctx context.Context, key string, value []byte) error {
	if err := validName("state key", key); err != nil {
		return err
	}
	if value == nil {
		value = []byte{} // the column is NOT NULL
	}
	upsert := l.dialect.upsert("dpproxy_state", "state_key",
		[]string{"state_key", "state_value", "updated_at"}, []string{"state_value", "updated_at"})
	now := time.Now().UnixMicro()
	return ledgerError(l.inTx(ctx, func(tx *sql.Tx) error {
		_, err := l.exec(ctx, tx, upsert, key, value, now)
		return err
	}))
}

// GetState returns the value stored under key and true, or nil and false
// when there is none. A stored empty value is returned as a non-nil empty
// slice.
func (l *Ledger) GetState(ctx context.Context, key string) ([]byte, bool, error) {
	var value []byte
	err := l.inTx(ctx, func(tx *sql.Tx) error {
		return l.queryRow(ctx, tx, "SELECT state_value FROM dpproxy_state WHERE state_key = ?", key).Scan(&value)
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
	if err := validName("state key", key); err != nil {
		return false, err
	}
	if value == nil {
		value = []byte{} // the column is NOT NULL
	}
	if old != nil && bytes.Equal(old, value) {
		return false, invalid("state swap of %s changes nothing", key)
	}
	now := time.Now().UnixMicro()
	var swapped bool
	err := l.inTx(ctx, func(tx *sql.Tx) error {
		if old == nil {
			// Insert-if-absent, then read back what is stored: the row
			// count cannot tell (a MySQL DSN with clientFoundRows=true
			// counts the kept duplicate as 1). Equal bytes stored by
			// another writer are the same state.
			insert := l.dialect.upsert("dpproxy_state", "state_key", []string{"state_key", "state_value", "updated_at"}, nil)
			if _, err := l.exec(ctx, tx, insert, key, value, now); err != nil {
				return err
			}
			var stored []byte
			if err := l.queryRow(ctx, tx, "SELECT state_value FROM dpproxy_state WHERE state_key = ?", key).Scan(&stored); err != nil {
				return err
			}
			swapped = bytes.Equal(stored, value)
			return nil
		}
		res, err := l.exec(ctx, tx, "UPDATE dpproxy_state SET state_value = ?, updated_at = ? WHERE state_key = ? AND state_value = ?", value, now, key, old)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		swapped = n == 1
		return err
	})
	if err != nil {
		return false, ledgerError(err)
	}
	return swapped, nil
}
