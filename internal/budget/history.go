package budget

import (
	"context"
	"database/sql"
	"strings"
	"time"
)

// State is where a reservation is in its life.
type State string

// The states of a reservation. A reservation left Reserved by a crash counts
// as spent, like a Committed one.
const (
	Reserved  State = "reserved"
	Committed State = "committed"
	Cancelled State = "cancelled"
)

// verb names the action that leads to the state, for messages.
func (s State) verb() string {
	if s == Cancelled {
		return "cancel"
	}
	return "commit"
}

// Entry is one reservation as recorded in the ledger.
type Entry struct {
	ID       int64
	Accounts []string // sorted
	Cost     Cost
	Memo     string
	State    State
	// ReservedAt is when Reserve recorded it; SettledAt when Commit or Cancel
	// did, zero while it is Reserved.
	ReservedAt time.Time
	SettledAt  time.Time
}

// History returns the reservations charged to account, newest first, at
// most limit of them (all when limit <= 0). It fails with an error wrapping
// ErrUnknownAccount when the account does not exist.
func (l *Ledger) History(ctx context.Context, account string, limit int) ([]Entry, error) {
	query := `SELECT r.id, r.accounts, r.epsilon, r.delta, r.memo, r.state, r.reserved_at, r.settled_at
		FROM dpproxy_reservation_accounts a JOIN dpproxy_reservations r ON r.id = a.reservation_id
		WHERE a.account = ? ORDER BY a.reservation_id DESC`
	args := []any{account}
	if limit > 0 {
		query += " LIMIT ?"
		args = append(args, limit)
	}
	var entries []Entry
	err := l.inTx(ctx, func(tx *sql.Tx) error {
		entries = nil
		var exists int
		if err := l.queryRow(ctx, tx, "SELECT COUNT(*) FROM dpproxy_accounts_v3 WHERE name = ?", account).Scan(&exists); err != nil {
			return err
		}
		if exists == 0 {
			return unknownAccount(account)
		}
		rows, err := l.query(ctx, tx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var e Entry
			var accounts, state string
			var reserved int64
			var settled sql.NullInt64
			if err := rows.Scan(&e.ID, &accounts, &e.Cost.Epsilon, &e.Cost.Delta, &e.Memo, &state, &reserved, &settled); err != nil {
				return err
			}
			e.Accounts = strings.Split(accounts, "\n")
			e.State = State(state)
			e.ReservedAt = time.UnixMicro(reserved)
			if settled.Valid {
				e.SettledAt = time.UnixMicro(settled.Int64)
			}
			entries = append(entries, e)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, ledgerError(err)
	}
	return entries, nil
}
