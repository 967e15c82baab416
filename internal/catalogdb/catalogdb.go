// Package catalogdb is dpproxy's catalog engine: a real MySQL-compatible SQL
// engine (go-mysql-server) over the configured schema and nothing else, so
// that information_schema queries, the SHOW family, session variables and
// constant expressions are answered as MySQL answers them (WHERE, LIKE,
// ORDER BY, joins between catalog tables, MySQL's result shapes).
//
// Contract (DESIGN.md §3, README "Design notes"): only public metadata is
// ever in this engine. Each configured table is registered with its declared
// columns and types, and its public bounds as the column comment, and it has
// zero rows: its Partitions yield nothing, so no statement evaluated here can
// observe a row of private data, and this package imports nothing that reads
// data (archtest enforces it). Which statements come here is decided by
// package sqlrewrite (Parser.Parse, Route); the engine itself is read-only,
// its file functions are disabled, and it is never given a backend.
package catalogdb

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/information_schema"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/go-mysql-server/sql/variables"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

// Engine evaluates SQL over the catalog's metadata. It is safe for concurrent
// use by many sessions.
type Engine struct {
	gms      *sqle.Engine
	database string
	// slots admits at most maxConcurrentStatements statements at once
	// (heap_watch.go), at most maxUserStatements of one user's.
	slots *admission
	// timeout bounds one statement (statementTimeout).
	timeout time.Duration
}

// Variables are global system variable values the engine reports (version,
// version_comment, ...), set once for the process.
type Variables map[string]any

var initVariables sync.Once

// New returns the engine for cat, whose tables it shows in database. vars
// overrides system variables' defaults.
func New(cat *catalog.Config, database string, vars Variables) (*Engine, error) {
	initVariables.Do(func() {
		variables.InitSystemVariables()
		sql.SystemVariables.AddSystemVariables(append([]sql.SystemVariable{timeZoneVariable(), selectLimitVariable(), maxErrorCountVariable(), groupConcatMaxLenVariable()}, diagnosticsVariables()...))
		upperCaseColumnsTable()
		mariaDBInformationSchema()
	})
	all := map[string]any{
		// LOAD_FILE and SELECT ... INTO OUTFILE may touch only this
		// directory, which does not exist (sqlrewrite refuses both anyway).
		"secure_file_priv": "/nonexistent/dpproxy-catalog-engine",
	}
	for k, v := range vars {
		all[k] = v
	}
	if err := SetGlobalVariables(all); err != nil {
		return nil, err
	}
	// Every text column, table and the database itself have the collation
	// the backend compares text in (catalog.Config.TextCollation).
	collation, err := sql.ParseCollation("", cat.TextCollation(), false)
	if err != nil {
		return nil, fmt.Errorf("catalogdb: text collation: %w", err)
	}
	db := &database_{name: database, collation: collation, tables: map[string]*table{}}
	for i := range cat.Tables {
		t := &cat.Tables[i]
		db.order = append(db.order, t.Name)
		db.tables[strings.ToLower(t.Name)] = newTable(database, t, collation)
	}
	pro := &provider{db: db}
	a, err := withoutSelectLimit(pro)
	if err != nil {
		return nil, err
	}
	a.Catalog.RegisterFunction(sql.NewEmptyContext(), sessionFunctions()...)
	e := sqle.New(a, nil)
	e.Parser = castParser{e.Parser}
	if err := emptyColumnStatistics(e); err != nil {
		return nil, err
	}
	if err := allCharacterSets(e); err != nil {
		return nil, err
	}
	if err := sessionGrants(e, database); err != nil {
		return nil, err
	}
	e.ReadOnly.Store(true)
	if err := upperCaseInformationSchema(e); err != nil {
		return nil, err
	}
	return &Engine{gms: e, database: database, slots: newAdmission(maxConcurrentStatements, maxUserStatements), timeout: statementTimeout}, nil
}

// emptyColumnStatistics makes information_schema.COLUMN_STATISTICS (which
// mysqldump 8 reads) an empty table with MySQL 8's columns, which it is:
// the engine holds no histograms. go-mysql-server's reader returns no row
// iterator at all for a session without privileges, every session here,
// and the engine panicked on it.
func emptyColumnStatistics(e *sqle.Engine) error {
	t, ok, err := e.Analyzer.Catalog.InfoSchema.GetTableInsensitive(sql.NewEmptyContext(), information_schema.ColumnStatisticsTableName)
	is, isTable := t.(*information_schema.InformationSchemaTable)
	if err != nil || !ok || !isTable {
		return fmt.Errorf("catalogdb: go-mysql-server has no information_schema table %s (%v)", information_schema.ColumnStatisticsTableName, err)
	}
	is.Reader = func(*sql.Context, sql.Catalog) (sql.RowIter, error) { return sql.RowsToRowIter(), nil }
	return nil
}

