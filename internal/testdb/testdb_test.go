package testdb

import (
	"context"
	"runtime"
	"sync"
	"testing"
)

// recorder is a testing.TB that records how a helper ended the test instead
// of ending the real one.
type recorder struct {
	testing.TB
	mu       sync.Mutex
	skipped  bool
	failed   bool
	cleanups []func()
}

func (r *recorder) Helper() {}

func (r *recorder) Skipf(string, ...any) {
	r.mu.Lock()
	r.skipped = true
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *recorder) Fatalf(string, ...any) {
	r.mu.Lock()
	r.failed = true
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }

// run calls helper with the recorder in a goroutine of its own, as the
// testing package runs a test, then runs the registered cleanups.
func (r *recorder) run(helper func(testing.TB)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		helper(r)
	}()
	<-done
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

func TestUnsetSkipsAndUnreachableFails(t *testing.T) {
	tests := []struct {
		name        string
		env, value  string
		helper      func(testing.TB)
		wantSkipped bool
		wantFailed  bool
	}{
		{"postgres unset", PostgresEnv, "", func(t testing.TB) { Postgres(t) }, true, false},
		{"mysql unset", MySQLEnv, "", func(t testing.TB) { MySQL(t) }, true, false},
		{"postgres unreachable", PostgresEnv, "postgres://postgres@127.0.0.1:1/x?sslmode=disable&connect_timeout=2",
			func(t testing.TB) { Postgres(t) }, false, true},
		{"mysql unreachable", MySQLEnv, "root@tcp(127.0.0.1:1)/x?timeout=2s",
			func(t testing.TB) { MySQL(t) }, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(tt.env, tt.value)
			r := &recorder{TB: t}
			r.run(tt.helper)
			if r.skipped != tt.wantSkipped || r.failed != tt.wantFailed {
				t.Errorf("got skipped=%v failed=%v, want skipped=%v failed=%v",
					r.skipped, r.failed, tt.wantSkipped, tt.wantFailed)
			}
		})
	}
}

func TestWithSearchPath(t *testing.T) {
	tests := []struct {
		dsn, want string
	}{
		{"postgres://u@h:5432/db?sslmode=disable", "postgres://u@h:5432/db?search_path=s&sslmode=disable"},
		{"postgresql://u@h/db", "postgresql://u@h/db?search_path=s"},
		{"host=h user=u dbname=db", "host=h user=u dbname=db search_path=s"},
	}
	for _, tt := range tests {
		t.Run(tt.dsn, func(t *testing.T) {
			got, err := withSearchPath(tt.dsn, "s")
			if err != nil || got != tt.want {
				t.Errorf("got %v, %v, want %v", got, err, tt.want)
			}
		})
	}
}

// TestFreshDatabasesAreIsolated checks that each call gives an empty database
// of its own that works, on every server that is configured.
func TestFreshDatabasesAreIsolated(t *testing.T) {
	tests := []struct {
		name string
		open func(testing.TB) string
		drv  string
	}{
		{"sqlite", SQLiteDSN, "sqlite"},
		{"postgres", PostgresDSN, "postgres"},
		{"mysql", MySQLDSN, "mysql"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			first, second := Open(t, tt.drv, tt.open(t)), Open(t, tt.drv, tt.open(t))
			if _, err := first.ExecContext(ctx, "CREATE TABLE isolated (x INTEGER)"); err != nil {
				t.Fatalf("CREATE TABLE: %v", err)
			}
			if _, err := second.ExecContext(ctx, "CREATE TABLE isolated (x INTEGER)"); err != nil {
				t.Errorf("CREATE TABLE in the second database: got %v, want nil", err)
			}
		})
	}
}
