package catalogdb

import (
	"fmt"
	"strings"
	"sync"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// Bounds on one session's user variables.
//
// Each value is at most 256 KiB (package sqlrewrite refuses a SET whose
// value may be larger), but MySQL bounds neither how many variables a
// connection holds nor their total, and neither did go-mysql-server: 30
// statements setting 60 distinct variables of 256 KiB each grew the proxy
// from 54 MB to 519 MB (an independent review), and a few connections could
// have exhausted its memory for every analyst. So a session holds at most
// maxUserVariables variables of at most maxUserVariableBytes in all (names
// and values): 16 variables of the largest size, far more than drivers and
// BI tools set (a few short ones), and at the default max_connections of
// 256 at most 1 GiB for the whole proxy, less than the prepared statements'
// texts may already take. A statement that would pass either bound fails
// with 1235 and changes no variable (every assignment it made is undone);
// SET @v = NULL frees the variable's space and its slot.
const (
	maxUserVariables     = 1024
	maxUserVariableBytes = 4 << 20
	// otherValueSize is what a value that is neither text nor bytes counts
	// (a number, a date): the engine holds it in a few words.
	otherValueSize = 16
)

// errUserVariables is the refusal of an assignment past the bounds.
func errUserVariables() *Error {
	return &Error{Code: 1235, State: "42000", Msg: fmt.Sprintf(
		"a connection may hold at most %d user variables of at most %d bytes in all (4 MiB, names and values); "+
			"SET @name = NULL frees a variable", maxUserVariables, maxUserVariableBytes)}
}

// boundedSession is go-mysql-server's session with the user variables kept
// here, within the bounds above, and a journal of the current statement's
// assignments so that a failed statement leaves them as they were. Every way
// the engine sets a user variable (SET, := in a SELECT, SELECT ... INTO)
// goes through SetUserVariable.
type boundedSession struct {
	*sql.BaseSession

	mu    sync.Mutex
	vars  map[string]sql.TypedValue
	bytes int64
	// undo holds, for each variable the current statement assigned, its
	// value before the statement (absent: ok false).
	undo map[string]previous

	// conditions are what @@warning_count and @@error_count read
	// (diagnostics.go).
	conditions Conditions
}

type previous struct {
	value sql.TypedValue
	ok    bool
}

var _ sql.Session = (*boundedSession)(nil)

func newBoundedSession(base *sql.BaseSession) *boundedSession {
	return &boundedSession{BaseSession: base, vars: map[string]sql.TypedValue{}}
}

// GetUserVariable implements sql.Session: an unset variable has no type and
// no value.
func (s *boundedSession) GetUserVariable(_ *sql.Context, name string) (sql.Type, any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.vars[strings.ToLower(name)]
	if !ok {
		return nil, nil, nil
	}
	return v.Typ, v.Value, nil
}

// SetUserVariable implements sql.Session. NULL removes the variable (it
// reads as an unset one does: NULL).
func (s *boundedSession) SetUserVariable(_ *sql.Context, name string, value any, typ sql.Type) error {
	name = strings.ToLower(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	old, had := s.vars[name]
	count, bytes := len(s.vars), s.bytes
	if had {
		count--
		bytes -= variableSize(name, old.Value)
	}
	if value != nil {
		count++
		bytes += variableSize(name, value)
		if count > maxUserVariables || bytes > maxUserVariableBytes {
			return errUserVariables()
		}
	}
	if s.undo != nil {
		if _, seen := s.undo[name]; !seen {
			s.undo[name] = previous{value: old, ok: had}
		}
	}
	if value == nil {
		delete(s.vars, name)
	} else {
		s.vars[name] = sql.TypedValue{Value: value, Typ: typ}
	}
	s.bytes = bytes
	return nil
}

// begin starts journaling a statement's assignments.
func (s *boundedSession) begin() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.undo = map[string]previous{}
}

// end finishes a statement: a failed one's assignments are undone.
func (s *boundedSession) end(failed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if failed {
		for name, p := range s.undo {
			if cur, ok := s.vars[name]; ok {
				s.bytes -= variableSize(name, cur.Value)
				delete(s.vars, name)
			}
			if p.ok {
				s.vars[name] = p.value
				s.bytes += variableSize(name, p.value.Value)
			}
		}
	}
	s.undo = nil
}

// usage returns how many user variables the session holds and their size.
func (s *boundedSession) usage() (int, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.vars), s.bytes
}

// variableSize is what a variable counts against maxUserVariableBytes: its
// name and its value's bytes.
func variableSize(name string, value any) int64 {
	return int64(len(name)) + valueSize(value)
}

func valueSize(value any) int64 {
	switch v := value.(type) {
	case nil:
		return 0
	case string:
		return int64(len(v))
	case []byte:
		return int64(len(v))
	case sql.JSONWrapper:
		if b, err := types.MarshallJson(v); err == nil {
			return int64(len(b))
		}
	case fmt.Stringer:
		return int64(len(v.String())) + otherValueSize
	}
	return otherValueSize
}
