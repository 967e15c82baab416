package catalogdb

import (
	"context"
	"fmt"
	"math"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// selectLimitVariable is sql_select_limit as MySQL declares it: BIGINT
// UNSIGNED, 18446744073709551615 (no limit) by default and after SET
// sql_select_limit = DEFAULT. go-mysql-server declares it signed with
// default 2147483647.
//
// The engine does not apply it (withoutSelectLimit): the session does,
// to every statement a client's top-level SELECT (or SHOW) becomes,
// whichever path answers it (package proxy, sqlrewrite.SelectLimitApplies);
// the statements the session itself sends here, its reads of variables
// among them, are never cut.
func selectLimitVariable() sql.SystemVariable {
	return &sql.MysqlSystemVariable{
		Name:              "sql_select_limit",
		Scope:             sql.GetMysqlScope(sql.SystemVariableScope_Both),
		Dynamic:           true,
		SetVarHintApplies: true,
		Type:              types.NewSystemUintType("sql_select_limit", 0, math.MaxUint64),
		Default:           uint64(math.MaxUint64),
	}
}

// selectLimitRule names go-mysql-server's analyzer rule that wraps a
// statement in LIMIT @@sql_select_limit.
const selectLimitRule = "applyDefaultSelectLimit"

// withoutSelectLimit returns go-mysql-server's default analyzer without
// its rule that applies sql_select_limit (selectLimitVariable says why)
// and with asMariaDB,
// or an error if go-mysql-server no longer has that rule.
func withoutSelectLimit(pro sql.DatabaseProvider) (*analyzer.Analyzer, error) {
	for _, r := range analyzer.OnceBeforeDefault {
		if r.Id.String() == selectLimitRule {
			return analyzer.NewBuilder(pro).RemoveOnceBeforeRule(r.Id).AddPreAnalyzeRule(expressionsRule, asMariaDB).Build(), nil
		}
	}
	return nil, fmt.Errorf("catalogdb: go-mysql-server has no analyzer rule %s", selectLimitRule)
}

// SelectLimit is the session's sql_select_limit: how many rows a
// top-level SELECT without a LIMIT of its own returns at most.
func (s *Session) SelectLimit() uint64 {
	v, err := s.sess.GetSessionVariable(sql.NewContext(context.Background(), sql.WithSession(s.sess)), "sql_select_limit")
	if n, ok := v.(uint64); ok && err == nil {
		return n
	}
	return math.MaxUint64
}
