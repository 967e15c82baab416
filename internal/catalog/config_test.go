package catalog

import (
	"errors"
	"strings"
	"testing"
)

const validConfig = `
backend: {driver: postgres, dsn: "postgres://u@h/db?password=s3cret"}
users:
  - {name: alice, password_hash: "*0123456789ABCDEF0123456789ABCDEF01234567", epsilon: 5, delta: 1.0e-6}
tables:
  - name: pums
    epsilon: 20
    columns:
      - {name: age, type: integer, lower: 0, upper: 100}
      - {name: state, type: text}
`

func TestParseConfigDefaultsAndEnv(t *testing.T) {
	t.Setenv("DPPROXY_TEST_SECRET", "s3cret")
	c, err := ParseConfig(strings.NewReader(strings.Replace(validConfig, "s3cret", "${DPPROXY_TEST_SECRET}", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if c.Backend.DSN != "postgres://u@h/db?password=s3cret" {
		t.Errorf("DSN: got %q", c.Backend.DSN)
	}
	if c.Listen != DefaultListen || c.Ledger.Driver != DriverSQLite || c.Privacy.DefaultEpsilon != DefaultEpsilon {
		t.Errorf("defaults not applied: %+v", c)
	}
	tbl, ok := c.Table("PUMS")
	if !ok || tbl.Source != "pums" {
		t.Fatalf("table lookup: %v %+v", ok, tbl)
	}
	if col, ok := tbl.Column("Age"); !ok || !col.Numeric() {
		t.Errorf("column lookup: %v %+v", ok, col)
	}
}

// TestMetricsListenOff: metrics.listen "off", as --metrics-listen takes
// it, switches the endpoint off (it used to reach net.Listen and fail the
// start with "missing port in address").
func TestMetricsListenOff(t *testing.T) {
	for _, v := range []string{"off", "\"off\"", "OFF"} {
		c, err := ParseConfig(strings.NewReader(strings.Replace(validConfig, "users:", "metrics: {listen: "+v+"}\nusers:", 1)))
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if c.Metrics.Listen != "" {
			t.Errorf("metrics.listen %s: got %q, want off (empty)", v, c.Metrics.Listen)
		}
	}
}

// TestUnsetEnvironmentVariablesAreNamed: a ${VAR} that the environment
// does not set is refused with the field and every such variable named, in
// a DSN (which used to expand to "" and fail as "is required") as in the
// metrics token; a variable set to "" is set.
func TestUnsetEnvironmentVariablesAreNamed(t *testing.T) {
	t.Setenv("DPPROXY_TEST_EMPTY", "")
	for _, tc := range []struct{ from, to, field, names string }{
		{"postgres://u@h/db?password=s3cret", "${DPPROXY_TEST_UNSET_A}", "backend.dsn", "${DPPROXY_TEST_UNSET_A}"},
		{"password=s3cret", "password=${DPPROXY_TEST_UNSET_A}&user=${DPPROXY_TEST_UNSET_B}${DPPROXY_TEST_UNSET_A}", "backend.dsn", "${DPPROXY_TEST_UNSET_A}, ${DPPROXY_TEST_UNSET_B},"},
		{"users:", "ledger: {driver: sqlite, dsn: \"${DPPROXY_TEST_UNSET_B}\"}\nusers:", "ledger.dsn", "${DPPROXY_TEST_UNSET_B},"},
		{"users:", "metrics: {listen: \"127.0.0.1:0\", token: \"${DPPROXY_TEST_UNSET_C}\"}\nusers:", "metrics.token", "${DPPROXY_TEST_UNSET_C},"},
	} {
		_, err := ParseConfig(strings.NewReader(strings.Replace(validConfig, tc.from, tc.to, 1)))
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != tc.field || !strings.Contains(err.Error(), tc.names) || !strings.Contains(err.Error(), "does not set") {
			t.Errorf("%s: got %v, want an error naming %s and %s", tc.to, err, tc.field, tc.names)
		}
	}
	if _, err := ParseConfig(strings.NewReader(strings.Replace(validConfig, "s3cret", "${DPPROXY_TEST_EMPTY}", 1))); err != nil {
		t.Errorf("a variable set to the empty string: %v", err)
	}
}

// TestReleaseEpsilonAboveMechanismsIsRefused raises privacy.max_epsilon
// to 200 and declares a synopsis of ε = 150, one release above the 100 every
// mechanism accepts: refused at start-up, not at its first range count.
func TestReleaseEpsilonAboveMechanismsIsRefused(t *testing.T) {
	cfg := strings.NewReplacer("users:", "privacy: {max_epsilon: 200}\nusers:",
		"upper: 100}", "upper: 100, histogram: {epsilon: 150}}").Replace(validConfig)
	_, err := ParseConfig(strings.NewReader(cfg))
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "tables[0].columns[0].histogram.epsilon" {
		t.Errorf("got %v, want an error naming tables[0].columns[0].histogram.epsilon", err)
	}
	// max_epsilon itself may exceed 100: a statement splits it over releases.
	if _, err := ParseConfig(strings.NewReader(strings.Replace(validConfig, "users:", "privacy: {max_epsilon: 200}\nusers:", 1))); err != nil {
		t.Errorf("max_epsilon 200: %v", err)
	}
}

// TestValidationNamesTheField changes one thing in a valid configuration
// and checks the error names the field.
func TestValidationNamesTheField(t *testing.T) {
	for _, tc := range []struct{ from, to, field string }{
		{"driver: postgres", "driver: oracle", "backend.driver"},
		{"epsilon: 5", "epsilon: -1", "users[0].epsilon"},
		{`"*0123456789ABCDEF0123456789ABCDEF01234567"`, `"secret"`, "users[0].password_hash"},
		{"upper: 100", "upper: -5", "tables[0].columns[0]"},
		{"{name: state, type: text}", "{name: state, type: blob}", "tables[0].columns[1].type"},
		{"{name: state, type: text}", "{name: age, type: text}", "tables[0].columns[1].name"},
		{"name: pums", "name: 'pu;ms'", "tables[0].name"},
		{"epsilon: 5,", "epsilon: 5, auth_plugin: sha256_password,", "users[0].auth_plugin"},
		{"users:", "tls: {cert: c.pem}\nusers:", "tls"},
		{"users:", "tls: {require: true}\nusers:", "tls.require"},
		{"users:", "metrics: {listen: \"127.0.0.1:0\", tls: true}\nusers:", "metrics.tls"},
		{"users:", "metrics: {listen: \"127.0.0.1:0\", token: short}\nusers:", "metrics.token"},
		{"users:", "metrics: {listen: \"127.0.0.1:0\", token: \"${DPPROXY_TEST_UNSET_TOKEN_VARIABLE}\"}\nusers:", "metrics.token"},
		{"users:", "max_user_connections: -1\nusers:", "max_user_connections"},
		{"users:", "max_connections: 10\nmax_user_connections: 11\nusers:", "max_user_connections"},
		// The proxy buffers packets whole: not MySQL's 1 GiB (an independent review).
		{"users:", "max_allowed_packet: 134217728\nmax_buffered_bytes: 268435456\nusers:", "max_allowed_packet"},
		{"users:", "max_connections: 40\nmax_handshakes_per_source: 36\nusers:", "max_handshakes_per_source"},
		// One user's share of max_buffered_bytes must leave room for another's packet.
		{"users:", "max_allowed_packet: 4194304\nmax_buffered_bytes: 6291456\nusers:", "max_buffered_bytes"},
		{"epsilon: 5,", "epsilon: 5, max_user_connections: -2,", "users[0].max_user_connections"},
		{"epsilon: 5,", "epsilon: 5, max_user_connections: 257,", "users[0].max_user_connections"},
		// Values no mechanism can use (issue 10 #6): refused at start-up
		// rather than charged and failed at the first statement.
		{"upper: 100", "upper: 1.0e300", "tables[0].columns[0]"},
		{"lower: 0", "lower: -1.0e121", "tables[0].columns[0]"},
		{"lower: 0", "lower: 1.0e-200", "tables[0].columns[0]"},
		{"upper: 100}", "upper: 100, histogram: {epsilon: 1.0e-6}}", "tables[0].columns[0].histogram.epsilon"},
		{"users:", "privacy: {default_epsilon: 1.0e-20}\nusers:", "privacy.default_epsilon"},
		{"driver: postgres,", "driver: postgres, isolation: serializable,", "backend.isolation"},
		{"users:", "ledger: {driver: sqlite, dsn: l.db, isolation: none}\nusers:", "ledger.isolation"},
		{"driver: postgres,", "driver: postgres, time_zone: \"UTC'; DROP TABLE t; --\",", "backend.time_zone"},
		{"users:", "ledger: {driver: sqlite, dsn: l.db, time_zone: UTC}\nusers:", "ledger.time_zone"},
		{"users:", "privacy: {repeat_window: -1s}\nusers:", "privacy.repeat_window"},
		{"driver: postgres,", "driver: postgres, max_open_connections: -1,", "backend.max_open_connections"},
		{"driver: postgres,", "driver: postgres, max_open_connections: 11,", "backend.max_open_connections"}, // above max_connections 10 below
		{"driver: postgres,", "driver: postgres, max_open_connections: 8, max_user_connections: 9,", "backend.max_user_connections"},
		{"driver: postgres,", "driver: postgres, max_user_connections: -1,", "backend.max_user_connections"},
		{"users:", "ledger: {driver: sqlite, dsn: l.db, max_open_connections: 4}\nusers:", "ledger.max_open_connections"},
		{"users:", "ledger: {driver: sqlite, dsn: l.db, max_user_connections: 4}\nusers:", "ledger.max_user_connections"},
		// User names the ledger would not tell apart from others, or not
		// store (an independent review: MariaDB's padded comparison made
		// "alice " alice's account).
		{"name: alice,", "name: 'alice ',", "users[0].name"},
		{"name: alice,", "name: ' alice',", "users[0].name"},
		{"name: alice,", "name: \"alice\\u00a0\",", "users[0].name"},
		{"name: alice,", "name: \"ali\\tce\",", "users[0].name"},
		{"name: alice,", "name: \"alice\\x00\",", "users[0].name"},
		{"name: alice,", "name: " + strings.Repeat("a", MaxUserNameLen+1) + ",", "users[0].name"},
		{"name: pums", "name: " + strings.Repeat("p", MaxIdentifierLen+1), "tables[0]"},
		{"name: pums", "name: pums\n    source: s." + strings.Repeat("p", MaxIdentifierLen+1), "tables[0]"},
		{"    epsilon: 20\n", "    delta: 1.0e-6\n", "tables[0].delta"}, // a δ cap without an ε cap caps nothing
		{"epsilon: 20", "epsilon: 20\n    partitions: [pums_a, \"b;\"]", "tables[0].partitions[1]"},
		{"epsilon: 20", "epsilon: 20\n    partitions: [pums_a, PUMS_A]", "tables[0].partitions[1]"},
		{"epsilon: 20", "epsilon: 20\n    partitions: [pums]", "tables[0].partitions[0]"},
		{"epsilon: 20", "epsilon: 20\n    partitions: [pums_a]\n    privacy_unit: person_id", "tables[0].partitions"},
		// A second name for a capped table's rows would not be charged to
		// the cap (an independent review).
		{"      - {name: state, type: text}\n", "      - {name: state, type: text}\n  - {name: pums2, source: PUMS, columns: [{name: age, type: integer, lower: 0, upper: 100}]}\n", "tables[0].epsilon"},
		{"      - {name: state, type: text}\n", "      - {name: state, type: text}\n  - {name: pums2, source: public.pums, columns: [{name: age, type: integer, lower: 0, upper: 100}]}\n", "tables[0].epsilon"},
	} {
		cfg := strings.Replace(validConfig, tc.from, tc.to, 1)
		if strings.Contains(tc.to, "max_open_connections: 11") {
			cfg = strings.Replace(cfg, "users:", "max_connections: 10\nusers:", 1)
		}
		_, err := ParseConfig(strings.NewReader(cfg))
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != tc.field {
			t.Errorf("%s → %s: got %v, want an error naming %s", tc.from, tc.to, err, tc.field)
		}
	}
}

// TestPartitions reads a table's partitions, and refuses them on a
// backend other than PostgreSQL.
func TestPartitions(t *testing.T) {
	cfg := strings.Replace(validConfig, "epsilon: 20", "epsilon: 20\n    partitions: [pums_2023, archive.pums_2024]", 1)
	c, err := ParseConfig(strings.NewReader(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Tables[0].Partitions; len(got) != 2 || got[1] != "archive.pums_2024" {
		t.Errorf("partitions: got %q", got)
	}
	mysql := strings.Replace(cfg, "driver: postgres,", "driver: mysql,", 1)
	_, err = ParseConfig(strings.NewReader(mysql))
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "tables[0].partitions" {
		t.Errorf("mysql: got %v, want an error naming tables[0].partitions", err)
	}
}

// TestMaxUserConnections: one user may hold a quarter of max_connections
// by default (before, no limit: one user could take every slot), and the
// setting and its per-user override are read.
func TestMaxUserConnections(t *testing.T) {
	c, err := ParseConfig(strings.NewReader(validConfig))
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxUserConnections != DefaultMaxConnections/4 || c.Users[0].MaxUserConnections != 0 {
		t.Errorf("defaults: max_user_connections %d, users[0] %d; want %d, 0", c.MaxUserConnections, c.Users[0].MaxUserConnections, DefaultMaxConnections/4)
	}
	small := strings.Replace(validConfig, "users:", "max_connections: 3\nusers:", 1)
	if c, err := ParseConfig(strings.NewReader(small)); err != nil || c.MaxUserConnections != 1 {
		t.Errorf("max_connections 3: max_user_connections %d, %v; want 1", c.MaxUserConnections, err)
	}
	// max_handshakes_per_source: a quarter of the handshake slots, at most 64.
	if want := (DefaultMaxConnections - DefaultMaxConnections/10) / 4; c.MaxHandshakesPerSource != want {
		t.Errorf("default max_handshakes_per_source %d, want %d", c.MaxHandshakesPerSource, want)
	}
	forty := strings.Replace(validConfig, "users:", "max_connections: 40\nusers:", 1)
	if c, err := ParseConfig(strings.NewReader(forty)); err != nil || c.MaxHandshakesPerSource != 9 {
		t.Errorf("max_connections 40: max_handshakes_per_source %d, %v; want 9", c.MaxHandshakesPerSource, err)
	}
	set := strings.NewReplacer("users:", "max_user_connections: 10\nusers:", "epsilon: 5,", "epsilon: 5, max_user_connections: 2,").Replace(validConfig)
	if c, err := ParseConfig(strings.NewReader(set)); err != nil || c.MaxUserConnections != 10 || c.Users[0].MaxUserConnections != 2 {
		t.Errorf("set: %v, %v", c, err)
	}
}

// TestBackendConnections: the backend's connections are bounded by
// default (before, one per statement without a bound, past the server's
// own limit) to min(max_connections, 32), and one analyst's to half
// of them (at least 1); both settings are read.
func TestBackendConnections(t *testing.T) {
	for _, tc := range []struct {
		extra, backend string
		open, perUser  int
	}{
		{"", "", DefaultMaxOpenConnections, DefaultMaxOpenConnections / 2},
		{"max_connections: 10\n", "", 10, 5},
		{"max_connections: 1\n", "", 1, 1},
		{"", "max_open_connections: 12, ", 12, 6},
		{"", "max_open_connections: 12, max_user_connections: 12, ", 12, 12},
	} {
		cfg := strings.NewReplacer("users:", tc.extra+"users:", "driver: postgres, ", "driver: postgres, "+tc.backend).Replace(validConfig)
		c, err := ParseConfig(strings.NewReader(cfg))
		if err != nil {
			t.Errorf("%q %q: %v", tc.extra, tc.backend, err)
			continue
		}
		if c.Backend.MaxOpenConnections != tc.open || c.Backend.MaxUserConnections != tc.perUser {
			t.Errorf("%q %q: max_open_connections %d, max_user_connections %d; want %d, %d", tc.extra, tc.backend,
				c.Backend.MaxOpenConnections, c.Backend.MaxUserConnections, tc.open, tc.perUser)
		}
	}
}

func TestUnknownFieldsAreErrors(t *testing.T) {
	if _, err := ParseConfig(strings.NewReader(validConfig + "listn: 1.2.3.4:5\n")); err == nil {
		t.Error("a misspelt field was accepted")
	}
}

// TestCappedRelationsAreReadOnce: a capped table's backend relations,
// partitions included, may not be read by an uncapped configured table,
// whose statements would be charged to no cap; uncapped tables may share
// one, capped tables too (their caps add up), and tables in two schemas
// do not clash.
func TestCappedRelationsAreReadOnce(t *testing.T) {
	const col = ageColumn
	checkTablesConfigs(t, []tablesConfig{
		{"  - {name: a, source: p, " + col + "}\n  - {name: b, source: p, " + col + "}\n", ""},
		{"  - {name: a, source: s1.p, epsilon: 1, " + col + "}\n  - {name: b, source: s2.p, " + col + "}\n", ""},
		{"  - {name: a, source: p, epsilon: 1, " + col + "}\n  - {name: b, source: P, epsilon: 2, " + col + "}\n", ""},
		{"  - {name: a, source: p, epsilon: 1, partitions: [p_1, p_2], " + col + "}\n  - {name: b, source: P_2, " + col + "}\n", "tables[0].epsilon"},
		{"  - {name: a, source: p, " + col + "}\n  - {name: b, source: x.p, epsilon: 1, " + col + "}\n", "tables[1].epsilon"},
	})
}

// ageColumn is the column list of the tables tablesConfig declares.
const ageColumn = "columns: [{name: age, type: integer, lower: 0, upper: 100}]"

// tablesConfig is a configuration's list of tables and the field its
// refusal names ("" when it is valid).
type tablesConfig struct {
	tables string
	field  string
}

// withTables is a valid configuration on PostgreSQL with tables.
func withTables(tables string) string {
	return `
backend: {driver: postgres, dsn: "postgres://u@h/db"}
users:
  - {name: alice, password_hash: "*0123456789ABCDEF0123456789ABCDEF01234567", epsilon: 5}
tables:
` + tables
}

// checkTablesConfigs parses each configuration and checks it is accepted
// or refused naming its field.
func checkTablesConfigs(t *testing.T, cases []tablesConfig) {
	t.Helper()
	for _, tc := range cases {
		_, err := ParseConfig(strings.NewReader(withTables(tc.tables)))
		var ve *ValidationError
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%s: %v", tc.tables, err)
		case tc.field != "" && (!errors.As(err, &ve) || ve.Field != tc.field):
			t.Errorf("%s: got %v, want an error naming %s", tc.tables, err, tc.field)
		}
	}
}

// TestLargeDeltas: users' δ budgets and privacy.max_delta above 1e-3 are
// listed for the start-up warning; 1e-3 itself (the demo's budget) is not.
func TestLargeDeltas(t *testing.T) {
	c, err := ParseConfig(strings.NewReader(strings.Replace(validConfig, "delta: 1.0e-6}", "delta: 1.0e-3}\n  - {name: bob, password_hash: \"*0123456789ABCDEF0123456789ABCDEF01234567\", epsilon: 5, delta: 0.01}", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.LargeDeltas(); len(got) != 1 || got[0] != "users[1].delta = 0.01" {
		t.Errorf("LargeDeltas = %q, want only users[1].delta = 0.01", got)
	}
	c, err = ParseConfig(strings.NewReader(strings.Replace(validConfig, "users:", "privacy: {max_delta: 0.002}\nusers:", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.LargeDeltas(); len(got) != 1 || got[0] != "privacy.max_delta = 0.002" {
		t.Errorf("LargeDeltas = %q, want only privacy.max_delta = 0.002", got)
	}
}
