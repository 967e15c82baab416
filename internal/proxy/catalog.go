package proxy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dpproxy/dpproxy/internal/catalogdb"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// ServerVersion is what clients see as the MySQL version. Clients parse its
// leading number to pick protocol features, so it starts with a real MySQL
// version whose features go-mysql implements.
const ServerVersion = "8.0.36-dpproxy"

// VersionComment is @@version_comment, printed by the mariadb client's banner.
const VersionComment = "dpproxy: differentially private SQL proxy"

// catalogTimeout bounds one statement in the catalog engine (SLEEP, BENCHMARK).
const catalogTimeout = 30 * time.Second

// catalogQuery has the catalog engine answer a metadata statement, of
// which it reads at most maxRows rows (selectLimit).
func (s *Session) catalogQuery(ctx context.Context, sql string, maxRows uint64) (*Result, error) {
	ctx, cancel := context.WithTimeout(ctx, catalogTimeout)
	defer cancel()
	r, err := s.catalog.QueryUpTo(ctx, sql, maxRows)
	if err != nil {
		return nil, catalogError(err)
	}
	n := s.newNotes()
	n.addCatalog(r)
	s.setNotes(n)
	if r.Columns == nil {
		return &Result{}, nil
	}
	return &Result{Typed: r.Columns, Rows: r.Rows}, nil
}

// catalogError maps an error of the catalog engine to the client's error; its
// message describes the statement and the configured schema only.
func catalogError(err error) error {
	var ce *catalogdb.Error
	if !errors.As(err, &ce) {
		return dperr.Wrap(dperr.Internal, err, "internal error in the catalog engine")
	}
	if errors.Is(err, catalogdb.ErrEngineFailed) {
		// A bug, logged with its panic (Execute): 1105, as the engine
		// says, not a refusal.
		return dperr.Wrap(dperr.Internal, err, "%s", ce.Msg)
	}
	kind := dperr.Unsupported
	switch ce.Code {
	case 1146:
		kind = dperr.UnknownTable
	case 1054:
		kind = dperr.UnknownColumn
	case 1049:
		kind = dperr.UnknownDatabase
	case 1064, 1149:
		kind = dperr.Parse
	case 1193:
		kind = dperr.UnknownVariable
	case 1231, 1232:
		kind = dperr.InvalidValue
	case 1238:
		kind = dperr.ReadOnlyVariable
	case 1046:
		kind = dperr.NoDatabase
	case 1109:
		kind = dperr.UnknownSchemaTable
	case 1052:
		kind = dperr.AmbiguousColumn
	case 1305:
		kind = dperr.UnknownFunction
	case 1582:
		kind = dperr.ParameterCount
	case 1066:
		kind = dperr.DuplicateAlias
	case 1222:
		kind = dperr.ColumnCount
	case 1242:
		kind = dperr.SubqueryRows
	case 1055:
		kind = dperr.NotInGroupBy
	case 1426:
		kind = dperr.TooBigPrecision
	case 1425:
		kind = dperr.TooBigScale
	case 1427:
		kind = dperr.ScaleOverPrecision
	case 1298:
		kind = dperr.UnknownTimeZone
	case 1317:
		kind = dperr.Canceled
	case 3024:
		kind = dperr.Timeout
	case 1105:
		// The engine failed, or a bound of the catalog stopped the
		// statement (rows, bytes, memory): not a refusal of its form.
		kind = dperr.Internal
	}
	msg := ce.Msg
	if strings.Contains(msg, "%!") {
		// go-mysql-server formatted its message with missing arguments
		// ("expression #%!d(MISSING)"): no text worth showing.
		msg = "not supported over the catalog: a statement the catalog engine cannot answer"
	}
	return dperr.Wrap(kind, err, "%s", msg)
}

// catalogValue evaluates one @@system or @user variable, or an expression,
// in the catalog engine, for a SELECT that also reads dpproxy's settings;
// the evaluation's warnings (1365 for a division by 0) are added to
// warnings when it is not nil.
func (s *Session) catalogValue(ctx context.Context, expr string, warnings *notes) (any, error) {
	r, err := s.catalog.Query(ctx, "SELECT "+expr)
	if err != nil {
		return nil, catalogError(err)
	}
	if len(r.Rows) != 1 || len(r.Rows[0]) != 1 {
		return nil, dperr.New(dperr.Internal, "internal error: %s gave no value", expr)
	}
	if warnings != nil {
		warnings.addCatalog(r)
	}
	return r.Rows[0][0], nil
}

