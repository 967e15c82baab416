package catalog_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

// FuzzParseConfig feeds arbitrary YAML to the configuration loader: it must
// never panic (nor hang on aliases), and a configuration it accepts must be
// usable: every table and column it declares is found by name and every
// numeric column has bounds. Seeds: the example configurations. Run longer
// with
//
//	go test -run '^$' -fuzz FuzzParseConfig -fuzztime 10m ./internal/catalog
func FuzzParseConfig(f *testing.F) {
	paths, _ := filepath.Glob("../../examples/*.yaml")
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("backend: {driver: sqlite, dsn: x}\nusers: [{name: a, password_hash: '*0000000000000000000000000000000000000000', epsilon: 1}]\n" +
		"tables: [{name: t, columns: [{name: c, type: integer, lower: 0, upper: 9, histogram: {epsilon: 0.5}}]}]\n"))
	f.Add([]byte("backend: {driver: sqlite, dsn: x}\nusers: [{name: a, password_hash: '*0000000000000000000000000000000000000000', epsilon: 1}]\n" +
		"tables: [{name: t, columns: [{name: d, type: date, lower: 2015-01-01, upper: 2024-12-31}, {name: s, type: timestamp, lower: '2015-01-01 00:00:00', upper: 2015-01-02}]}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := catalog.ParseConfig(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, tb := range cfg.Tables {
			got, ok := cfg.Table(tb.Name)
			if !ok {
				t.Fatalf("table %q not found by its name", tb.Name)
			}
			for _, c := range got.Columns {
				if _, _, ok := c.Bounds(); !ok && c.Numeric() {
					t.Fatalf("numeric column %s.%s accepted without bounds", tb.Name, c.Name)
				}
				if lo, hi, ok := c.DateBounds(); c.Temporal() && (!ok || hi.Before(lo) || lo.Year() < 1000 || hi.Year() > 9999) {
					t.Fatalf("%s column %s.%s accepted with bounds [%v, %v] (%v)", c.Type, tb.Name, c.Name, lo, hi, ok)
				}
			}
		}
		for _, u := range cfg.Users {
			if _, ok := cfg.User(u.Name); !ok {
				t.Fatalf("user %q not found by name", u.Name)
			}
		}
	})
}
