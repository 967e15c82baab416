// Package catalog holds dpproxy's configuration: where it listens, the backend
// and ledger databases, the analysts with their privacy budgets, and the
// tables and columns the proxy may answer questions about, with the public
// bounds the mechanisms rely on.
//
// A Config is read from YAML (ParseConfig), completed with defaults and
// validated once at start-up; every validation error names the offending
// field. After validation a Config is read-only and safe for concurrent use.
package catalog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Config is the whole configuration file, dpproxy.yaml.
type Config struct {
	// Listen is the TCP address of the MySQL endpoint.
	Listen string `yaml:"listen"`
	// MaxConnections caps concurrent client connections.
	MaxConnections int `yaml:"max_connections"`
	// ReservedSessions of MaxConnections are kept for logged-in sessions:
	// connections still in the handshake cannot take them.
	ReservedSessions int `yaml:"reserved_sessions"`
	// MaxUserConnections caps the logged-in connections of one user (MySQL's
	// max_user_connections); users[].max_user_connections overrides it.
	// Default max_connections/4 (at least 1), so one user cannot take every
	// slot.
	MaxUserConnections int `yaml:"max_user_connections"`
	// MaxHandshakesPerSource caps the connections from one IP address that
	// have not logged in yet. Default a quarter of the handshake slots
	// (max_connections - reserved_sessions), at least 1 and at most 64; it
	// may not exceed the handshake slots - 1 (1 when there is one slot), so
	// one address cannot take every slot.
	MaxHandshakesPerSource int `yaml:"max_handshakes_per_source"`
	// MaxAllowedPacket caps a client packet (bytes) after login, as MySQL's
	// max_allowed_packet; before login the cap is 16 KiB. At most 64 MiB:
	// the proxy buffers each packet whole, so it does not offer MySQL's 1 GiB.
	MaxAllowedPacket int64 `yaml:"max_allowed_packet"`
	// MaxBufferedBytes caps the client packets being received on all
	// connections together (bytes); one user's connections may take a
	// quarter of it, or one max_allowed_packet if that is more. At least
	// 2 × max_allowed_packet.
	MaxBufferedBytes int64 `yaml:"max_buffered_bytes"`
	// Timeouts of client connections.
	Timeouts Timeouts `yaml:"timeouts"`
	// TLS configures encrypted client connections.
	TLS TLS `yaml:"tls"`
	// Metrics configures the /metrics and /healthz endpoint.
	Metrics Metrics `yaml:"metrics"`
	// Backend is the database that holds the private data.
	Backend Database `yaml:"backend"`
	// Ledger is the database that holds spent budget; it may be the backend.
	Ledger Database `yaml:"ledger"`
	// Privacy holds per-statement defaults and caps.
	Privacy Privacy `yaml:"privacy"`
	// Users are the analysts allowed to connect.
	Users []User `yaml:"users"`
	// Tables are the only tables the proxy answers questions about.
	Tables []Table `yaml:"tables"`
}

// TLS configures encrypted client connections. Without Cert and Key,
// clients cannot use TLS (the demo generates a self-signed certificate).
type TLS struct {
	// Cert and Key are PEM files: the server's certificate chain (leaf
	// first) and its private key.
	Cert string `yaml:"cert"`
	Key  string `yaml:"key"`
	// Require refuses logins that did not upgrade to TLS (MySQL's error
	// 3159), before any password is checked. It needs Cert and Key.
	Require bool `yaml:"require"`
	// RSAKey is a PEM file with an RSA private key that decrypts
	// caching_sha2_password passwords sent without TLS (clients fetch its
	// public half, or are configured with it). If empty and a user logs in
	// with caching_sha2_password, a key is generated at each start.
	RSAKey string `yaml:"rsa_key"`
}

// Metrics configures the Prometheus endpoint.
type Metrics struct {
	// Listen is the TCP address of /metrics and /healthz. Empty or "off"
	// (any case, as --metrics-listen takes it): off, and ParseConfig
	// leaves it empty.
	Listen string `yaml:"listen"`
	// Token, if set, is the bearer token /metrics requires
	// ("Authorization: Bearer <token>", compared in constant time; any
	// other request gets 401). /healthz, which says only "ok" or
	// "unhealthy", stays open to load balancers. ${VAR} is replaced from
	// the environment; at least MinMetricsTokenLength bytes, and a token
	// naming an unset variable is refused rather than read as no token.
	Token string `yaml:"token"`
	// TLS serves both paths over HTTPS with the certificate and key of
	// tls.cert and tls.key (which it needs), so that the token does not
	// travel in clear.
	TLS bool `yaml:"tls"`
}

// MinMetricsTokenLength is the shortest metrics.token accepted.
const MinMetricsTokenLength = 16

// Timeouts of a client connection; zero means the default.
type Timeouts struct {
	Read     Duration `yaml:"read"`
	Write    Duration `yaml:"write"`
	Idle     Duration `yaml:"idle"`
	Shutdown Duration `yaml:"shutdown"`
	// Handshake bounds the whole login, from connect to the OK packet.
	Handshake Duration `yaml:"handshake"`
	// Statement bounds one private statement from its reservation to its
	// answer; the backend is told too (see backend.Snapshot).
	Statement Duration `yaml:"statement"`
}

// Duration is a time.Duration written as "30s" in YAML.
type Duration struct{ time.Duration }

