package catalog

import "strings"

// Table returns the declared table with the given name (case-insensitive).
func (c *Config) Table(name string) (*Table, bool) {
	for i := range c.Tables {
		if strings.EqualFold(c.Tables[i].Name, name) {
			return &c.Tables[i], true
		}
	}
	return nil, false
}

// Column returns the declared column with the given name (case-insensitive).
func (t *Table) Column(name string) (*Column, bool) {
	for i := range t.Columns {
		if strings.EqualFold(t.Columns[i].Name, name) {
			return &t.Columns[i], true
		}
	}
	return nil, false
}

// User returns the user with the given name (exact match, as MySQL user names are).
func (c *Config) User(name string) (*User, bool) {
	for i := range c.Users {
		if c.Users[i].Name == name {
			return &c.Users[i], true
		}
	}
	return nil, false
}

// UserAccount is the ledger account of an analyst.
func UserAccount(user string) string { return "user:" + user }

// TableAccount is the ledger account of the collective cap of the backend
// relation source (a Table's Source, name or schema.name): "table:" and the
// relation's name, lower case, without its schema. Every statement on a
// configured table is charged to it, capped or not, so that however the
// table is named to analysts, and by whichever proxy sharing the ledger,
// one relation has one usage: a renamed table (name: pums_v2, source:
// pums) does not start a fresh cap. Like sameRelation it errs towards
// sharing: relations of one name in different schemas share an account.
func TableAccount(source string) string {
	_, name, qualified := strings.Cut(source, ".")
	if !qualified {
		name = source
	}
	return "table:" + strings.ToLower(name)
}

// LegacyTableAccount is the account that capped table t before caps were
// keyed on the backend relation (TableAccount): "table:" and the name
// analysts use, lower case. Its usage is carried over to TableAccount once
// (budget.Ledger.CarryOver), so that upgrading forgets no spending.
func LegacyTableAccount(t *Table) string { return "table:" + strings.ToLower(t.Name) }

// The MySQL collations dpproxy declares for text columns (TextCollation).
const (
	// CollationGeneralCI is MariaDB's default utf8mb4 collation: case and
	// accents folded ('abc' = 'ABC' = 'Ábc'), trailing spaces ignored
	// ('abc' = 'abc ', PAD SPACE).
	CollationGeneralCI = "utf8mb4_general_ci"
	// CollationBinary is MySQL 8's utf8mb4_0900_bin (MariaDB's
	// utf8mb4_nopad_bin): byte for byte, which for UTF-8 is code point
	// order, trailing spaces significant ('abc' <> 'abc ', NO PAD).
	CollationBinary = "utf8mb4_0900_bin"
)

// TextCollation is the collation of every text column as dpproxy declares
// it (information_schema, SHOW CREATE TABLE, SHOW FULL COLUMNS), the one
// post-processing compares released text keys in: the one the backend
// compares a text column in by default, so that a client reading the
// catalog learns what =, IN, COUNT(DISTINCT) and a declared text key's
// groups do on the backend. PostgreSQL (text and varchar under a
// deterministic collation: equal only when byte for byte equal) and
// SQLite (BINARY) compare bytes, CollationBinary; MariaDB, and Vitess over
// MariaDB shards, compare in its default, CollationGeneralCI (as does a
// configuration that names no backend, as tests build). A column of
// another collation (MariaDB's utf8mb4_bin, MySQL 8's default
// utf8mb4_0900_ai_ci, PostgreSQL's citext, SQLite's NOCASE) compares in
// its own, which the catalog does not show.
func (c *Config) TextCollation() string {
	switch c.Backend.Driver {
	case DriverPostgres, DriverSQLite:
		return CollationBinary
	}
	return CollationGeneralCI
}
