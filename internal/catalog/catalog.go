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
