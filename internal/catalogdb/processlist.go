package catalogdb

import (
	"time"

	"github.com/dolthub/go-mysql-server/sql"
)

// SetClientHost sets what SHOW PROCESSLIST and
// information_schema.PROCESSLIST show as the session's Host: the client's
// address as the server sees it ("127.0.0.1:50334"), as MySQL shows it.
func (s *Session) SetClientHost(host string) { s.host = host }

// ownProcess is the process list a statement of a session sees (SHOW
// PROCESSLIST, information_schema.PROCESSLIST): the session's own
// connection alone, running that statement. MySQL shows a user without
// the PROCESS privilege its own connections only; no other session's is
// ever shown here. Its other methods are go-mysql-server's no-ops, as
// when there is no list.
type ownProcess struct {
	sql.EmptyProcessList
	process sql.Process
}

// Processes implements sql.ProcessList.
func (p ownProcess) Processes() []sql.Process { return []sql.Process{p.process} }

// processList is the process list of the session's statement query.
func (s *Session) processList(query string) ownProcess {
	return ownProcess{process: sql.Process{
		Connection: s.sess.ID(),
		Host:       s.host,
		Database:   s.sess.GetCurrentDatabase(),
		User:       s.sess.Client().User,
		Command:    sql.ProcessCommandQuery,
		StartedAt:  time.Now(),
		Query:      query,
	}}
}