// showGrants answers SHOW GRANTS: an analyst may read dpproxy's database,
// and nothing else (the global USAGE), the two rows MariaDB and MySQL 8
// show for such an account (information_schema's USER_PRIVILEGES and
// SCHEMA_PRIVILEGES say the same).
// An analyst sees only its own grants: SHOW GRANTS FOR another name, which
// MySQL allows only with SELECT on the mysql database, gets MySQL's answer
// without it (1044), whether or not that user exists.
func (s *Session) showGrants(st *sqlrewrite.ShowGrants) (*Result, error) {
	if st.For != "" && st.For != s.user {
		return nil, dperr.New(dperr.DatabaseAccessDenied, "Access denied for user '%s'@'%%' to database 'mysql'", s.user)
	}
	s.setWarnings(nil)
	return &Result{
		Columns: []string{fmt.Sprintf("Grants for %s@%%", s.user)},
		Rows: [][]any{
			{fmt.Sprintf("GRANT USAGE ON *.* TO `%s`@`%%`", strings.ReplaceAll(s.user, "`", "``"))},
			{fmt.Sprintf("GRANT SELECT ON `%s`.* TO `%s`@`%%`", Database, strings.ReplaceAll(s.user, "`", "``"))},
		},
	}, nil
}

// constantSelect answers a FROM-less SELECT that reads dpproxy's settings or
// budget functions, beside literals, variables and session functions.
func (s *Session) constantSelect(ctx context.Context, st *sqlrewrite.ConstantSelect) (*Result, error) {
	row := make([]any, len(st.Items))
	cols := make([]string, len(st.Items))
	warnings := s.newNotes()
	for i, it := range st.Items {
		cols[i] = it.Label
		v, err := s.constant(ctx, it, warnings)
		if err != nil {
			return nil, err
		}
		row[i] = v
	}
	s.setNotes(warnings)
	return &Result{Columns: cols, Rows: [][]any{row}}, nil
}

// constant evaluates one item of a constant SELECT, adding the
// warnings of its expressions to warnings.
func (s *Session) constant(ctx context.Context, it sqlrewrite.ConstItem, warnings *notes) (any, error) {
	switch it.Kind {
	case sqlrewrite.Expression:
		values := make([]any, len(it.Refs))
		for i, ref := range it.Refs {
			v, err := s.constant(ctx, ref, warnings)
			if err != nil {
				return nil, err
			}
			values[i] = v
		}
		sql, err := it.SQL(values)
		if err != nil {
			return nil, dperr.Wrap(dperr.Internal, err, "internal error: %s could not be evaluated", it.Label)
		}
		return s.catalogValue(ctx, sql, warnings)
	case sqlrewrite.Literal:
		return valueOf(it.Value), nil
	case sqlrewrite.SystemVariable:
		return s.catalogValue(ctx, "@@"+it.Name, nil)
	case sqlrewrite.UserVariable:
		switch it.Name {
		case "dp_epsilon":
			return s.settings().Epsilon, nil
		case "dp_delta":
			return s.settings().Delta, nil
		case "dp_mechanism":
			return s.mechName, nil
		case "dp_trim":
			return s.settings().Trim, nil
		}
		return s.catalogValue(ctx, "@`"+strings.ReplaceAll(it.Name, "`", "``")+"`", nil)
	case sqlrewrite.Function:
		switch it.Name {
		case "database", "schema":
			if s.database == "" {
				return nil, nil
			}
			return s.database, nil
		case "user", "current_user", "session_user", "system_user":
			return s.user + "@%", nil
		case "version":
			return ServerVersion, nil
		case "connection_id":
			return int64(s.connID), nil
		case "now", "current_timestamp", "sysdate":
			// The catalog engine's clock, in the session's time zone
			// (catalogdb's clock functions), as text as before.
			return s.catalogValue(ctx, "CAST("+it.Name+"() AS CHAR)", nil)
		case "last_insert_id":
			return int64(0), nil
		case "found_rows":
			return s.foundRows, nil
		case "dp_remaining_epsilon", "dp_remaining_delta":
			eps, delta, err := s.remaining(ctx)
			if err != nil {
				return nil, err
			}
			if it.Name == "dp_remaining_epsilon" {
				return eps, nil
			}
			return delta, nil
		}
	}
	return nil, dperr.New(dperr.Unsupported, "%s is not supported", it.Label)
}

func valueOf(v sqlrewrite.Value) any {
	if v.Null {
		return nil
	}
	if v.IsText {
		return v.Str
	}
	if v.Num == float64(int64(v.Num)) {
		return int64(v.Num)
	}
	return v.Num
}
