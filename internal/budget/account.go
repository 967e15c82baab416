package budget

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"slices"
	"time"
)

// Account is one account a reservation charges, with the limit the
// reservation holds the account's usage to.
type Account struct {
	// Name is the account's name, such as "user:alice".
	Name string
	// Limit bounds the account's usage, which every Ledger sharing the
	// database adds to; the zero Limit is the one stored with SetLimit.
	Limit Limit
	// Label names the account in refusals, such as "table pums_v2"; empty,
	// its name does ("user:alice" as "user alice").
	Label string
	// Disclose lets a refusal by this account state what remains of it:
	// set it only for the refused analyst's own account. Another account's
	// remaining amount (a table cap's) is what other analysts left of it.
	Disclose bool
}

// Limit is how a reservation bounds one account's usage: by the limit
// stored in the ledger (the zero Limit), by a limit of the caller's own
// (OwnLimit), or not at all (NoLimit).
type Limit struct {
	kind limitKind
	cost Cost
}

type limitKind int

const (
	storedLimit limitKind = iota
	ownLimit
	noLimit
)

// OwnLimit bounds the account's usage by cost, whatever limit is stored in
// the ledger: each proxy enforces its own configuration against the usage
// that all of them share. A Reserve creates a missing account (with no
// usage) instead of refusing it.
func OwnLimit(cost Cost) Limit { return Limit{kind: ownLimit, cost: cost} }

// NoLimit charges the account without bounding it: its usage stays
// complete for the Ledgers that do bound it. A Reserve creates a missing
// account (with no usage) instead of refusing it.
func NoLimit() Limit { return Limit{kind: noLimit} }

// apply returns u bounded by the limit, and false when nothing bounds it.
func (lim Limit) apply(u usage) (usage, bool) {
	switch lim.kind {
	case ownLimit:
		u.limit = lim.cost
	case noLimit:
		return u, false
	}
	return u, true
}

// created reports whether a Reserve creates the account when it is
// missing, and the limit stored with it: for the record only, as the
// Limit's own applies.
func (lim Limit) created() (Cost, bool) {
	switch lim.kind {
	case ownLimit:
		return lim.cost, true
	case noLimit:
		return Cost{}, true
	}
	return Cost{}, false
}

// validate checks an account of a Reserve.
func (a Account) validate() error {
	if err := validName("account", a.Name); err != nil {
		return err
	}
	if a.Limit.kind == ownLimit {
		return a.Limit.cost.validate("limit")
	}
	return nil
}

// ensureAccounts creates, with no usage, the accounts that Reserve creates
// when missing (OwnLimit, NoLimit) and that this Ledger has not seen yet,
// each in a transaction of its own that takes no other lock (so that it
// cannot deadlock a reservation). Accounts are never deleted, so one that
// was seen stays.
func (l *Ledger) ensureAccounts(ctx context.Context, accounts []Account) error {
	for _, a := range accounts {
		limit, ok := a.Limit.created()
		if !ok {
			continue
		}
		if _, seen := l.seen.Load(a.Name); seen {
			continue
		}
		if err := l.ensureAccount(ctx, a.Name, limit); err != nil {
			return err
		}
		l.seen.Store(a.Name, struct{}{})
	}
	return nil
}

// ensureAccount creates the account with the given stored limit and no
// usage if it is missing, and leaves an existing one as it is.
func (l *Ledger) ensureAccount(ctx context.Context, account string, limit Cost) error {
	insert := l.dialect.upsert("dpproxy_accounts_v3", "name",
		[]string{"name", "epsilon_limit", "delta_limit", "epsilon_used", "delta_used", "created_at", "updated_at"}, nil)
	now := time.Now().UnixMicro()
	return ledgerError(l.inTx(ctx, func(tx *sql.Tx) error {
		_, err := l.exec(ctx, tx, insert, account, limit.Epsilon, limit.Delta, 0.0, 0.0, now, now)
		return err
	}))
}

// RemainingUnder returns what the account may still spend under limit, the
// caller's own (OwnLimit): limit minus every reservation not cancelled, per
// component, never below zero, rounded as refusals print amounts
// (displayed): 3.7, not the float residue 3.6999999999999997. A
// statement costing exactly the amount returned fits. A missing account
// has used nothing.
func (l *Ledger) RemainingUnder(ctx context.Context, account string, limit Cost) (Cost, error) {
	if err := validName("account", account); err != nil {
		return Cost{}, err
	}
	if err := limit.validate("limit"); err != nil {
		return Cost{}, err
	}
	u := usage{limit: limit}
	err := l.inTx(ctx, func(tx *sql.Tx) error {
		err := l.queryRow(ctx, tx, "SELECT epsilon_used, delta_used FROM dpproxy_accounts_v3 WHERE name = ?", account).Scan(&u.used.Epsilon, &u.used.Delta)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		return err
	})
	if err != nil {
		return Cost{}, ledgerError(err)
	}
	left := u.remaining()
	return Cost{Epsilon: displayed(left.Epsilon), Delta: displayed(left.Delta)}, nil
}

// carriedPrefix begins the state keys that record a CarryOver.
const carriedPrefix = "budget:carried:"

// CarryOver adds, once for the life of the ledger, the usage of account
// from to account to (creating to, with no usage and a stored limit of
// zero, if it is missing), so that a renamed account keeps what its old
// name spent. It reports whether it carried anything: false when from does
// not exist, is to, or was carried over before (by any Ledger sharing the
// database; a record of it is kept next to the ledger). Reservations of
// from stay listed under from (History).
func (l *Ledger) CarryOver(ctx context.Context, from, to string) (bool, error) {
	for _, name := range []string{from, to} {
		if err := validName("account", name); err != nil {
			return false, err
		}
	}
	if err := validName("state key", carriedPrefix+from); err != nil {
		return false, err
	}
	if from == to {
		return false, nil
	}
	if err := l.ensureAccount(ctx, to, Cost{}); err != nil {
		return false, err
	}
	var token [16]byte
	_, _ = rand.Read(token[:]) // crypto/rand.Read never fails
	now := time.Now().UnixMicro()
	carried := false
	err := l.inTx(ctx, func(tx *sql.Tx) error {
		carried = false
		usages, err := l.lockAccounts(ctx, tx, slices.Sorted(slices.Values([]string{from, to})))
		if err != nil {
			return err
		}
		old, ok := usages[from]
		if !ok {
			return nil
		}
		// The record, written once: a Ledger that finds another's token
		// there has nothing left to carry (errSwapLost).
		if err := l.swapStates(ctx, tx, []StateSwap{{Key: carriedPrefix + from, New: []byte(to + "\n" + hex.EncodeToString(token[:]))}}); err != nil {
			return err
		}
		if err := l.setUsage(ctx, tx, to, usages[to].plus(old.used).used, now); err != nil {
			return err
		}
		carried = true
		return nil
	})
	if _, err := swapOutcome(err); err != nil {
		return false, err
	}
	return carried, nil
}
