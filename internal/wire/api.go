package wire

import "context"

// Accounts looks up users. Implementations must be safe for concurrent use.
type Accounts interface {
	// Account returns how user logs in, or ok false if there is no such user.
	Account(user string) (account Account, ok bool)
	// Plugins counts the users that log in with each plugin. Unknown user
	// names are given one of the two in this proportion (each name always
	// the same one), so that which plugin a name is asked for does not tell
	// whether it exists.
	Plugins() (native, cachingSHA2 int)
	// NameSecret returns bytes that every proxy serving these accounts
	// returns alike, before and after a restart, and that no one who knows
	// only user names can compute: all users' names and stored password
	// hashes, say. wire derives from them the key that draws each unknown
	// name's plugin, so that all such proxies draw the same one (a name
	// asked for different plugins by two proxies would show it does not
	// exist). If it returns nothing, the key is made at random at start.
	NameSecret() []byte
}

// Account is one user's login. The stored form of the password is the
// mysql_native_password hash SHA1(SHA1(password)) (see [NativePasswordHash])
// whichever plugin the account uses, so plaintext passwords are never
// stored: caching_sha2_password logins end with the client sending the
// password over TLS or RSA-encrypted, which wire checks against this hash.
type Account struct {
	// NativeHash is the 20-byte SHA1(SHA1(password)).
	NativeHash []byte
	// CachingSHA2 makes clients log in with caching_sha2_password, MySQL 8's
	// default, instead of mysql_native_password: clients that refuse the
	// latter (go-sql-driver with allowNativePasswords=false) need it.
	// Without TLS such a login costs an RSA exchange until the fast-auth
	// cache knows the user, which some clients only do when allowed to
	// fetch the server's key (Connector/J: allowPublicKeyRetrieval=true).
	CachingSHA2 bool
	// MaxConnections, if > 0, caps the user's logged-in connections in
	// place of Config.MaxUserConnections.
	MaxConnections int
}

// plugin is the authentication plugin clients are asked to use.
func (a Account) plugin() string {
	if a.CachingSHA2 {
		return PluginCachingSHA2
	}
	return PluginNativePassword
}

// Engine opens one Session per authenticated connection. Open is called
// concurrently from different connections.
type Engine interface {
	// Open returns the session of a connection that authenticated as user.
	// connID is the id the client was given in the handshake
	// (CONNECTION_ID()), and transport how the connection reached the server.
	Open(user string, connID uint32, transport Transport) Session
}

// Transport is what a session may show of its connection's transport.
type Transport struct {
	// TLSVersion and TLSCipher are the TLS protocol version and cipher
	// suite, named as MySQL's Ssl_version and Ssl_cipher status variables
	// name them ("TLSv1.3", and OpenSSL's name of the suite:
	// "TLS_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256"), or both
	// "" on a plaintext connection.
	TLSVersion, TLSCipher string
	// Address is the client's address as the server sees it
	// ("127.0.0.1:50334"), which MySQL shows as its connection's Host in
	// SHOW PROCESSLIST.
	Address string
}

// Session executes statements for one connection. Its methods are called from
// one goroutine at a time. ctx is cancelled when the server stops for good
// (after the shutdown grace period); a Session must return promptly then.
type Session interface {
	// Execute runs the text of one COM_QUERY, or of one prepared statement
	// with its arguments substituted as literals. The text may hold several
	// statements: the session decides whether to refuse them.
	Execute(ctx context.Context, query string) (*Result, error)
	// ExecutePrepared runs bound, the text of the protocol prepared
	// statement query with its arguments substituted as literals, as
	// Execute does; query's text names the columns its select list names
	// after ? markers ("1 + ?", as MySQL names them), which bound's would
	// name after the values.
	ExecutePrepared(ctx context.Context, query, bound string) (*Result, error)
	// Describe returns the result columns that executing the prepared
	// statement query, whose markers ? markers stand for arguments not yet
	// known, will send, or nil when they cannot be told before it runs; it
	// answers COM_STMT_PREPARE. It must run nothing that reads data or
	// spends budget, and return promptly: it never refuses, the execution
	// does. An execution sends its own columns whatever Describe said.
	Describe(ctx context.Context, query string, markers int) []Field
	// UseDatabase handles COM_INIT_DB and the database named at login.
	UseDatabase(ctx context.Context, name string) error
	// Refused records that wire answered a statement (COM_QUERY,
	// COM_STMT_PREPARE, COM_STMT_EXECUTE, COM_INIT_DB) with the error
	// code and message before the session saw it: 1300 for text that is
	// not UTF-8 (checkUTF8). The session records it as it records its own
	// errors, in MariaDB's way: the next SHOW WARNINGS lists it alone, at
	// level Error, and @@warning_count and @@error_count count it.
	Refused(code uint16, message string)
	// Answered is called after the answer to each command has been
	// written, or its write failed (the connection then closes): the
	// session may release what it held for that answer. Rows an
	// execution left in a cursor (COM_STMT_EXECUTE with
	// CURSOR_TYPE_READ_ONLY) are the connection's from then on, bounded
	// by maxConnCursorBytes.
	Answered()
	// Reset handles COM_RESET_CONNECTION: the session's state returns to
	// what Open gave it (variables, settings, SQL-level prepared
	// statements, warnings), except what belongs to the connection: its
	// user, id and transport, and its current database (MySQL and MariaDB
	// keep it). It changes nothing outside the session. wire closes the
	// connection's protocol prepared statements itself.
	Reset()
	// Close releases the session; no method is called after it.
	Close()
}

// Result is the answer to one statement.
type Result struct {
	// Columns are the column labels, sent exactly as given. A nil or empty
	// Columns means an OK packet carrying AffectedRows.
	Columns []string
	// Rows hold values of these Go types only: nil (SQL NULL), int64, uint64,
	// float64, string, []byte and types implementing Temporal (DATE and
	// DATETIME). All non-nil values of a column must have the same type;
	// the column's MySQL type follows from it.
	Rows [][]any
	// Fields, when set, define the columns explicitly (Columns and the
	// derivation from Go types are then unused), and every value is nil, a
	// string in MySQL's text format for its column's type, or, in a DOUBLE
	// or FLOAT column, a FixedDouble.
	Fields []Field
	// AffectedRows is reported in the OK packet when Columns is empty.
	AffectedRows uint64
	// Warnings is the warning count announced in the OK or EOF packet, so
	// clients know to ask SHOW WARNINGS (the session answers that).
	Warnings uint16
}
