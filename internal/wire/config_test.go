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

	for _, cfg := range []Config{
		{MaxConnections: -1}, {ReadTimeout: -time.Second}, {WriteTimeout: -1},
		{IdleTimeout: -1}, {ShutdownGrace: -1},
	} {
		if _, err := NewServer(cfg, fakeAccounts{}, newFakeEngine()); err == nil {
			t.Errorf("NewServer(%+v): got no error, want one for the negative field", cfg)
		}
	}
	if _, err := NewServer(Config{}, nil, newFakeEngine()); err == nil {
		t.Errorf("NewServer without Accounts: got no error, want one")
	}
}