// UnmarshalYAML parses a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// Database names a database/sql driver and its DSN.
type Database struct {
	// Driver is one of sqlite, postgres, mysql.
	Driver string `yaml:"driver"`
	// DSN is the driver's data source name; ${VAR} is replaced from the environment.
	DSN string `yaml:"dsn"`
	// Isolation is how the backend's reads of one statement are isolated
	// (backend only): "repeatable_read" (the default) runs them in one
	// read-only REPEATABLE READ transaction, one snapshot of the data;
	// "none" runs them in a transaction at the server's default level
	// without asking for one (distributed engines such as Vitess refuse
	// SET TRANSACTION ISOLATION LEVEL). With "none", a statement whose
	// mechanism reads twice (a count, then a window it shapes) may read
	// two states of the data if it changes in between, so its privacy
	// analysis, which assumes one dataset, holds only while the table is
	// not written; a single-read statement is unaffected. Aggregates
	// whose conditions no row can share (a pivot) compose in parallel
	// only on a snapshot: with "none" they split ε.
	Isolation string `yaml:"isolation"`
	// TimeZone is the time zone of the backend's sessions (backend only),
	// in which a column with a time zone (PostgreSQL timestamptz,
	// MySQL/MariaDB TIMESTAMP) is read as a wall-clock date and time:
	// empty for UTC (the default), "server" for the server's own default,
	// else a zone PostgreSQL knows ("Europe/Paris"; on MySQL/MariaDB names
	// need the server's time zone tables) or an offset east of UTC as
	// MySQL counts ("+01:00", also on PostgreSQL: backend.OpenDB). A DSN
	// that sets the zone itself keeps it.
	TimeZone string `yaml:"time_zone"`
	// MaxOpenConnections caps the backend connections the private
	// statements hold at once (backend only): a statement finding none
	// free waits for one within its statement timeout, nothing sent to
	// the backend meanwhile. At most max_connections. Default
	// min(max_connections, DefaultMaxOpenConnections). The proxy also
	// keeps one control connection (KILL QUERY, /healthz) on PostgreSQL
	// and MySQL, so the backend sees at most this + 1 from one proxy.
	MaxOpenConnections int `yaml:"max_open_connections"`
	// MaxUserConnections caps the backend connections one analyst's
	// statements hold at once (backend only), so that one analyst cannot
	// take them all; the analyst's next statement waits as above. At
	// most max_open_connections. Default max_open_connections/2 (at
	// least 1): the other half stays for the other analysts, while a
	// single analyst's many clients (32 in bench/cmd/load) need not
	// queue behind a few connections for statements that hold theirs
	// only for a few round trips.
	MaxUserConnections int `yaml:"max_user_connections"`
}

// timeZonePattern is the spelling of a configured time zone: a name or
// an offset, nothing a session setting could be broken out of.
var timeZonePattern = regexp.MustCompile(`^[A-Za-z0-9/_+:.-]{1,64}$`)

// The backend isolation settings.
const (
	IsolationRepeatableRead = "repeatable_read"
	IsolationNone           = "none"
)

// The supported drivers.
const (
	DriverSQLite   = "sqlite"
	DriverPostgres = "postgres"
	DriverMySQL    = "mysql"
)

// Privacy holds the per-statement privacy parameters.
type Privacy struct {
	// DefaultEpsilon is the ε a statement spends when the session has not set @dp_epsilon.
	DefaultEpsilon float64 `yaml:"default_epsilon"`
	// MaxEpsilon caps the ε of one statement.
	MaxEpsilon float64 `yaml:"max_epsilon"`
	// DefaultDelta is the δ a statement may spend when it needs δ > 0 and @dp_delta is unset.
	DefaultDelta float64 `yaml:"default_delta"`
	// MaxDelta caps the δ of one statement.
	MaxDelta float64 `yaml:"max_delta"`
	// RepeatWindow, when positive, gives a statement whose typed plan is
	// identical to one answered less than RepeatWindow ago (through any
	// proxy sharing the ledger; by the same analyst, or by any analyst on a
	// table with a table cap) the answer released then, at no cost, so that
	// repeating a statement neither averages its noise away nor spends
	// budget. It assumes the table does not change meaningfully
	// within the window. 0 (the default) answers every statement afresh.
	RepeatWindow Duration `yaml:"repeat_window"`
}

// User is an analyst.
type User struct {
	Name string `yaml:"name"`
	// PasswordHash is the mysql_native_password hash as MySQL prints it:
	// "*" followed by 40 hex digits of SHA1(SHA1(password)).
	// `dpproxy hash-password` prints it.
	PasswordHash string `yaml:"password_hash"`
	// AuthPlugin is how the user's client logs in: mysql_native_password
	// (the default) or caching_sha2_password, MySQL 8's default, which
	// clients that refuse native passwords need. Both check the password
	// against PasswordHash: caching_sha2_password receives the password
	// itself over TLS or RSA-encrypted and compares SHA1(SHA1(password)).
	AuthPlugin string `yaml:"auth_plugin"`
	// Epsilon and Delta are the user's total budget.
	Epsilon float64 `yaml:"epsilon"`
	Delta   float64 `yaml:"delta"`
	// MaxUserConnections, if > 0, caps the user's logged-in connections in
	// place of the top-level max_user_connections.
	MaxUserConnections int `yaml:"max_user_connections"`
}

