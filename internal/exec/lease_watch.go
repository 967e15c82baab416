package exec

import (
	"bytes"
	"time"
)

// leaseWatch judges, by this process's own monotonic clock, whether a
// lease stored in the ledger by another proxy has been abandoned: the
// holder changes the stored value whenever it renews (or the value names
// a reservation that settles), so a value seen unchanged for longer than
// the lease, as measured here, belongs to a holder that stopped renewing.
// Proxies' wall clocks are never compared: a proxy whose clock runs an
// hour ahead neither takes a live holder's lease nor waits an hour for a
// dead one's. The price is that a waiter that starts watching late waits
// up to one lease from its first look.
type leaseWatch struct {
	value []byte
	since time.Time
	seen  bool
}

// expired records value as seen at now and reports whether the same value
// has been seen for longer than lease.
func (w *leaseWatch) expired(value []byte, now time.Time, lease time.Duration) bool {
	if !w.seen || !bytes.Equal(value, w.value) {
		w.value, w.since, w.seen = bytes.Clone(value), now, true
		return false
	}
	return now.Sub(w.since) > lease
}