// SetGlobalVariables sets global system variable values for the process,
// as New does with its vars: @@port once the proxy listens, say.
// Sessions opened afterwards, and every read of a global-only variable,
// see them.
func SetGlobalVariables(vars Variables) error {
	if err := sql.SystemVariables.AssignValues(vars); err != nil {
		return fmt.Errorf("catalogdb: system variables: %w", err)
	}
	return nil
}

// newTable is t as the engine shows it, its text columns in collation.
func newTable(database string, t *catalog.Table, collation sql.CollationID) *table {
	schema := make(sql.Schema, len(t.Columns))
	for i := range t.Columns {
		c := &t.Columns[i]
		var typ sql.Type
		switch c.Type {
		case catalog.Integer:
			typ = types.Int64
		case catalog.Real:
			typ = types.Float64
		case catalog.Date:
			typ = types.Date
		case catalog.Timestamp:
			typ = types.Datetime
		default:
			typ = types.CreateText(collation)
		}
		schema[i] = &sql.Column{
			Name: c.Name, Type: typ, Nullable: true, Source: t.Name, DatabaseSource: database,
			Comment: BoundsComment(c),
		}
	}
	return &table{name: t.Name, schema: schema, collation: collation}
}

// BoundsComment is a column's public bounds as MySQL shows a column comment:
// "bounds [lo, hi]", or "" for a column without bounds.
func BoundsComment(c *catalog.Column) string {
	lo, hi, ok := c.Bounds()
	if c.Temporal() && c.Lower != nil && c.Upper != nil {
		return fmt.Sprintf("bounds [%s, %s]", c.FormatTemporal(*c.Lower), c.FormatTemporal(*c.Upper))
	}
	if !ok {
		return ""
	}
	return fmt.Sprintf("bounds [%v, %v]", lo, hi)
}

// provider shows the one configured database; go-mysql-server adds
// information_schema itself.
type provider struct{ db *database_ }

func (p *provider) Database(_ *sql.Context, name string) (sql.Database, error) {
	if strings.EqualFold(name, p.db.name) {
		return p.db, nil
	}
	return nil, sql.ErrDatabaseNotFound.New(name)
}

func (p *provider) HasDatabase(_ *sql.Context, name string) bool {
	return strings.EqualFold(name, p.db.name)
}

func (p *provider) AllDatabases(*sql.Context) []sql.Database { return []sql.Database{p.db} }

// database_ holds the configured tables (the underscore avoids the
// parameter name); its default collation is theirs.
type database_ struct {
	name      string
	collation sql.CollationID
	order     []string
	tables    map[string]*table
}

var _ sql.CollatedDatabase = (*database_)(nil)

func (d *database_) Name() string { return d.name }

func (d *database_) GetTableInsensitive(_ *sql.Context, name string) (sql.Table, bool, error) {
	t, ok := d.tables[strings.ToLower(name)]
	if !ok {
		return nil, false, nil
	}
	return t, true, nil
}

func (d *database_) GetTableNames(*sql.Context) ([]string, error) { return d.order, nil }

func (d *database_) GetCollation(*sql.Context) sql.CollationID { return d.collation }

func (d *database_) SetCollation(*sql.Context, sql.CollationID) error {
	return fmt.Errorf("database %s is read-only", d.name)
}

// table is a configured table's schema with no rows: there is no way to put
// a row into it.
type table struct {
	name      string
	schema    sql.Schema
	collation sql.CollationID
}

func (t *table) Name() string                                       { return t.name }
func (t *table) String() string                                     { return t.name }
func (t *table) Schema() sql.Schema                                 { return t.schema }
func (t *table) Collation() sql.CollationID                         { return t.collation }
func (t *table) Partitions(*sql.Context) (sql.PartitionIter, error) { return noPartitions{}, nil }
func (t *table) PartitionRows(*sql.Context, sql.Partition) (sql.RowIter, error) {
	return sql.RowsToRowIter(), nil
}

// noPartitions is the partition iterator of a table with no rows.
type noPartitions struct{}

