package budget

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// maxMemoLen bounds the memo kept with a reservation, in bytes; a longer memo
// is truncated.
const maxMemoLen = 512

// Reservation is budget reserved by Reserve and not yet settled. Exactly one
// Commit or Cancel settles it; both check the ledger, so a second call fails
// even from another process.
type Reservation struct {
	ledger   *Ledger
	id       int64
	accounts []string // sorted, distinct
	cost     Cost
	memo     string
}

// ID returns the reservation's number in the ledger, as listed by History.
func (r *Reservation) ID() int64 { return r.id }

// Cost returns the reserved amount, charged to every account.
func (r *Reservation) Cost() Cost { return r.cost }

// Accounts returns the charged accounts, sorted.
func (r *Reservation) Accounts() []string { return slices.Clone(r.accounts) }

// Reserve charges cost to every one of accounts (a repeated name counts
// once, checked against each of its limits) in one transaction, or to
// none of them. It fails with a dperr.BudgetExhausted error naming the
// first account, in the order given, that cannot pay (and what remains of
// it if the account is marked Disclose), and with an error wrapping
// ErrUnknownAccount when an account checked against its stored limit does
// not exist; an account with its own limit or none is created if missing.
// memo is kept for auditors (truncated to maxMemoLen, 512 bytes: one row
// per statement stays small whatever labels the client writes).
//
// The reservation counts as spent until Cancel releases it: if neither Commit
// nor Cancel is ever called, it stays spent. Concurrent Reserves and Commits
// share transactions (batch.go); if ctx ends while the request waits for
// its batch, Reserve returns the context's error and charges nothing: a
// reservation the batch grants for it anyway is cancelled by the ledger
// (or, if that fails or the process dies first, stays spent: the
// caller's cancellation can overcharge, never undercharge).
func (l *Ledger) Reserve(ctx context.Context, accounts []Account, cost Cost, memo string) (*Reservation, error) {
	if len(accounts) == 0 {
		return nil, invalid("a reservation needs at least one account")
	}
	names := make([]string, len(accounts))
	for i, a := range accounts {
		if err := a.validate(); err != nil {
			return nil, err
		}
		names[i] = a.Name
	}
	if err := cost.validate("cost"); err != nil {
		return nil, err
	}
	if err := l.ensureAccounts(ctx, accounts); err != nil {
		return nil, err
	}
	sorted := slices.Compact(slices.Sorted(slices.Values(names)))
	req := &request{
		reserve: &reserveRequest{accounts: slices.Clone(accounts), sorted: sorted, cost: cost, memo: cleanMemo(memo)},
		now:     time.Now().UnixMicro(),
	}
	if err := l.submit(ctx, req); err != nil {
		return nil, err
	}
	return &Reservation{ledger: l, id: req.id, accounts: sorted, cost: cost, memo: req.reserve.memo}, nil
}

// Commit marks the reservation as spent for good: the answer it paid for was
// released, or data was read. It fails with an error wrapping ErrSettled if
// the reservation was already committed or cancelled. A Commit that fails
// leaves the reservation counted as spent (if ctx ends while the Commit
// waits for its batch, it may still be written, or never be), so the
// caller may pass a context that outlives the client
// (context.WithoutCancel) to keep History accurate.
func (r *Reservation) Commit(ctx context.Context) error {
	l := r.ledger
	err := l.submit(ctx, &request{commit: r, now: time.Now().UnixMicro()})
	if err == nil && l.onCommit != nil {
		l.onCommit(Charge{Accounts: r.accounts, Cost: r.cost, Memo: r.memo})
	}
	return err
}

// Cancel releases the reservation, giving its cost back to every account.
// Call it only when no data was read for the statement (DESIGN.md §2,
// "Refusals are paid"). It fails with an error wrapping ErrSettled if the
// reservation was already committed or cancelled.
func (r *Reservation) Cancel(ctx context.Context) error {
	_, err := r.cancel(ctx, nil)
	return err
}

