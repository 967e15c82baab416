package wire

import (
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"
)

// connection implements go-mysql's Handler (the HandleStmt* methods are in
// stmt.go). go-mysql itself calls only UseDB, during the handshake; the
// command loop in conn.go calls the rest.
var _ server.Handler = (*connection)(nil)

// UseDB handles COM_INIT_DB. During the handshake, before the password is
// checked, it only remembers the database the client named; OnAuthSuccess
// applies it.
func (c *connection) UseDB(name string) error {
	if c.session == nil {
		c.loginDB = name
		return nil
	}
	if err := c.checkText(name, "a database name"); err != nil {
		return err
	}
	return c.session.UseDatabase(c.ctx, name)
}

// HandleQuery handles COM_QUERY; rows use the text protocol. Text that is
// not UTF-8 is refused before the session sees it (checkText).
func (c *connection) HandleQuery(query string) (*gomysql.Result, error) {
	if err := c.checkText(query, ""); err != nil {
		return nil, err
	}
	ctx, end := c.begin()
	defer end()
	r, err := c.session.Execute(ctx, query)
	if err != nil {
		return nil, err
	}
	return toMySQLResult(r, false)
}

// HandleFieldList answers the deprecated COM_FIELD_LIST with no fields.
func (c *connection) HandleFieldList(table, wildcard string) ([]*gomysql.Field, error) {
	return []*gomysql.Field{}, nil
}

// HandleOtherCommand accepts COM_SET_OPTION (the session decides about
// multi-statements when it sees them) and refuses every other command the
// command loop does not handle.
func (c *connection) HandleOtherCommand(cmd byte, data []byte) error {
	if cmd == gomysql.COM_SET_OPTION {
		return nil
	}
	return errUnknownCommand(cmd)
}
