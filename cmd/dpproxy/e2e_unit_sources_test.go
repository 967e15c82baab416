package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOneRelationOneUnitAtStart: a configuration that reads one backend
// relation at row level (pums) and by a privacy unit (pums_units, each
// educ) is refused at start, naming the later table's privacy_unit and
// both tables (an independent review: it started, and statements on the
// unit table said "protects each educ" while the same rows were read row
// by row through the other). Two tables of the relation with one unit
// column and different max_rows_per_unit start.
func TestOneRelationOneUnitAtStart(t *testing.T) {
	data := demoData(t)
	_, config := writeSharedConfig(t, data, "sqlite", filepath.Join(t.TempDir(), "ledger.db"), []string{"name: alice, epsilon: 1"},
		[]string{"name: pums", "name: pums_units, source: pums, privacy_unit: educ, max_rows_per_unit: 2"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, binary, "--config", config, "--listen", "127.0.0.1:0", "--metrics-listen", "off").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "tables[1].privacy_unit") || !strings.Contains(string(out), "table pums_units protects each educ, but tables[0] (pums), which protects each row") {
		t.Errorf("start with pums at row level and by educ: %v\n%s\nwant a refusal naming tables[1].privacy_unit and both tables", err, out)
	}

	dir, config := writeSharedConfig(t, data, "sqlite", filepath.Join(t.TempDir(), "ledger.db"), []string{"name: alice, epsilon: 1"},
		[]string{"name: pums_educ, source: pums, privacy_unit: educ", "name: pums_educ3, source: pums, privacy_unit: educ, max_rows_per_unit: 3"})
	startProxy(t, dir, nil, "--config", config).stop(syscall.SIGTERM)
}
