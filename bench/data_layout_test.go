package bench

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestMissingDataNamesFileAndLayout: every loader of the -data directory
// fails on an empty directory with an error that names the missing file
// and the layout -data expects (it was os.Open's bare "no such file").
func TestMissingDataNamesFileAndLayout(t *testing.T) {
	dir := t.TempDir()
	loaders := map[string]func() error{
		filepath.Join(dir, "dpcomp-1d", "hepth.txt"): func() error { _, err := DPComp1D(dir, "hepth"); return err },
		filepath.Join(dir, "pums", "PUMS.csv"):       func() error { _, err := PUMS(dir, "age"); return err },
		filepath.Join(dir, "anchors", "google-dp-go.tsv"): func() error {
			_, err := ReadAnchors(filepath.Join(dir, "anchors", "google-dp-go.tsv"))
			return err
		},
	}
	for file, load := range loaders {
		err := load()
		if err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), DataLayout) {
			t.Errorf("%s: got %v, want an error naming it and the layout", file, err)
		}
	}
}
