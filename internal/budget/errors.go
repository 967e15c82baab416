package budget

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dpproxy/dpproxy/internal/dperr"
)

var (
	// ErrUnknownAccount is in the chain of the error for an account that was
	// never created with SetLimit.
	ErrUnknownAccount = errors.New("budget: unknown account")
	// ErrSettled is in the chain of the error of a Commit or Cancel of a
	// reservation that is no longer pending (already committed or cancelled, or
	// deleted by Reset).
	ErrSettled = errors.New("budget: reservation already settled")
	// ErrDeltaExhausted is in the chain of the refusal of a cost whose δ
	// does not fit an account's remaining δ while its ε does.
	ErrDeltaExhausted = errors.New("budget: delta exhausted")
)

// unknownAccount returns the error for an account with no configured budget.
func unknownAccount(account string) error {
	return dperr.Wrap(dperr.Internal, fmt.Errorf("%w %q", ErrUnknownAccount, account),
		"no privacy budget is configured for %s", displayName(account))
}

// Shortfall is in the chain of every refusal for want of budget (a
// dperr.BudgetExhausted error of Reserve): the account that could not pay,
// its usage under the limit the reservation applied, and the cost refused.
type Shortfall struct {
	account Account
	usage   usage
	cost    Cost
	cause   error // ErrDeltaExhausted when only δ did not fit
}

func (s *Shortfall) Error() string {
	return fmt.Sprintf("budget: %s cannot pay %s", s.account.Name, s.cost)
}

func (s *Shortfall) Unwrap() error { return s.cause }

// Restate returns the refusal as it reads for a statement that had
// already reserved held on the refused account when the refused cost was
// asked for (its answers, or the synopses it claimed first), and that
// needs needs in all, made of parts (such as "epsilon=0.1, delta=0 for
// its answers and epsilon=0.5 to build the synopsis of age"): what
// remained of the account before the statement (held taken back as a
// Cancel takes it back), and all the statement needs. It does not change
// the ledger: the caller still cancels held.
func (s *Shortfall) Restate(held, needs Cost, parts string) error {
	return exhausted(s.account, s.usage.plus(Cost{Epsilon: -held.Epsilon, Delta: -held.Delta}), needs, parts)
}

// exhausted returns the client-visible refusal for an account that cannot
// pay, u being its usage under the limit the reservation applies, and
// parts, when not empty, what the cost is made of. Unless the account is
// marked Disclose it states only the cost: what remains of an account
// other analysts share (a table cap) would tell the refused analyst what
// the others spent. For a disclosed account, when only δ does not fit it
// says so, with the account's δ budget and what is left of it, and wraps
// ErrDeltaExhausted. Every refusal wraps a *Shortfall.
func exhausted(a Account, u usage, cost Cost, parts string) error {
	name := a.Label
	if name == "" {
		name = displayName(a.Name)
	}
	if parts != "" {
		parts = " (" + parts + ")"
	}
	short := &Shortfall{account: a, usage: u, cost: cost}
	if !a.Disclose {
		return dperr.Wrap(dperr.BudgetExhausted, short,
			"privacy budget exhausted for %s: it cannot pay the %s this query needs%s (what remains of it is not disclosed: other analysts spend it too)",
			name, cost, parts)
	}
	left := u.remaining()
	if fitsAmount(u.used.Epsilon, cost.Epsilon, u.limit.Epsilon) {
		short.cause = ErrDeltaExhausted
		return dperr.Wrap(dperr.BudgetExhausted, short,
			"privacy budget exhausted for %s: this query needs delta=%s%s, and the delta budget of %s is %s, of which %s remains (its epsilon would fit: it needs epsilon=%s of the %s remaining)",
			name, formatAmount(cost.Delta), parts, name, formatAmount(u.limit.Delta), formatAmount(left.Delta),
			formatAmount(cost.Epsilon), formatAmount(left.Epsilon))
	}
	return dperr.Wrap(dperr.BudgetExhausted, short,
		"privacy budget exhausted for %s: remaining %s; this query needs %s%s",
		name, left, cost, parts)
}

// settled returns the error of a Commit or Cancel that finds the reservation
// in state (empty when the reservation no longer exists).
func settled(id int64, verb string, state State) error {
	if state == "" {
		return dperr.Wrap(dperr.Internal, fmt.Errorf("%w: reservation %d not found", ErrSettled, id),
			"cannot %s privacy budget reservation %d: it no longer exists", verb, id)
	}
	return dperr.Wrap(dperr.Internal, fmt.Errorf("%w: reservation %d is %s", ErrSettled, id, state),
		"cannot %s privacy budget reservation %d: it is already %s", verb, id, state)
}

// ledgerError turns a database or context error into a client-safe error: the
// driver's text stays in the cause, for logs. Errors that are already an
// *dperr.Error pass through.
func ledgerError(err error) error {
	var e *dperr.Error
	switch {
	case err == nil || errors.As(err, &e):
		return err
	case errors.Is(err, context.DeadlineExceeded):
		return dperr.Wrap(dperr.Timeout, err, "statement timed out while updating the privacy budget ledger")
	case errors.Is(err, context.Canceled):
		return dperr.Wrap(dperr.Canceled, err, "statement canceled while updating the privacy budget ledger")
	}
	return dperr.Wrap(dperr.Internal, err, "privacy budget ledger failed")
}

// displayName renders "user:alice" as "user alice" for messages.
func displayName(account string) string {
	if kind, name, ok := strings.Cut(account, ":"); ok && kind != "" && name != "" {
		return kind + " " + name
	}
	return "account " + account
}

// invalid returns the error for a request the ledger refuses to store, such as
// a negative cost or an empty account name: a bug or a configuration error.
func invalid(format string, args ...any) error {
	return dperr.New(dperr.Internal, "budget: "+format, args...)
}
