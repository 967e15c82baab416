package budget

import (
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
