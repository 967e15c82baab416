package wire

import (
	"sync"
	"time"
)

// Login backoff parameters: after loginFreeFailures failed logins, each
// further attempt from the same source address, or for the same user, waits
// loginBaseDelay·2^(failures-loginFreeFailures), at most loginMaxDelay,
// before its password is checked. Failures are forgotten after loginForget
// without one, or on a successful login (the source's, and the user's).
const (
	loginFreeFailures = 5
	loginBaseDelay    = 100 * time.Millisecond
	loginMaxDelay     = 5 * time.Second
	loginForget       = 15 * time.Minute
	loginMaxTracked   = 16384 // entries per map; beyond it new keys are not tracked
)

// loginLimiter slows password guessing. The delay applies before the
// password is checked, so a guesser cannot learn a guess's outcome before
// the delay (closing the connection early tells it nothing), and only to
// sources and users with recent failures:
//
//   - a source that failed gets the per-source delay;
//   - a user that failed gets the per-user delay, except from a source that
//     logged in successfully as that user within loginForget, so that an
//     attack on a user's name from elsewhere does not slow the user down.
//
// A valid login from a source and for a user without recent failures never
// waits. The concurrency of the waiting guesses is bounded by the handshake
// slots (MaxHandshakesPerSource per address, HandshakeTimeout each), so one
// address guesses at most about MaxHandshakesPerSource/loginMaxDelay times a
// second once it is backed off.
type loginLimiter struct {
	now func() time.Time

	mu       sync.Mutex
	sources  map[string]*failures
	users    map[string]*failures
	trusted  map[string]time.Time // user+"\x00"+source → last success
	failures uint64               // failed logins since start, for metrics
}

type failures struct {
	count int
	last  time.Time
}

func newLoginLimiter() *loginLimiter {
	return &loginLimiter{now: time.Now, sources: map[string]*failures{}, users: map[string]*failures{}, trusted: map[string]time.Time{}}
}

// delay is how long an attempt by user from source must wait before its
// password is checked.
func (l *loginLimiter) delay(source, user string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	d := backoff(l.sources[source], now)
	if t, ok := l.trusted[user+"\x00"+source]; !ok || now.Sub(t) >= loginForget {
		d = max(d, backoff(l.users[user], now))
	}
	return d
}

func backoff(f *failures, now time.Time) time.Duration {
	if f == nil || now.Sub(f.last) >= loginForget || f.count < loginFreeFailures {
		return 0
	}
	shift := min(f.count-loginFreeFailures, 16)
	return min(loginBaseDelay<<shift, loginMaxDelay)
}

// record notes the outcome of an attempt.
func (l *loginLimiter) record(source, user string, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if ok {
		delete(l.sources, source)
		delete(l.users, user)
		put(l.trusted, user+"\x00"+source, now, func(t time.Time) bool { return now.Sub(t) >= loginForget })
		return
	}
	l.failures++
	for _, m := range []struct {
		m   map[string]*failures
		key string
	}{{l.sources, source}, {l.users, user}} {
		f := m.m[m.key]
		if f == nil || now.Sub(f.last) >= loginForget {
			f = &failures{}
			if !put(m.m, m.key, f, func(f *failures) bool { return now.Sub(f.last) >= loginForget }) {
				continue
			}
		}
		f.count++
		f.last = now
	}
}

// put stores v under key unless m is full of entries that are not stale;
// it reports whether v was stored.
func put[V any](m map[string]V, key string, v V, stale func(V) bool) bool {
	if _, ok := m[key]; !ok && len(m) >= loginMaxTracked {
		for k, old := range m {
			if stale(old) {
				delete(m, k)
			}
		}
		if len(m) >= loginMaxTracked {
			return false
		}
	}
	m[key] = v
	return true
}

// failedLogins is the number of failed logins since start.
func (l *loginLimiter) failedLogins() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failures
}