// Table is a table analysts may query.
type Table struct {
	// Name is the name analysts use.
	Name string `yaml:"name"`
	// Source is the table's name in the backend (schema-qualified if needed); default Name.
	Source string `yaml:"source"`
	// Epsilon, if > 0, caps what all analysts together may spend on the table,
	// and Delta then caps their δ (0: no mechanism needing δ may run on it).
	// Required (> 0) when a column declares a histogram or the table an
	// interactive domain: those answer every analyst once built, so only
	// this cap bounds what the analysts together see of the table.
	Epsilon float64 `yaml:"epsilon"`
	Delta   float64 `yaml:"delta"`
	// Columns are the only columns analysts may use.
	Columns []Column `yaml:"columns"`
	// Partitions, if set, are the backend relations that together hold
	// exactly Source's rows, each row in one of them (a PostgreSQL
	// partitioned table's partitions, postgres_fdw foreign tables
	// included): aggregate fetches are computed per partition and added up
	// (partitions.go). PostgreSQL backend only; not with PrivacyUnit.
	Partitions []string `yaml:"partitions"`
	// Interactive, if set, declares an interactive domain over some of the
	// columns for AND/OR/NOT counting queries (interactive.go).
	Interactive *Interactive `yaml:"interactive"`
	// PrivacyUnit, if set, is the backend column that identifies the
	// person a row belongs to, and the table's privacy unit becomes that
	// person: neighbouring tables differ by all the rows of one unit, and
	// every release is bounded to MaxRowsPerUnit rows per unit (unit.go).
	// Empty: each row is its own unit (row-level privacy).
	PrivacyUnit string `yaml:"privacy_unit"`
	// MaxRowsPerUnit is how many rows of one unit one aggregate (in one
	// group) may read; default 1 when PrivacyUnit is set.
	MaxRowsPerUnit int64 `yaml:"max_rows_per_unit"`
	// MaxGroupsPerUnit is how many groups of a GROUP BY one unit may
	// contribute to; default 1 when PrivacyUnit is set.
	MaxGroupsPerUnit int64 `yaml:"max_groups_per_unit"`
}

// Column is a declared column of a table.
type Column struct {
	Name string `yaml:"name"`
	// Source is the column's name in the backend; default Name.
	Source string `yaml:"source"`
	// Type is integer, real, text, date or timestamp (dates.go).
	Type ColumnType `yaml:"type"`
	// Lower and Upper are the public bounds of a numeric, date or timestamp
	// column. They are required for those columns: they are public
	// knowledge, never read from the data. A date column's bounds are day
	// numbers and a timestamp column's are seconds, both counted from
	// 1970-01-01 00:00:00 (dates.go); the file writes them as dates.
	Lower *float64 `yaml:"-"`
	Upper *float64 `yaml:"-"`
	// RawLower and RawUpper are the bounds as the file writes them (a
	// number, or a date or timestamp), read into Lower and Upper by the
	// column's type when the configuration is parsed (readBounds), and
	// nil after.
	RawLower *RawBound `yaml:"lower"`
	RawUpper *RawBound `yaml:"upper"`
	// Histogram, if set, declares a histogram domain on a numeric column:
	// its range counts are answered from synopses (see Histogram).
	Histogram *Histogram `yaml:"histogram"`
	// Values, if set, declares the column's domain: every value it may
	// take (numbers for a numeric column, within its bounds). The domain is
	// public: GROUP BY the column answers one group per value, empty ones
	// included, and SELECT DISTINCT col lists the values without reading
	// data (domain.go). Rows with another value are in no group, and so
	// are rows with NULL unless the list declares null (NullValue): then
	// NULL is a group of its own (an unreadable value counts as NULL).
	Values DomainValues `yaml:"values"`
	// PartitionSelection, on an integer or text column without declared
	// values, lets GROUP BY the column release the keys that pass DP
	// partition selection (planner.PartitionSelection): the data owner's
	// consent that frequent values of the column may appear in answers.
	PartitionSelection bool `yaml:"partition_selection"`
}

// ColumnType is the type of a declared column.
type ColumnType string

// The column types.
const (
	Integer ColumnType = "integer"
	Real    ColumnType = "real"
	Text    ColumnType = "text"
)

// MinBoundMagnitude and MaxBoundMagnitude limit the public bounds of a
// numeric column: each bound is 0 or has a magnitude in [2^-400, 2^400].
// Within them no arithmetic the database or a mechanism does on clamped
// values can overflow or underflow: a square is at most 2^800 and a sum of
// 2^63 squares at most 2^863 (float64 reaches 2^1024); a nonzero square is at
// least 2^-800 (normal float64 reaches 2^-1022); Laplace scales stay inside
// the samplers' [2^-960, 2^960] for every ε in [2^-50, 100]; PTR's widths stay
// below its 2^900. Backend fetches read a value of magnitude below
// MinBoundMagnitude as 0 (sqlrewrite.Render), which is why no nonzero bound
// may be that small.
const (
	MinBoundMagnitude = 0x1p-400
	MaxBoundMagnitude = 0x1p400
)

// UsableBound reports whether b may be a public bound: finite, and 0 or of
// magnitude in [MinBoundMagnitude, MaxBoundMagnitude].
func UsableBound(b float64) bool {
	a := math.Abs(b)
	return b == 0 || a >= MinBoundMagnitude && a <= MaxBoundMagnitude
}

