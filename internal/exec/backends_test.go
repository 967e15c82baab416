package exec

import (
	"database/sql"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// testBackends are the databases a test runs a statement's fetches on, each
// opened fresh for the test (PostgreSQL and MariaDB skip when their
// DPPROXY_TEST_*_DSN is unset and fail when it is set but unreachable).
var testBackends = []struct {
	name    string
	dialect sqlrewrite.Dialect
	open    func(testing.TB) *sql.DB
}{
	{"sqlite", sqlrewrite.SQLite, testdb.SQLite},
	{"postgres", sqlrewrite.PostgreSQL, testdb.Postgres},
	{"mysql", sqlrewrite.MySQL, testdb.MySQL},
}
