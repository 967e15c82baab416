package budget

import (
	"bytes"
	"context"
	"testing"
)

func TestState(t *testing.T) {
	allBytes := make([]byte, 256)
	for i := range allBytes {
		allBytes[i] = byte(i)
	}
	large := bytes.Repeat([]byte("synopsis"), 1<<17) // 1 MiB
	tests := []struct {
		name  string
		key   string
		value []byte
		want  []byte
	}{
		{"every byte value", "dawa:pums:age", allBytes, allBytes},
		{"overwrite", "dawa:pums:age", []byte("second"), []byte("second")},
		{"empty", "mm:pums", []byte{}, []byte{}},
		{"nil stored as empty", "mm:other", nil, []byte{}},
		{"large", "big", large, large},
		{"case-sensitive key", "Big", []byte("upper"), []byte("upper")},
	}
	forEachLedger(t, func(t *testing.T, l *Ledger) {
		ctx := context.Background()
		if _, ok, err := l.GetState(ctx, "missing"); ok || err != nil {
			t.Errorf("GetState of a missing key: got found=%v, %v, want not found", ok, err)
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if err := l.PutState(ctx, tt.key, tt.value); err != nil {
					t.Fatalf("PutState: %v", err)
				}
				got, ok, err := l.GetState(ctx, tt.key)
				if err != nil || !ok {
					t.Fatalf("GetState: got found=%v, %v, want found", ok, err)
				}
				if got == nil || !bytes.Equal(got, tt.want) {
					t.Errorf("GetState: got %d bytes %.20q, want %d bytes %.20q", len(got), got, len(tt.want), tt.want)
				}
			})
		}
		if got, _, _ := l.GetState(ctx, "big"); !bytes.Equal(got, large) {
			t.Errorf("key big after writing Big: got %d bytes, want %d", len(got), len(large))
		}
	})
}
