package wire

import (
	"testing"
	"time"
)

func TestConfigDefaults(t *testing.T) {
	got, err := Config{}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if got.Addr != DefaultAddr || got.MaxConnections != DefaultMaxConnections || got.ReadTimeout != DefaultReadTimeout ||
		got.WriteTimeout != DefaultWriteTimeout || got.IdleTimeout != DefaultIdleTimeout ||
		got.ShutdownGrace != DefaultShutdownGrace || got.ServerVersion != DefaultServerVersion || got.Logger == nil {
		t.Errorf("got %+v, want every default", got)
	}
	if got.MaxUserConnections != DefaultMaxConnections/4 {
		t.Errorf("MaxUserConnections: got %d, want %d", got.MaxUserConnections, DefaultMaxConnections/4)
	}
	if got, _ := (Config{MaxConnections: 2}).withDefaults(); got.MaxUserConnections != 1 {
		t.Errorf("MaxUserConnections with 2 connections: got %d, want 1", got.MaxUserConnections)
	}
	// One address may take at most a quarter of the handshake slots by
	// default, never all of them (an independent review).
	for _, tc := range []struct{ conns, want int }{{100, 22}, {1000, 64}, {40, 9}, {3, 1}, {1, 1}} {
		if got, err := (Config{MaxConnections: tc.conns}).withDefaults(); err != nil || got.MaxHandshakesPerSource != tc.want {
			t.Errorf("MaxHandshakesPerSource with %d connections: got %d, %v, want %d", tc.conns, got.MaxHandshakesPerSource, err, tc.want)
		}
	}

	for _, cfg := range []Config{
		{MaxConnections: -1}, {ReadTimeout: -time.Second}, {WriteTimeout: -1},
		{IdleTimeout: -1}, {ShutdownGrace: -1}, {MaxUserConnections: -1},
		{MaxAllowedPacket: 64<<20 + 1, MaxBufferedBytes: 256 << 20},
		{MaxConnections: 40, MaxHandshakesPerSource: 36}, // 36 handshake slots: one address would take them all
	} {
		if _, err := NewServer(cfg, fakeAccounts{}, newFakeEngine()); err == nil {
			t.Errorf("NewServer(%+v): got no error, want one for the field out of range", cfg)
		}
	}
	if _, err := NewServer(Config{}, nil, newFakeEngine()); err == nil {
		t.Errorf("NewServer without Accounts: got no error, want one")
	}
}
