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

// TableAccount is the ledger account of a table's collective cap.
func TableAccount(table string) string { return "table:" + strings.ToLower(table) }