// Numeric reports whether the column holds numbers with public bounds.
func (c *Column) Numeric() bool { return c.Type == Integer || c.Type == Real }

// Bounds returns the column's public bounds; ok is false for text columns.
func (c *Column) Bounds() (lower, upper float64, ok bool) {
	if !c.Numeric() || c.Lower == nil || c.Upper == nil {
		return 0, 0, false
	}
	return *c.Lower, *c.Upper, true
}

// ValidationError names the configuration field that is wrong.
type ValidationError struct {
	Field string
	Err   error
}

func (e *ValidationError) Error() string { return fmt.Sprintf("config: %s: %v", e.Field, e.Err) }
func (e *ValidationError) Unwrap() error { return e.Err }

func invalid(field string, format string, args ...any) error {
	return &ValidationError{Field: field, Err: fmt.Errorf(format, args...)}
}

// Load reads, expands, completes and validates the configuration file at path.
func Load(path string) (*Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseConfig(bytes.NewReader(raw))
}

// ParseConfig decodes YAML (unknown fields are errors), applies defaults and validates.
func ParseConfig(r io.Reader) (*Config, error) {
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true)
	var c Config
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("config: %w", err)
	}
	if err := c.readBounds(); err != nil {
		return nil, err
	}
	token := c.Metrics.Token
	for _, f := range []struct {
		name  string
		value *string
	}{{"backend.dsn", &c.Backend.DSN}, {"ledger.dsn", &c.Ledger.DSN}, {"metrics.token", &c.Metrics.Token}} {
		expanded, unset := expandEnv(*f.value)
		if len(unset) > 0 {
			return nil, invalid(f.name, "uses ${%s}, which dpproxy's environment does not set", strings.Join(unset, "}, ${"))
		}
		*f.value = expanded
	}
	if token != "" && c.Metrics.Token == "" {
		return nil, invalid("metrics.token", "is empty once its environment variables are read")
	}
	c.applyDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expandEnv replaces ${VAR} (only that form, so DSNs may contain '$') from
// the environment. unset names, once each in order of first use, the
// variables s references that the environment does not set (a variable set
// to "" is set); the result holds "" in their place.
func expandEnv(s string) (expanded string, unset []string) {
	expanded = envRef.ReplaceAllStringFunc(s, func(m string) string {
		name := m[2 : len(m)-1]
		v, ok := os.LookupEnv(name)
		if !ok && !slices.Contains(unset, name) {
			unset = append(unset, name)
		}
		return v
	})
	return expanded, unset
}

// Defaults for fields left empty.
const (
	DefaultListen                 = "127.0.0.1:3307"
	DefaultMaxConnections         = 256
	DefaultMaxHandshakesPerSource = 64 // the largest default: a quarter of the handshake slots, at most this
	DefaultMaxAllowedPacket       = 4 << 20
	DefaultMaxBufferedBytes       = 256 << 20
	maxMaxAllowedPacket           = 64 << 20 // as internal/wire's
	DefaultEpsilon                = 0.1
	DefaultMaxEpsilon             = 10
	DefaultDelta                  = 1e-7
	DefaultMaxDelta               = 1e-4
)

// DefaultMaxOpenConnections bounds backend.max_open_connections' default:
// below PostgreSQL's (100) and MariaDB's (151) default connection limits,
// with room for the ledger, a second proxy and the administrators; more
// concurrent scans than the server has cores only queue inside it.
const DefaultMaxOpenConnections = 32

func (c *Config) applyDefaults() {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if strings.EqualFold(strings.TrimSpace(c.Metrics.Listen), "off") {
		c.Metrics.Listen = ""
	}
	if c.MaxConnections == 0 {
		c.MaxConnections = DefaultMaxConnections
	}
	setDuration(&c.Timeouts.Read, 30*time.Second)
	setDuration(&c.Timeouts.Write, 30*time.Second)
	setDuration(&c.Timeouts.Idle, 8*time.Hour)
	setDuration(&c.Timeouts.Shutdown, 10*time.Second)
	setDuration(&c.Timeouts.Handshake, 10*time.Second)
	setDuration(&c.Timeouts.Statement, 60*time.Second)
	if c.ReservedSessions == 0 {
		c.ReservedSessions = c.MaxConnections / 10
	}
	if c.MaxUserConnections == 0 {
		c.MaxUserConnections = max(c.MaxConnections/4, 1)
	}
	if c.MaxHandshakesPerSource == 0 {
		c.MaxHandshakesPerSource = min(DefaultMaxHandshakesPerSource, max((c.MaxConnections-c.ReservedSessions)/4, 1))
	}
	if c.MaxAllowedPacket == 0 {
		c.MaxAllowedPacket = DefaultMaxAllowedPacket
	}
	if c.MaxBufferedBytes == 0 {
		c.MaxBufferedBytes = DefaultMaxBufferedBytes
	}
	if c.Backend.Isolation == "" {
		c.Backend.Isolation = IsolationRepeatableRead
	}
	if c.Backend.MaxOpenConnections == 0 {
		c.Backend.MaxOpenConnections = min(c.MaxConnections, DefaultMaxOpenConnections)
	}
	if c.Backend.MaxUserConnections == 0 {
		c.Backend.MaxUserConnections = max(c.Backend.MaxOpenConnections/2, 1)
	}
	if c.Ledger.Driver == "" && c.Ledger.DSN == "" {
		c.Ledger = Database{Driver: DriverSQLite, DSN: "dpproxy-ledger.db"}
	}
	if c.Privacy.DefaultEpsilon == 0 {
		c.Privacy.DefaultEpsilon = DefaultEpsilon
	}
	if c.Privacy.MaxEpsilon == 0 {
		c.Privacy.MaxEpsilon = DefaultMaxEpsilon
	}
	if c.Privacy.DefaultDelta == 0 {
		c.Privacy.DefaultDelta = DefaultDelta
	}
	if c.Privacy.MaxDelta == 0 {
		c.Privacy.MaxDelta = DefaultMaxDelta
	}
	for i := range c.Tables {
		t := &c.Tables[i]
		if t.Source == "" {
			t.Source = t.Name
		}
		for j := range t.Columns {
			if t.Columns[j].Source == "" {
				t.Columns[j].Source = t.Columns[j].Name
			}
			if h := t.Columns[j].Histogram; h != nil {
				h.applyDefaults(&t.Columns[j])
			}
		}
		if t.Interactive != nil {
			t.Interactive.applyDefaults()
		}
		t.applyUnitDefaults()
	}
}

