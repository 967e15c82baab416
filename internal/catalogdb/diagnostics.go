package catalogdb

import (
	"context"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// Conditions counts the conditions of a connection's previous statement as
// SHOW WARNINGS lists them: All its errors, warnings and notes, Errors its
// errors alone. They are what @@warning_count and @@error_count read.
type Conditions struct {
	All, Errors uint64
}

// The session variables that read a Conditions.
const (
	warningCountVariable = "warning_count"
	errorCountVariable   = "error_count"
)

// diagnosticsVariables are warning_count and error_count, which
// go-mysql-server lacks: read-only session variables (SET of either is
// refused as MySQL refuses it), whose values are the session's Conditions
// (boundedSession.GetSessionVariable), never a stored value.
func diagnosticsVariables() []sql.SystemVariable {
	out := make([]sql.SystemVariable, 0, 2)
	for _, name := range []string{warningCountVariable, errorCountVariable} {
		out = append(out, &sql.MysqlSystemVariable{
			Name:    name,
			Scope:   sql.GetMysqlScope(sql.SystemVariableScope_Session),
			Dynamic: false,
			Type:    types.NewSystemUintType(name, 0, 1<<63),
			Default: uint64(0),
		})
	}
	return out
}

// maxErrorCountVariable is max_error_count as MariaDB declares it: how
// many of a statement's errors, warnings and notes a session keeps for
// SHOW WARNINGS (the counts, @@warning_count and @@error_count, count
// them all), 0 to 65535, 64 by default (MySQL 8's is 1024, as is
// go-mysql-server's). The engine keeps that many of its own statements'
// warnings (Result.Warnings); package proxy keeps that many of every
// statement's (Session.MaxErrorCount).
func maxErrorCountVariable() sql.SystemVariable {
	return &sql.MysqlSystemVariable{
		Name:              maxErrorCountName,
		Scope:             sql.GetMysqlScope(sql.SystemVariableScope_Both),
		Dynamic:           true,
		SetVarHintApplies: true,
		Type:              types.NewSystemUintType(maxErrorCountName, 0, 65535),
		Default:           uint64(DefaultMaxErrorCount),
	}
}

// maxErrorCountName is the name of maxErrorCountVariable.
const maxErrorCountName = "max_error_count"

// DefaultMaxErrorCount is max_error_count's default: MariaDB's.
const DefaultMaxErrorCount = 64

// MaxErrorCount is the session's max_error_count: how many of a
// statement's errors, warnings and notes SHOW WARNINGS lists at most.
func (s *Session) MaxErrorCount() uint64 {
	v, err := s.sess.GetSessionVariable(sql.NewContext(context.Background(), sql.WithSession(s.sess)), maxErrorCountName)
	if n, ok := v.(uint64); ok && err == nil {
		return n
	}
	return DefaultMaxErrorCount
}

// SetConditions records the conditions of the connection's statement that
// just ended, which the following statements' @@warning_count and
// @@error_count read (SHOW VARIABLES lists them too) until the next
// SetConditions. The caller sets them once a statement has its outcome, so
// a statement that reads them reads its predecessor's, as in MySQL.
func (s *Session) SetConditions(c Conditions) {
	s.sess.mu.Lock()
	defer s.sess.mu.Unlock()
	s.sess.conditions = c
}

// GetSessionVariable implements sql.Session: warning_count and error_count
// are the session's Conditions.
func (s *boundedSession) GetSessionVariable(ctx *sql.Context, name string) (any, error) {
	if v, ok := s.condition(name); ok {
		return v, nil
	}
	return s.BaseSession.GetSessionVariable(ctx, name)
}

// GetAllSessionVariables implements sql.Session (SHOW VARIABLES):
// warning_count and error_count are the session's Conditions.
func (s *boundedSession) GetAllSessionVariables() map[string]any {
	all := s.BaseSession.GetAllSessionVariables()
	for _, name := range []string{warningCountVariable, errorCountVariable} {
		all[name], _ = s.condition(name)
	}
	return all
}

// condition is the value of warning_count or error_count; ok is false
// for any other variable.
func (s *boundedSession) condition(name string) (v uint64, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch strings.ToLower(name) {
	case warningCountVariable:
		return s.conditions.All, true
	case errorCountVariable:
		return s.conditions.Errors, true
	}
	return 0, false
}
