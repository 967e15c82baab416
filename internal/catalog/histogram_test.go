package catalog

import (
	"errors"
	"strings"
	"testing"
)

const histogramConfig = `
backend: {driver: sqlite, dsn: data.db}
users:
  - {name: alice, password_hash: "*0123456789ABCDEF0123456789ABCDEF01234567", epsilon: 5}
tables:
  - name: pums
    epsilon: 5
    columns:
      - {name: age, type: integer, lower: 0, upper: 100, histogram: {epsilon: 0.5}}
      - {name: income, type: real, lower: 0, upper: 500000, histogram: {epsilon: 1, bins: 1024, workload: prefix, mechanism: dawa}}
      - {name: hours, type: integer, lower: 0, upper: 9999, histogram: {epsilon: 1, workload: [[0, 40], [41, 9999]]}}
      - {name: state, type: text}
`

func TestHistogramDefaultsAndDomain(t *testing.T) {
	c, err := ParseConfig(strings.NewReader(histogramConfig))
	if err != nil {
		t.Fatal(err)
	}
	tbl, _ := c.Table("pums")
	for _, tc := range []struct {
		column              string
		lower, upper        float64
		bins                int
		workload, mechanism string
	}{
		// One bin per integer: [0, 101) in 101 bins.
		{"age", 0, 101, 101, WorkloadAllRanges, SynopsisAuto},
		{"income", 0, 500000, 1024, WorkloadPrefix, SynopsisDAWA},
		// More integers than the default bins: 4096 bins over [0, 10000).
		{"hours", 0, 10000, 4096, WorkloadRanges, SynopsisAuto},
	} {
		col, _ := tbl.Column(tc.column)
		lo, hi, bins, ok := col.HistogramDomain()
		if !ok || lo != tc.lower || hi != tc.upper || bins != tc.bins {
			t.Errorf("%s domain: got [%v, %v) in %d bins (ok %v), want [%v, %v) in %d", tc.column, lo, hi, bins, ok, tc.lower, tc.upper, tc.bins)
		}
		if h := col.Histogram; h.Workload.Kind != tc.workload || h.Mechanism != tc.mechanism {
			t.Errorf("%s: got workload %q mechanism %q, want %q %q", tc.column, h.Workload.Kind, h.Mechanism, tc.workload, tc.mechanism)
		}
	}
	hours, _ := tbl.Column("hours")
	if got := hours.Histogram.Workload.Ranges; len(got) != 2 || got[1] != [2]float64{41, 9999} {
		t.Errorf("explicit ranges: got %v, want [[0 40] [41 9999]]", got)
	}
	state, _ := tbl.Column("state")
	if _, _, _, ok := state.HistogramDomain(); ok {
		t.Errorf("text column: got a histogram domain, want none")
	}
}

func TestHistogramValidationNamesTheField(t *testing.T) {
	const f = "tables[0].columns[0].histogram"
	for _, tc := range []struct{ from, to, field string }{
		{"{epsilon: 0.5}", "{}", f + ".epsilon"},
		{"{epsilon: 0.5}", "{epsilon: 50}", f + ".epsilon"},
		{"{epsilon: 0.5}", "{epsilon: 0.5, bins: 0x200000}", f + ".bins"},
		{"{epsilon: 0.5}", "{epsilon: 0.5, bins: -3}", f + ".bins"},
		{"{epsilon: 0.5}", "{epsilon: 0.5, mechanism: mwem}", f + ".mechanism"},
		{"{epsilon: 0.5}", "{epsilon: 0.5, workload: clustered}", f + ".workload"},
		{"{epsilon: 0.5}", "{epsilon: 0.5, workload: [[50, 10]]}", f + ".workload[0]"},
		{"{epsilon: 0.5}", "{epsilon: 0.5, workload: [[0, 10], [90, 101]]}", f + ".workload[1]"},
		{"{name: state, type: text}", "{name: state, type: text, histogram: {epsilon: 1}}", "tables[0].columns[3].histogram"},
		// A synopsis answers every analyst: a table cap is required, and
		// must admit the synopsis's ε.
		{"    epsilon: 5\n", "", "tables[0].epsilon"},
		{"    epsilon: 5\n", "    epsilon: 0.75\n", "tables[0].epsilon"},
	} {
		cfg := strings.Replace(histogramConfig, tc.from, tc.to, 1)
		_, err := ParseConfig(strings.NewReader(cfg))
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != tc.field {
			t.Errorf("%s → %s: got %v, want an error naming %s", tc.from, tc.to, err, tc.field)
		}
	}
}
