package catalogdb

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// sessionFunctions are the functions of the session MySQL and MariaDB have
// and go-mysql-server lacks (Connector/J's getSystemFunctions lists them):
// SESSION_USER() and SYSTEM_USER(), synonyms of USER(), and CURRENT_ROLE(),
// NULL as MariaDB answers it for a session without a role (dpproxy has no
// roles; MySQL 8 answers NONE).
func sessionFunctions() []sql.Function {
	user := func(name string) sql.Function {
		return sql.NewFunction0(name, func() sql.Expression {
			return function.User{NoArgFunc: function.NoArgFunc{Name: name, SQLType: types.LongText}}
		})
	}
	return []sql.Function{
		user("session_user"),
		user("system_user"),
		sql.NewFunction0("current_role", func() sql.Expression {
			return currentRole{function.NoArgFunc{Name: "current_role", SQLType: types.LongText}}
		}),
	}
}

// currentRole is CURRENT_ROLE(): a NULL typed as USER() is.
type currentRole struct{ function.NoArgFunc }

var _ sql.FunctionExpression = currentRole{}

// Description implements sql.FunctionExpression.
func (currentRole) Description() string { return "returns the current active roles: NULL, none" }

// Eval implements sql.Expression.
func (currentRole) Eval(*sql.Context, sql.Row) (any, error) { return nil, nil }

// IsNullable implements sql.Expression.
func (currentRole) IsNullable() bool { return true }

// WithChildren implements sql.Expression.
func (c currentRole) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	return function.NoArgFuncWithChildren(c, children)
}
