package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestLargeDeltaWarnedAtStart: an analyst's δ budget above 1e-3 is valid
// (the proxy starts) but warned about at start, naming the field; bob's
// 1e-3, the demo's budget, is not named.
func TestLargeDeltaWarnedAtStart(t *testing.T) {
	dir, config := writeSharedConfig(t, demoData(t), "sqlite", filepath.Join(t.TempDir(), "ledger.db"),
		[]string{"name: alice, epsilon: 1, delta: 0.01", "name: bob, epsilon: 1, delta: 0.001"}, []string{"name: pums"})
	p := startProxy(t, dir, nil, "--config", config)
	defer p.stop(syscall.SIGTERM)
	logs := p.Logs()
	if !strings.Contains(logs, "level=WARN msg=\"delta above 0.001") || !strings.Contains(logs, "fields=\"users[0].delta = 0.01\"") {
		t.Errorf("no start warning naming alice's δ of 0.01, or one naming bob's 0.001:\n%s", logs)
	}
}