func (noPartitions) Next(*sql.Context) (sql.Partition, error) { return nil, io.EOF }
func (noPartitions) Close(*sql.Context) error                 { return nil }

// Session is one connection's state in the engine: current database, system
// and user variables (user_vars.go bounds them). It is used by one goroutine
// at a time.
type Session struct {
	e *Engine
	// user is the user whose share of the engine's slots its statements
	// take (admission).
	user string
	sess *boundedSession
	// host is the client's address (SetClientHost).
	host string
}

// Open returns the session of a connection; user and connID are what
// USER(), CURRENT_USER() and CONNECTION_ID() report, and vars the session
// values of system variables that differ from the global ones for it. A
// value that cannot be set keeps the global one; CheckSessionVariables
// tells beforehand.
func (e *Engine) Open(user string, connID uint32, vars Variables) *Session {
	s, _ := newBaseSession(user, connID, vars)
	return &Session{e: e, user: user, sess: newBoundedSession(s)}
}

// CheckSessionVariables reports the first of vars that Open could not set
// as a session value (a variable without one, or a value out of its range).
func CheckSessionVariables(vars Variables) error {
	_, err := newBaseSession("", 0, vars)
	return err
}

// newBaseSession is Open's go-mysql-server session, with every variable of
// vars set that can be, and the first error.
func newBaseSession(user string, connID uint32, vars Variables) (*sql.BaseSession, error) {
	s := sql.NewBaseSessionWithClientServer("dpproxy", sql.Client{User: user, Address: "%"}, connID)
	ctx := sql.NewContext(context.Background(), sql.WithSession(s))
	var first error
	for name, v := range vars {
		if err := s.SetSessionVariable(ctx, name, v); err != nil && first == nil {
			first = fmt.Errorf("catalogdb: session variable %s: %w", name, err)
		}
	}
	return s, first
}

// TimeZone is the session's time_zone variable as SET left it ('SYSTEM'
// by default), which NOW() reads here; "" if it cannot be read.
func (s *Session) TimeZone() string {
	v, err := s.sess.GetSessionVariable(sql.NewContext(context.Background(), sql.WithSession(s.sess)), "time_zone")
	if err != nil {
		return ""
	}
	zone, _ := v.(string)
	return zone
}

// CollationConnection is the session's collation_connection variable as
// SET or SET NAMES left it ('utf8mb4_0900_bin' by default), in which
// post-processing compares literals' text; "" if it cannot be read.
func (s *Session) CollationConnection() string {
	v, err := s.sess.GetSessionVariable(sql.NewContext(context.Background(), sql.WithSession(s.sess)), "collation_connection")
	if err != nil {
		return ""
	}
	name, _ := v.(string)
	return name
}

// SetDatabase sets the current database ("" for none) as USE does; the
// caller has checked that it exists.
func (s *Session) SetDatabase(name string) { s.sess.SetCurrentDatabase(name) }

// SetTLS sets the session values of the status variables Ssl_version and
// Ssl_cipher, which SHOW SESSION STATUS shows: the connection's TLS
// protocol version and cipher suite as MySQL names them ("TLSv1.3",
// "TLS_AES_128_GCM_SHA256"). A session of a plaintext connection keeps
// their defaults, "".
func (s *Session) SetTLS(version, cipher string) {
	ctx := sql.NewContext(context.Background(), sql.WithSession(s.sess))
	// Both are status variables of every session (go-mysql-server's
	// list), so neither assignment can fail.
	_ = s.sess.SetStatusVariable(ctx, "Ssl_version", version)
	_ = s.sess.SetStatusVariable(ctx, "Ssl_cipher", cipher)
}

// context is a statement's context. Its statement time, which NOW(),
// UTC_TIMESTAMP() and the other clock functions read (clock.go), is the
// current time to the microsecond; each function truncates it to its own
// precision, so TIMEDIFF(NOW(), UTC_TIMESTAMP()) (Metabase's time-zone
// probe) is the zone's offset and NOW(6) has its fraction. Its memory manager
// bounds the rows the statement's sorts and groupings hold (rowBudget),
// and its process list is the session's connection running query
// (ownProcess).
func (s *Session) context(ctx context.Context, query string) *sql.Context {
	c := sql.NewContext(ctx, sql.WithSession(s.sess), sql.WithMemoryManager(sql.NewMemoryManager(&rowBudget{})),
		sql.WithProcessList(s.processList(query)))
	c.SetQueryTime(time.Now().Truncate(time.Microsecond))
	return c
}
