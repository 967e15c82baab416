package budget

import (
	"context"
	"testing"
)

func TestOpenIsIdempotent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend, dsn string) {
		l := openLedger(t, b, dsn)
		setLimits(t, l, map[string]Cost{"user:alice": {Epsilon: 1}})
		reserve(t, l, Cost{Epsilon: 0.25}, "user:alice")
		again := openLedger(t, b, dsn)
		wantRemaining(t, again, "user:alice", Cost{Epsilon: 0.75})
	})
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend, dsn string) {
		ctx := context.Background()
		db := openDB(t, b, dsn)
		if _, err := Open(ctx, db, b.dialect); err != nil {
			t.Fatalf("Open: %v", err)
		}
		if _, err := db.ExecContext(ctx, b.dialect.rebind("UPDATE dpproxy_meta SET meta_value = ? WHERE meta_key = 'schema_version'"), schemaVersion+1); err != nil {
			t.Fatalf("UPDATE: %v", err)
		}
		if _, err := Open(ctx, db, b.dialect); err == nil {
			t.Errorf("Open of a version %d ledger: got nil, want an error", schemaVersion+1)
		}
	})
}

func TestParseDialect(t *testing.T) {
	tests := []struct {
		name    string
		want    Dialect
		wantErr bool
	}{
		{"sqlite", SQLite, false},
		{"postgres", Postgres, false},
		{"mysql", MySQL, false},
		{"oracle", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDialect(tt.name)
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("got %v, %v, want %v, error=%v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}
