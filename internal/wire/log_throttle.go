package wire

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// logThrottle logs one line per key and interval however many events
// arrive, with the number of events the line stands for, so that a flood of
// refused connections or failed logins cannot flood the log.
type logThrottle struct {
	log      *slog.Logger
	interval time.Duration

	mu   sync.Mutex
	keys map[string]*throttled
}

type throttled struct {
	last       time.Time
	suppressed int
}

func newLogThrottle(log *slog.Logger, interval time.Duration) *logThrottle {
	return &logThrottle{log: log, interval: interval, keys: make(map[string]*throttled)}
}

// warn logs msg with args unless a line for key was logged within the
// interval; the line carries "events", the count since the last line.
func (l *logThrottle) warn(key, msg string, args ...any) {
	l.emit(slog.LevelWarn, key, msg, args...)
}

// error is warn at level ERROR.
func (l *logThrottle) error(key, msg string, args ...any) {
	l.emit(slog.LevelError, key, msg, args...)
}

func (l *logThrottle) emit(level slog.Level, key, msg string, args ...any) {
	l.mu.Lock()
	now := time.Now()
	t, ok := l.keys[key]
	if !ok {
		if len(l.keys) >= 1024 { // bound the map under a flood of keys
			for k, v := range l.keys {
				if now.Sub(v.last) >= l.interval {
					delete(l.keys, k)
				}
			}
		}
		t = &throttled{}
		l.keys[key] = t
	}
	t.suppressed++
	if now.Sub(t.last) < l.interval {
		l.mu.Unlock()
		return
	}
	events := t.suppressed
	t.last, t.suppressed = now, 0
	l.mu.Unlock()
	l.log.Log(context.Background(), level, msg, append(args, "events", events)...)
}