func setDuration(d *Duration, def time.Duration) {
	if d.Duration == 0 {
		d.Duration = def
	}
}

// MaxIdentifierLen bounds a table's name and each part of its source, in
// bytes (MySQL's identifier length; PostgreSQL's is 63): ledger account
// names and state keys built from them stay within the ledger's 255 bytes.
const MaxIdentifierLen = 64

// MaxUserNameLen bounds a user name, in bytes: its ledger account,
// "user:" and the name, must fit the ledger's 255-byte names.
const MaxUserNameLen = 250

// checkUserName refuses a user name that is empty, too long for the
// ledger, not UTF-8, or that has control characters or leading or trailing
// white space. The ledger compares names byte for byte, but a name that
// differs from another only by invisible characters would be a second
// budget that an administrator reading the configuration takes for the
// first (and older MySQL/MariaDB ledgers compared "alice " as "alice").
func checkUserName(f, name string) error {
	switch {
	case name == "":
		return invalid(f, "is required")
	case len(name) > MaxUserNameLen:
		return invalid(f, "is longer than %d bytes: %.20q…", MaxUserNameLen, name)
	case !utf8.ValidString(name):
		return invalid(f, "%q is not valid UTF-8", name)
	case strings.ContainsFunc(name, unicode.IsControl):
		return invalid(f, "%q contains a control character", name)
	case strings.TrimFunc(name, unicode.IsSpace) != name:
		return invalid(f, "%q begins or ends with white space", name)
	}
	return nil
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
var sourceName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$`)

// The authentication plugins of User.AuthPlugin.
const (
	AuthNativePassword = "mysql_native_password"
	AuthCachingSHA2    = "caching_sha2_password"
)

var nativeHash = regexp.MustCompile(`^\*[0-9A-Fa-f]{40}$`)

// Validate checks the whole configuration; the error names the first bad field.
func (c *Config) Validate() error {
	if c.MaxConnections < 1 {
		return invalid("max_connections", "must be at least 1, got %d", c.MaxConnections)
	}
	if c.ReservedSessions < 0 || c.ReservedSessions >= c.MaxConnections {
		return invalid("reserved_sessions", "must be in [0, max_connections), got %d", c.ReservedSessions)
	}
	if c.MaxUserConnections < 1 || c.MaxUserConnections > c.MaxConnections {
		return invalid("max_user_connections", "must be in [1, max_connections (%d)], got %d", c.MaxConnections, c.MaxUserConnections)
	}
	if slots := c.MaxConnections - c.ReservedSessions; c.MaxHandshakesPerSource < 1 || c.MaxHandshakesPerSource > max(slots-1, 1) {
		return invalid("max_handshakes_per_source", "must be in [1, %d] (below the %d handshake slots, max_connections - reserved_sessions, so one address cannot take them all), got %d",
			max(slots-1, 1), slots, c.MaxHandshakesPerSource)
	}
	if c.MaxAllowedPacket < 1024 || c.MaxAllowedPacket > maxMaxAllowedPacket {
		return invalid("max_allowed_packet", "must be in [1024, %d] bytes, got %d", maxMaxAllowedPacket, c.MaxAllowedPacket)
	}
	if c.MaxBufferedBytes < 2*c.MaxAllowedPacket {
		return invalid("max_buffered_bytes", "must be at least 2 × max_allowed_packet (%d), so that one user's share leaves room for others, got %d", 2*c.MaxAllowedPacket, c.MaxBufferedBytes)
	}
	for _, db := range []struct {
		field string
		db    Database
	}{{"backend", c.Backend}, {"ledger", c.Ledger}} {
		switch db.db.Driver {
		case DriverSQLite, DriverPostgres, DriverMySQL:
		default:
			return invalid(db.field+".driver", "must be sqlite, postgres or mysql, got %q", db.db.Driver)
		}
		if db.db.DSN == "" {
			return invalid(db.field+".dsn", "is required")
		}
	}
	switch c.Backend.Isolation {
	case IsolationRepeatableRead, IsolationNone:
	default:
		return invalid("backend.isolation", "must be %s or %s, got %q", IsolationRepeatableRead, IsolationNone, c.Backend.Isolation)
	}
	if c.Ledger.Isolation != "" {
		return invalid("ledger.isolation", "is a backend setting; the ledger locks what it reads")
	}
	if c.Ledger.TimeZone != "" {
		return invalid("ledger.time_zone", "is a backend setting; the ledger stores no dates")
	}
	if b := c.Backend; b.MaxOpenConnections < 1 || b.MaxOpenConnections > c.MaxConnections {
		return invalid("backend.max_open_connections", "must be in [1, max_connections (%d)], got %d", c.MaxConnections, b.MaxOpenConnections)
	}
	if b := c.Backend; b.MaxUserConnections < 1 || b.MaxUserConnections > b.MaxOpenConnections {
		return invalid("backend.max_user_connections", "must be in [1, backend.max_open_connections (%d)], got %d", b.MaxOpenConnections, b.MaxUserConnections)
	}
	if c.Ledger.MaxOpenConnections != 0 {
		return invalid("ledger.max_open_connections", "is a backend setting")
	}
	if c.Ledger.MaxUserConnections != 0 {
		return invalid("ledger.max_user_connections", "is a backend setting")
	}
	if z := c.Backend.TimeZone; z != "" && !timeZonePattern.MatchString(z) {
		return invalid("backend.time_zone", "must be a time zone name or offset (UTC, Europe/Paris, +01:00) or server, got %q", z)
	}
	p := c.Privacy
	if err := checkStatementEpsilon("privacy.default_epsilon", p.DefaultEpsilon); err != nil {
		return err
	}
	if err := checkStatementEpsilon("privacy.max_epsilon", p.MaxEpsilon); err != nil {
		return err
	}
	if p.DefaultEpsilon > p.MaxEpsilon {
		return invalid("privacy.default_epsilon", "%g exceeds privacy.max_epsilon %g", p.DefaultEpsilon, p.MaxEpsilon)
	}
	if err := checkStatementDelta("privacy.default_delta", p.DefaultDelta); err != nil {
		return err
	}
	if err := checkStatementDelta("privacy.max_delta", p.MaxDelta); err != nil {
		return err
	}
	if p.RepeatWindow.Duration < 0 {
		return invalid("privacy.repeat_window", "must not be negative, got %v", p.RepeatWindow.Duration)
	}
	if p.DefaultDelta > p.MaxDelta {
		return invalid("privacy.default_delta", "%g exceeds privacy.max_delta %g", p.DefaultDelta, p.MaxDelta)
	}
	if (c.TLS.Cert == "") != (c.TLS.Key == "") {
		return invalid("tls", "cert and key go together")
	}
	if c.TLS.Require && c.TLS.Cert == "" {
		return invalid("tls.require", "needs tls.cert and tls.key")
	}
	if c.Metrics.TLS && c.TLS.Cert == "" {
		return invalid("metrics.tls", "needs tls.cert and tls.key")
	}
	if n := len(c.Metrics.Token); n > 0 && n < MinMetricsTokenLength {
		return invalid("metrics.token", "must be at least %d bytes, got %d", MinMetricsTokenLength, n)
	}
	if len(c.Users) == 0 {
		return invalid("users", "at least one user is required")
	}
	seenUsers := map[string]bool{}
	for i, u := range c.Users {
		f := fmt.Sprintf("users[%d]", i)
		if err := checkUserName(f+".name", u.Name); err != nil {
			return err
		}
		if seenUsers[u.Name] {
			return invalid(f+".name", "duplicate user %q", u.Name)
		}
		seenUsers[u.Name] = true
		if !nativeHash.MatchString(u.PasswordHash) {
			return invalid(f+".password_hash", "must be \"*\" and 40 hex digits (run `dpproxy hash-password`)")
		}
		switch u.AuthPlugin {
		case "", AuthNativePassword, AuthCachingSHA2:
		default:
			return invalid(f+".auth_plugin", "must be %s or %s", AuthNativePassword, AuthCachingSHA2)
		}
		if u.MaxUserConnections < 0 || u.MaxUserConnections > c.MaxConnections {
			return invalid(f+".max_user_connections", "must be in [0, max_connections (%d)] (0: the top-level max_user_connections), got %d", c.MaxConnections, u.MaxUserConnections)
		}
		if err := checkPositive(f+".epsilon", u.Epsilon); err != nil {
			return err
		}
		if err := checkBudgetDelta(f+".delta", u.Delta); err != nil {
			return err
		}
	}
	if len(c.Tables) == 0 {
		return invalid("tables", "at least one table is required")
	}
	seenTables := map[string]bool{}
	for i := range c.Tables {
		if err := c.Tables[i].validate(fmt.Sprintf("tables[%d]", i), seenTables); err != nil {
			return err
		}
		for j := range c.Tables[i].Columns {
			col := &c.Tables[i].Columns[j]
			if col.Histogram != nil {
				if err := col.Histogram.validate(fmt.Sprintf("tables[%d].columns[%d].histogram", i, j), col, c.Privacy); err != nil {
					return err
				}
			}
		}
		if in := c.Tables[i].Interactive; in != nil {
			if err := in.validate(fmt.Sprintf("tables[%d].interactive", i), &c.Tables[i], c.Privacy); err != nil {
				return err
			}
		}
		if err := c.Tables[i].validateSharedCap(fmt.Sprintf("tables[%d]", i)); err != nil {
			return err
		}
		if err := c.Tables[i].validatePartitions(fmt.Sprintf("tables[%d].partitions", i), c.Backend.Driver); err != nil {
			return err
		}
	}
	if err := c.validateCappedSources(); err != nil {
		return err
	}
	return c.validateUnitSources()
}

// validateCappedSources refuses a table with a cap whose backend relations
// (its source and partitions) a configured table without a cap also
// reads. A cap is an account of the table's source (TableAccount), which
// every statement on a table of that source is charged to, but which
// bounds only the statements on a table that declares the cap: an
// uncapped second name for the same rows would let the analysts together
// spend without bound (an independent review). Several capped tables may
// read one relation (a histogram on one, an interactive domain on
// another): with one source they share its account, each statement held
// to its own table's cap; a partition of one that is the source of
// another is another account, so together they cap it at the sum of
// their caps. Relations are compared
// case-insensitively, and a name without a schema matches the same name
// in any schema. A view over a capped table is not seen here: the README
// says to cap the view too.
func (c *Config) validateCappedSources() error {
	for i := range c.Tables {
		capped := &c.Tables[i]
		if capped.Epsilon <= 0 {
			continue
		}
		for j := range c.Tables {
			if i == j || c.Tables[j].Epsilon > 0 {
				continue
			}
			for _, a := range capped.relations() {
				for _, b := range c.Tables[j].relations() {
					if sameRelation(a, b) {
						return invalid(fmt.Sprintf("tables[%d].epsilon", i), "table %s is capped, but tables[%d] (%s), without a cap, also reads its backend relation %s, and statements on it would be charged to no cap; give it a cap too, or declare the rows once", capped.Name, j, c.Tables[j].Name, a)
					}
				}
			}
		}
	}
	return nil
}

// relations are the backend relations a table reads: its source and its
// partitions.
func (t *Table) relations() []string {
	return append([]string{t.Source}, t.Partitions...)
}

// sameRelation reports whether two configured backend relations (name or
// schema.name) may name the same relation.
func sameRelation(a, b string) bool {
	a, b = strings.ToLower(a), strings.ToLower(b)
	_, nameA, qualifiedA := strings.Cut(a, ".")
	_, nameB, qualifiedB := strings.Cut(b, ".")
	switch {
	case a == b:
		return true
	case qualifiedA && !qualifiedB:
		return nameA == b
	case qualifiedB && !qualifiedA:
		return nameB == a
	}
	return false
}

// validateSharedCap requires a table cap when the table declares a
// histogram domain or an interactive domain. A synopsis or an interactive
// instance, once built, answers every analyst: its ε is paid once, by the
// analyst whose statement builds it, so the per-analyst budgets do not
// bound what any analyst learns of the table through it; only the table's
// cap (Epsilon, charged by every statement on the table, the build
// included) does. The cap must also admit the build itself.
func (t *Table) validateSharedCap(f string) error {
	var shared []string
	var largest float64
	for j, col := range t.Columns {
		if col.Histogram != nil {
			shared = append(shared, fmt.Sprintf("%s.columns[%d].histogram", f, j))
			largest = max(largest, col.Histogram.Epsilon)
		}
	}
	if t.Interactive != nil {
		shared = append(shared, f+".interactive")
		largest = max(largest, t.Interactive.Epsilon)
	}
	if len(shared) == 0 {
		return nil
	}
	if t.Epsilon == 0 {
		return invalid(f+".epsilon", "a table cap is required when %s is declared: a synopsis or interactive instance answers every analyst once built, so only the table cap bounds what they learn together", strings.Join(shared, " and "))
	}
	if largest > t.Epsilon {
		return invalid(f+".epsilon", "table cap %g is below the ε %g of a synopsis or interactive domain declared on it", t.Epsilon, largest)
	}
	return nil
}

func (t *Table) validate(f string, seen map[string]bool) error {
	if !identifier.MatchString(t.Name) {
		return invalid(f+".name", "must be an identifier, got %q", t.Name)
	}
	key := strings.ToLower(t.Name)
	if seen[key] {
		return invalid(f+".name", "duplicate table %q", t.Name)
	}
	seen[key] = true
	if !sourceName.MatchString(t.Source) {
		return invalid(f+".source", "must be name or schema.name, got %q", t.Source)
	}
	for _, id := range append([]string{t.Name}, strings.Split(t.Source, ".")...) {
		if len(id) > MaxIdentifierLen {
			return invalid(f, "the name %.20q… is longer than %d bytes", id, MaxIdentifierLen)
		}
	}
	if t.Epsilon < 0 || math.IsNaN(t.Epsilon) || math.IsInf(t.Epsilon, 0) {
		return invalid(f+".epsilon", "must be a finite number ≥ 0 (0: no table cap), got %g", t.Epsilon)
	}
	if err := checkBudgetDelta(f+".delta", t.Delta); err != nil {
		return err
	}
	if t.Delta > 0 && t.Epsilon == 0 {
		return invalid(f+".delta", "a table's δ cap needs its ε cap (epsilon > 0): without one there is no table account, and %g would cap nothing", t.Delta)
	}
	if len(t.Columns) == 0 {
		return invalid(f+".columns", "at least one column is required")
	}
	if err := t.validateUnit(f); err != nil {
		return err
	}
	cols := map[string]bool{}
	for j, col := range t.Columns {
		cf := fmt.Sprintf("%s.columns[%d]", f, j)
		if !identifier.MatchString(col.Name) {
			return invalid(cf+".name", "must be an identifier, got %q", col.Name)
		}
		if cols[strings.ToLower(col.Name)] {
			return invalid(cf+".name", "duplicate column %q", col.Name)
		}
		cols[strings.ToLower(col.Name)] = true
		if !identifier.MatchString(col.Source) {
			return invalid(cf+".source", "must be an identifier, got %q", col.Source)
		}
		switch col.Type {
		case Integer, Real:
			if col.Lower == nil || col.Upper == nil {
				return invalid(cf, "numeric column %q needs public bounds lower and upper", col.Name)
			}
			lo, hi := *col.Lower, *col.Upper
			if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) || !(lo < hi) {
				return invalid(cf, "bounds must be finite with lower < upper, got [%g, %g]", lo, hi)
			}
			if !UsableBound(lo) || !UsableBound(hi) {
				return invalid(cf, "bounds must each be 0 or of magnitude in [2^-400, 2^400] (about [3.9e-121, 2.6e120]), got [%g, %g]", lo, hi)
			}
		case Text:
			if col.Lower != nil || col.Upper != nil {
				return invalid(cf, "text column %q cannot have bounds", col.Name)
			}
		case Date, Timestamp:
			if err := t.Columns[j].validateDates(cf); err != nil {
				return err
			}
		default:
			return invalid(cf+".type", "must be integer, real, text, date or timestamp, got %q", col.Type)
		}
		if err := t.Columns[j].validateDomain(cf); err != nil {
			return err
		}
	}
	return nil
}

// MinReleaseEpsilon and MaxReleaseEpsilon are the ε range every mechanism
// accepts for one release (mech.MinEpsilon and mech.MaxEpsilon, which a
// planner test keeps equal): a statement's ε below the minimum could never
// be spent, and a synopsis or interactive instance, one release, cannot
// take more than the maximum.
const (
	MinReleaseEpsilon = 0x1p-50
	MaxReleaseEpsilon = 100
)

// MinSynopsisEpsilon is the smallest ε a synopsis or interactive instance
// may declare: the synopsis mechanisms split it into at most 32 parts
// (DAWA's two stages, H2's tree of at most 21 levels over 2^20 bins), each
// of which must be at least 2^-20 (histogram.MinStageEpsilon); the planner's
// tests build every synopsis mechanism at both ends of the range.
const MinSynopsisEpsilon = 0x1p-15

// checkStatementEpsilon checks a statement's ε: finite and at least
// MinReleaseEpsilon.
func checkStatementEpsilon(field string, v float64) error {
	if !(v >= MinReleaseEpsilon) || math.IsInf(v, 0) {
		return invalid(field, "must be a finite number ≥ 2^-50 (the smallest ε a mechanism accepts), got %g", v)
	}
	return nil
}

// checkReleaseEpsilon checks the ε of one release declared in the
// configuration (a synopsis or an interactive instance).
func checkReleaseEpsilon(field string, v float64) error {
	if !(v >= MinSynopsisEpsilon && v <= MaxReleaseEpsilon) {
		return invalid(field, "must be in [2^-15, %d] (what its mechanisms accept for one release), got %g", MaxReleaseEpsilon, v)
	}
	return nil
}

func checkPositive(field string, v float64) error {
	if !(v > 0) || math.IsInf(v, 0) {
		return invalid(field, "must be a finite number > 0, got %g", v)
	}
	return nil
}

// MinStatementDelta is the smallest δ a statement may spend
// (mech.MinDelta, which a planner test keeps equal).
const MinStatementDelta = 0x1p-1000

// checkStatementDelta checks a statement's δ: in [MinStatementDelta, 1).
func checkStatementDelta(field string, v float64) error {
	if !(v >= MinStatementDelta && v < 1) {
		return invalid(field, "must be in [2^-1000, 1), got %g", v)
	}
	return nil
}

func checkProbability(field string, v float64) error {
	if !(v > 0 && v < 1) {
		return invalid(field, "must be in (0, 1), got %g", v)
	}
	return nil
}

// LargeDelta is the δ above which a configured δ is valid but warned
// about at start (LargeDeltas).
const LargeDelta = 1e-3

// LargeDeltas lists, as "field = δ", the analysts' δ budgets
// (users[i].delta) and the cap on one statement's δ (privacy.max_delta)
// above LargeDelta. An (ε, δ) guarantee lets a release fail outright, one
// person's rows revealed, with probability up to δ, so δ is meant to be
// far below 1/n for n units; the proxy logs them as a warning at start
// and still starts.
func (c *Config) LargeDeltas() []string {
	var large []string
	for i, u := range c.Users {
		if u.Delta > LargeDelta {
			large = append(large, fmt.Sprintf("users[%d].delta = %g", i, u.Delta))
		}
	}
	if c.Privacy.MaxDelta > LargeDelta {
		large = append(large, fmt.Sprintf("privacy.max_delta = %g", c.Privacy.MaxDelta))
	}
	return large
}

func checkBudgetDelta(field string, v float64) error {
	if !(v >= 0 && v < 1) {
		return invalid(field, "must be in [0, 1), got %g", v)
	}
	return nil
}