// CancelIf is Cancel made conditional on swap, in the same transaction:
// it cancels the reservation and performs swap if the swap's key holds
// its Old value, and otherwise does neither and reports false (the
// reservation stays pending, for the caller to commit). A claim whose
// holder stores a lease next to the ledger thereby gives its budget back
// only while no other proxy has taken the lease over (and raised the
// claim on the strength of this reservation staying spent).
func (r *Reservation) CancelIf(ctx context.Context, swap StateSwap) (bool, error) {
	swaps, err := sortedSwaps([]StateSwap{swap})
	if err != nil {
		return false, err
	}
	return r.cancel(ctx, swaps)
}

// cancel cancels the reservation if every one of swaps succeeds with it.
func (r *Reservation) cancel(ctx context.Context, swaps []StateSwap) (bool, error) {
	l := r.ledger
	now := time.Now().UnixMicro()
	err := l.inTx(ctx, func(tx *sql.Tx) error {
		usages, err := l.lockAccounts(ctx, tx, r.accounts)
		if err != nil {
			return err
		}
		if err := l.swapStates(ctx, tx, swaps); err != nil {
			return err
		}
		if err := l.settle(ctx, tx, r.id, Cancelled, now); err != nil {
			return err
		}
		for _, a := range r.accounts {
			if err := l.setUsage(ctx, tx, a, usages[a].plus(Cost{Epsilon: -r.cost.Epsilon, Delta: -r.cost.Delta}).used, now); err != nil {
				return err
			}
		}
		return nil
	})
	return swapOutcome(err)
}

// lockAccounts locks the rows of the sorted accounts until tx ends and
// returns their usage; missing accounts are absent from the map. All
// transactions lock accounts in this order before touching reservations, so
// they cannot deadlock one another.
func (l *Ledger) lockAccounts(ctx context.Context, tx *sql.Tx, sorted []string) (map[string]usage, error) {
	in := "(" + placeholders(len(sorted)) + ")"
	if l.dialect == SQLite {
		// A write as the first statement takes SQLite's database write lock
		// now, waiting for busy_timeout, as BEGIN IMMEDIATE would. A read
		// first would let two transactions read, then fail to upgrade.
		if _, err := l.exec(ctx, tx, "UPDATE dpproxy_accounts_v3 SET epsilon_limit = epsilon_limit WHERE name IN "+in, anys(sorted)...); err != nil {
			return nil, err
		}
	}
	rows, err := l.query(ctx, tx, "SELECT name, epsilon_limit, delta_limit, epsilon_used, delta_used FROM dpproxy_accounts_v3 WHERE name IN "+in+" ORDER BY name"+l.dialect.lockSuffix(), anys(sorted)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	usages := make(map[string]usage, len(sorted))
	for rows.Next() {
		var name string
		var u usage
		if err := rows.Scan(&name, &u.limit.Epsilon, &u.limit.Delta, &u.used.Epsilon, &u.used.Delta); err != nil {
			return nil, err
		}
		usages[name] = u
	}
	return usages, rows.Err()
}

// settle moves reservation id from Reserved to state, or fails with an error
// wrapping ErrSettled.
func (l *Ledger) settle(ctx context.Context, tx *sql.Tx, id int64, state State, now int64) error {
	res, err := l.exec(ctx, tx, "UPDATE dpproxy_reservations SET state = ?, settled_at = ? WHERE id = ? AND state = ?",
		string(state), now, id, string(Reserved))
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil || n == 1 {
		return err
	}
	var current string
	err = l.queryRow(ctx, tx, "SELECT state FROM dpproxy_reservations WHERE id = ?", id).Scan(&current)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	return settled(id, state.verb(), State(current))
}

// cleanMemo makes memo storable in every dialect: valid UTF-8 without NUL
// bytes, at most maxMemoLen bytes, cut at a character boundary.
func cleanMemo(memo string) string {
	memo = strings.ReplaceAll(strings.ToValidUTF8(memo, "\uFFFD"), "\x00", "")
	if len(memo) <= maxMemoLen {
		return memo
	}
	cut := maxMemoLen
	for cut > 0 && !utf8.RuneStart(memo[cut]) {
		cut--
	}
	return memo[:cut]
}

// anys converts names to query arguments.
func anys(names []string) []any {
	args := make([]any, len(names))
	for i, n := range names {
		args[i] = n
	}
	return args
}
