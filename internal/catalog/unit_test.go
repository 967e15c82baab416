package catalog

import (
	"errors"
	"strings"
	"testing"
)

// TestPrivacyUnitConfig: a table names its unit column with contribution
// bounds (defaults 1), and every misuse is refused naming the field.
func TestPrivacyUnitConfig(t *testing.T) {
	cfg := strings.Replace(validConfig, "epsilon: 20", "epsilon: 20\n    privacy_unit: person_id\n    max_rows_per_unit: 5", 1)
	c, err := ParseConfig(strings.NewReader(cfg))
	if err != nil {
		t.Fatal(err)
	}
	tbl, _ := c.Table("pums")
	if !tbl.HasPrivacyUnit() || tbl.MaxRowsPerUnit != 5 || tbl.MaxGroupsPerUnit != 1 || tbl.UnitGroupShare() != 1 {
		t.Errorf("unit table: %+v", tbl)
	}
	if got := tbl.ProtectedUnit(); got != "each person_id" {
		t.Errorf("ProtectedUnit = %q", got)
	}
	plain, _ := ParseConfig(strings.NewReader(validConfig))
	if tbl, _ := plain.Table("pums"); tbl.HasPrivacyUnit() || tbl.ProtectedUnit() != "each row" || tbl.UnitGroupShare() != 1 {
		t.Errorf("row-level table: %+v", tbl)
	}
	for _, tc := range []struct{ from, to, field string }{
		{"epsilon: 20", "epsilon: 20\n    max_rows_per_unit: 3", "tables[0].privacy_unit"},
		{"epsilon: 20", "epsilon: 20\n    privacy_unit: 'a b'", "tables[0].privacy_unit"},
		{"epsilon: 20", "epsilon: 20\n    privacy_unit: AGE", "tables[0].privacy_unit"},
		{"epsilon: 20", "epsilon: 20\n    privacy_unit: pid\n    max_rows_per_unit: -1", "tables[0].max_rows_per_unit"},
		{"epsilon: 20", "epsilon: 20\n    privacy_unit: pid\n    max_rows_per_unit: 2000000", "tables[0].max_rows_per_unit"},
		{"epsilon: 20", "epsilon: 20\n    privacy_unit: pid\n    max_groups_per_unit: -2", "tables[0].max_groups_per_unit"},
		{"{name: state, type: text}", "{name: state, type: text, source: pid}\n    privacy_unit: pid", "tables[0].privacy_unit"},
	} {
		cfg := strings.Replace(validConfig, tc.from, tc.to, 1)
		_, err := ParseConfig(strings.NewReader(cfg))
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != tc.field {
			t.Errorf("%q: got %v, want an error naming %s", tc.to, err, tc.field)
		}
	}
	// A histogram synopsis on a unit table is built at ε/k per row, which
	// must stay at least 2^-15 (k = 5 here).
	withHistogram := strings.Replace(cfg, "upper: 100}", "upper: 100, histogram: {epsilon: 1}}", 1)
	if c, err := ParseConfig(strings.NewReader(withHistogram)); err != nil {
		t.Errorf("histogram on a unit table: %v", err)
	} else if tbl, _ := c.Table("pums"); tbl.Columns[0].Histogram == nil {
		t.Errorf("histogram on a unit table: not declared")
	}
	tiny := strings.Replace(cfg, "upper: 100}", "upper: 100, histogram: {epsilon: 0.0001}}", 1)
	var ve *ValidationError
	if _, err := ParseConfig(strings.NewReader(tiny)); !errors.As(err, &ve) || ve.Field != "tables[0].columns[0].histogram.epsilon" {
		t.Errorf("histogram at ε/k = 2·10^-5 < 2^-15 on a unit table: got %v", err)
	}
	// So is an interactive instance.
	interactive := func(eps string) string {
		return strings.Replace(cfg, "max_rows_per_unit: 5", "max_rows_per_unit: 5\n    interactive:\n      columns: [{name: age, edges: [0, 18, 65, 100]}]\n      epsilon: "+eps+"\n      alpha: 0.05", 1)
	}
	if c, err := ParseConfig(strings.NewReader(interactive("1"))); err != nil {
		t.Errorf("interactive domain on a unit table: %v", err)
	} else if tbl, _ := c.Table("pums"); tbl.Interactive == nil {
		t.Errorf("interactive domain on a unit table: not declared")
	}
	if _, err := ParseConfig(strings.NewReader(interactive("0.0001"))); !errors.As(err, &ve) || ve.Field != "tables[0].interactive.epsilon" {
		t.Errorf("interactive at ε/k = 2·10^-5 < 2^-15 on a unit table: got %v", err)
	}
}

// TestOneRelationOneUnit: two configured tables that read one backend
// relation (source or partition; names compared as for table caps) must
// declare the same privacy_unit, or the per-unit guarantee of one would
// not hold for what the other reveals (an independent review: people at
// row level beside people_units protecting each pid started without a
// word). The same unit column with other per-unit bounds is accepted.
func TestOneRelationOneUnit(t *testing.T) {
	const col = ageColumn
	checkTablesConfigs(t, []tablesConfig{
		{"  - {name: people, source: people, " + col + "}\n  - {name: people_units, source: people, privacy_unit: pid, max_rows_per_unit: 2, " + col + "}\n", "tables[1].privacy_unit"},
		{"  - {name: people_units, source: people, privacy_unit: pid, " + col + "}\n  - {name: people, " + col + "}\n", "tables[1].privacy_unit"},
		{"  - {name: a, source: public.People, privacy_unit: pid, " + col + "}\n  - {name: b, source: PEOPLE, " + col + "}\n", "tables[1].privacy_unit"},
		{"  - {name: a, source: people, privacy_unit: pid, " + col + "}\n  - {name: b, source: people, privacy_unit: household, " + col + "}\n", "tables[1].privacy_unit"},
		{"  - {name: a, source: people, privacy_unit: pid, " + col + "}\n  - {name: b, source: people, privacy_unit: PID, " + col + "}\n", "tables[1].privacy_unit"},
		{"  - {name: c, source: other, " + col + "}\n  - {name: a, source: v, partitions: [v_1, v_2], " + col + "}\n  - {name: b, source: V_2, privacy_unit: pid, " + col + "}\n", "tables[2].privacy_unit"},
		// Capped both, so that the caps' check passes: one account, still two units.
		{"  - {name: a, source: people, epsilon: 1, " + col + "}\n  - {name: b, source: people, epsilon: 1, privacy_unit: pid, " + col + "}\n", "tables[1].privacy_unit"},
		{"  - {name: a, source: people, privacy_unit: pid, max_rows_per_unit: 1, " + col + "}\n  - {name: b, source: people, privacy_unit: pid, max_rows_per_unit: 5, max_groups_per_unit: 3, " + col + "}\n", ""},
		{"  - {name: a, source: s1.people, privacy_unit: pid, " + col + "}\n  - {name: b, source: s2.people, " + col + "}\n", ""},
		{"  - {name: a, source: people, " + col + "}\n  - {name: b, source: people, " + col + "}\n", ""},
	})
	_, err := ParseConfig(strings.NewReader(withTables("  - {name: people, " + col + "}\n  - {name: people_units, source: people, privacy_unit: pid, " + col + "}\n")))
	if err == nil || !strings.Contains(err.Error(), "table people_units protects each pid, but tables[0] (people), which protects each row, also reads its backend relation people") {
		t.Errorf("the refusal does not name both tables and their units: %v", err)
	}
}
