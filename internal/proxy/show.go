package proxy

import (
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// ServerVersion is what clients see as the MySQL version. Clients parse its
// leading number to pick protocol features, so it starts with a real MySQL
// version whose features go-mysql implements.
const ServerVersion = "8.0.36-dpproxy"

// VersionComment is @@version_comment, printed by the mariadb client's banner.
const VersionComment = "dpproxy: differentially private SQL proxy"

// systemVariables answers SELECT @@x and SHOW VARIABLES for the variables
// clients and connectors ask for at connect time. Nothing here depends on data.
var systemVariables = map[string]any{
	"version_comment":          VersionComment,
	"version":                  ServerVersion,
	"auto_increment_increment": int64(1),
	"autocommit":               int64(1),
	"character_set_client":     "utf8mb4",
	"character_set_connection": "utf8mb4",
	"character_set_database":   "utf8mb4",
	"character_set_results":    "utf8mb4",
	"character_set_server":     "utf8mb4",
	"collation_connection":     "utf8mb4_general_ci",
	"collation_server":         "utf8mb4_general_ci",
	"init_connect":             "",
	"interactive_timeout":      int64(28800),
	"license":                  "Apache-2.0",
	"lower_case_table_names":   int64(0),
	"net_buffer_length":        int64(16384),
	"net_write_timeout":        int64(60),
	"performance_schema":       int64(0),
	"query_cache_size":         int64(0),
	"query_cache_type":         "OFF",
	"sql_mode":                 "",
	"sql_select_limit":         nil,
	"system_time_zone":         "UTC",
	"time_zone":                "SYSTEM",
	"transaction_isolation":    "REPEATABLE-READ",
	"tx_isolation":             "REPEATABLE-READ",
	"transaction_read_only":    int64(1),
	"tx_read_only":             int64(1),
	"wait_timeout":             int64(28800),
}

func (s *Session) show(st *sqlrewrite.Show) (*Result, error) {
	s.setWarnings(nil)
	cat := s.engine.cat
	switch st.Kind {
	case sqlrewrite.ShowDatabases:
		t := newTable(Text("Database"))
		for _, db := range []string{"information_schema", Database} {
			if like(st.Like, db) {
				t.row(db)
			}
		}
		return t.result()
	case sqlrewrite.ShowTables:
		t := newTable(Text("Tables_in_" + Database))
		for _, tb := range cat.Tables {
			if like(st.Like, tb.Name) {
				t.row(tb.Name)
			}
		}
		return t.result()
	case sqlrewrite.ShowColumns:
		tb, ok := cat.Table(st.Table)
		if !ok {
			return nil, dperr.New(dperr.UnknownTable, "Table '%s.%s' doesn't exist", Database, st.Table)
		}
		t := newTable(Text("Field"), Text("Type"), Text("Null"), Text("Key"), Text("Default"), Text("Extra"))
		for _, c := range tb.Columns {
			if like(st.Like, c.Name) {
				t.row(c.Name, columnType(&c), "YES", "", nil, boundsComment(&c))
			}
		}
		return t.result()
	case sqlrewrite.ShowVariables:
		// SHOW VARIABLES lists every value as text, as MySQL does.
		t := newTable(Text("Variable_name"), Text("Value"))
		vars := s.systemVariables()
		for _, name := range sortedKeys(vars) {
			if like(st.Like, name) {
				t.row(name, variableText(vars[name]))
			}
		}
		return t.result()
	case sqlrewrite.ShowStatus:
		t := newTable(Text("Variable_name"), Text("Value"))
		if like(st.Like, "Queries") {
			t.row("Queries", strconv.FormatUint(s.engine.queries.Load(), 10))
		}
		return t.result()
	}
	// SHOW ENGINES, COLLATION, CHARSET and friends: nothing to show.
	return newTable(Text("Value")).result()
}

// constantSelect answers a FROM-less SELECT of literals, variables and session functions.
func (s *Session) constantSelect(ctx context.Context, st *sqlrewrite.ConstantSelect) (*Result, error) {
	row := make([]any, len(st.Items))
	cols := make([]string, len(st.Items))
	for i, it := range st.Items {
		cols[i] = it.Label
		v, err := s.constant(ctx, it)
		if err != nil {
			return nil, err
		}
		row[i] = v
	}
	s.setWarnings(nil)
	return &Result{Columns: cols, Rows: [][]any{row}}, nil
}

func (s *Session) constant(ctx context.Context, it sqlrewrite.ConstItem) (any, error) {
	switch it.Kind {
	case sqlrewrite.Literal:
		return valueOf(it.Value), nil
	case sqlrewrite.SystemVariable:
		return s.systemVariables()[it.Name], nil
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
		if v, ok := s.userVars[it.Name]; ok {
			return valueOf(v), nil
		}
		return nil, nil
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
			return time.Now().UTC().Format(time.DateTime), nil
		case "last_insert_id":
			return int64(0), nil
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

// systemVariables are the session's system variables: the constants above,
// and max_allowed_packet as configured.
func (s *Session) systemVariables() map[string]any {
	vars := maps.Clone(systemVariables)
	vars["max_allowed_packet"] = s.engine.cat.MaxAllowedPacket
	return vars
}

// variableText is a system variable's value as SHOW VARIABLES prints it.
func variableText(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	}
	return fmt.Sprint(v)
}

func columnType(c *catalog.Column) string {
	switch c.Type {
	case catalog.Integer:
		return "bigint"
	case catalog.Real:
		return "double"
	}
	return "text"
}

func boundsComment(c *catalog.Column) string {
	lo, hi, ok := c.Bounds()
	if !ok {
		return ""
	}
	return "bounds [" + trimFloat(lo) + ", " + trimFloat(hi) + "]"
}

// like reports whether name matches a SQL LIKE pattern (case-insensitive; an
// empty pattern matches everything).
func like(pattern, name string) bool {
	if pattern == "" {
		return true
	}
	// Translate % and _ to path.Match's * and ?, escaping path.Match's own metacharacters.
	var sb strings.Builder
	for _, r := range strings.ToLower(pattern) {
		switch r {
		case '%':
			sb.WriteByte('*')
		case '_':
			sb.WriteByte('?')
		case '*', '?', '[', '\\':
			sb.WriteByte('\\')
			sb.WriteRune(r)
		default:
			sb.WriteRune(r)
		}
	}
	ok, _ := path.Match(sb.String(), strings.ToLower(name))
	return ok
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func trimFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
