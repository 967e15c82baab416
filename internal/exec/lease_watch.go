package exec

import (
	"bytes"
	"sync"
	"time"
)

// leaseWatch judges, by this process's own monotonic clock, whether a
// lease stored in the ledger by another proxy has been abandoned: the
// holder changes the stored value whenever it renews (or the value names
// a reservation that settles), so a value seen unchanged for longer than
// the lease, as measured here, belongs to a holder that stopped renewing.
// Proxies' wall clocks are never compared: a proxy whose clock runs an
// hour ahead neither takes a live holder's lease nor waits an hour for a
// dead one's. The price is that a process that starts watching late waits
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

// leaseWatches keeps one leaseWatch per ledger key for the life of the
// process: the statements that wait on a key one after another, each
// bounded by its statement timeout (60 s by default, shorter than a
// creation's lease), together see a dead holder's value unchanged for a
// whole lease, where a watch of each statement's own would never see one
// (an independent review of the first version). A key's watch is
// forgotten once the wait on it ends (the release appeared, or the turn
// was taken), so the watches are at most the keys waited on now or left
// by a statement that timed out. Safe for concurrent use.
type leaseWatches struct {
	mu      sync.Mutex
	watches map[string]*leaseWatch
}

// expired records value as the one seen under key at now and reports
// whether this process has seen the same value there for longer than
// lease.
func (w *leaseWatches) expired(key string, value []byte, now time.Time, lease time.Duration) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.watches == nil {
		w.watches = map[string]*leaseWatch{}
	}
	watch := w.watches[key]
	if watch == nil {
		watch = &leaseWatch{}
		w.watches[key] = watch
	}
	return watch.expired(value, now, lease)
}

// forget drops key's watch.
func (w *leaseWatches) forget(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.watches, key)
}
