package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSynopsisTooLargeConfigRefusedAtStart: a histogram whose synopsis
// cannot fit the budget ledger even over every row (2^19 bins of a real
// column) is refused at start-up, naming its bins field and the most bins
// that fit, and a configuration with that many starts. Before, it started
// and every statement needing the synopsis was refused (1235).
func TestSynopsisTooLargeConfigRefusedAtStart(t *testing.T) {
	dir := t.TempDir()
	data, ledger := filepath.Join(dir, "data.db"), filepath.Join(dir, "ledger.db")
	dir, config := synopsisDeployment(t, "sqlite", data, "sqlite", ledger)
	yaml, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	withBins := func(bins string) {
		t.Helper()
		if err := os.WriteFile(config, []byte(strings.Replace(string(yaml), "bins: 1000", "bins: "+bins, 1)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	withBins("524288")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, binary, "--config", config, "--listen", "127.0.0.1:0", "--metrics-listen", "off").CombinedOutput()
	most := regexp.MustCompile(`tables\[0\]\.columns\[1\]\.histogram\.bins: .*declare at most (\d+) bins`).FindSubmatch(out)
	if err == nil || most == nil {
		t.Fatalf("start with 2^19 bins: %v\n%s\nwant a refusal naming tables[0].columns[1].histogram.bins and the bins that fit", err, out)
	}
	withBins(string(most[1]))
	startProxy(t, dir, nil, "--config", config).stop(syscall.SIGTERM)
}
