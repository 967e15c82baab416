// Package dperr is dpproxy's error catalog: every error a client can see has a
// Kind, and each Kind maps to exactly one MySQL error code and SQLSTATE.
//
// Contract: the message of an *Error is safe to show to the analyst. A cause
// attached with Wrap (for example a backend driver error, whose text may carry
// private values) is kept for logs through Unwrap and Cause, and is never part
// of Error(). The wire layer maps errors to MySQL packets with SQLCode, found
// through errors.As, so wrapping an *Error with fmt.Errorf("%w") keeps its code.
package dperr

import (
	"errors"
	"fmt"
)

// Kind classifies an error by what the client should learn from it.
type Kind int

// The kinds, in the order of DESIGN.md §4 plus the protocol-level ones.
const (
	// Internal is a bug or an unexpected condition; the message is generic.
	Internal Kind = iota
	// Parse: the SQL does not parse.
	Parse
	// Unsupported: the SQL parses but cannot be answered privately.
	Unsupported
	// UnknownTable: the table is not in the catalog.
	UnknownTable
	// UnknownColumn: the column is not declared for the table.
	UnknownColumn
	// UnknownDatabase: USE of a database other than dpproxy's.
	UnknownDatabase
	// BudgetExhausted: the privacy budget reservation does not fit.
	BudgetExhausted
	// AccessDenied: login failed.
	AccessDenied
	// Backend: the database behind the proxy failed; the message carries a query id only.
	Backend
	// InvalidValue: a session setting (SET @dp_...) has a value that is not allowed.
	InvalidValue
	// Canceled: the statement was interrupted (shutdown, client gone).
	Canceled
	// Timeout: the statement ran past the configured statement timeout.
	Timeout
	// NoSuchConnection: KILL named a connection id no logged-in connection
	// of the user has (another user's connection included).
	NoSuchConnection
	// TooManyPrepared: a connection holds the most prepared statements it may.
	TooManyPrepared
	// TooLarge: a statement's text or data would take a connection past
	// the bytes it may hold.
	TooLarge
	// CollationMix: a text constant meets a text column whose character
	// set cannot represent it (MySQL's ER_CANT_AGGREGATE_2COLLATIONS).
	CollationMix
	// DatabaseAccessDenied: the statement needs a privilege the analyst
	// lacks (SHOW GRANTS FOR another user reads the mysql database).
	DatabaseAccessDenied
	// OutOfRange: an integer computed from released values passes BIGINT's
	// range (MySQL's ER_DATA_OUT_OF_RANGE).
	OutOfRange
	// ResultTooLarge: the result a statement computes in the proxy's
	// memory passed catalog.MaxResultBytes (as a statement over the
	// catalog reports it).
	ResultTooLarge
	// UnknownTimeZone: SET time_zone to a value that is no zone dpproxy
	// reads (MySQL's ER_UNKNOWN_TIME_ZONE).
	UnknownTimeZone
	// UnknownVariable: a statement names a system variable that does not
	// exist (MySQL's ER_UNKNOWN_SYSTEM_VARIABLE).
	UnknownVariable
	// UnknownStatement: EXECUTE or DEALLOCATE PREPARE names no SQL-level
	// prepared statement of the session (MySQL's ER_UNKNOWN_STMT_HANDLER,
	// the code the protocol's COM_STMT_EXECUTE of an unknown id answers).
	UnknownStatement
	// WrongArguments: a statement's or a function's arguments do not fit
	// it (EXECUTE with more or fewer USING variables than markers, LIKE's
	// ESCAPE of two characters; MySQL's ER_WRONG_ARGUMENTS).
	WrongArguments
	// IllegalValue: a literal its type cannot hold (1e400 as a DOUBLE;
	// MySQL's ER_ILLEGAL_VALUE_FOR_TYPE).
	IllegalValue
	// UnknownCharset: a character set no server knows (CONVERT(x USING
	// nosuch); MySQL's ER_UNKNOWN_CHARACTER_SET).
	UnknownCharset
	// UnknownCollation: a collation no server knows (x COLLATE nosuch;
	// MySQL's ER_UNKNOWN_COLLATION).
	UnknownCollation
	// WrongUsage: two clauses that exclude each other (SELECT ALL
	// DISTINCT; MySQL's ER_WRONG_USAGE).
	WrongUsage
	// The kinds below are MySQL's errors for statements over the catalog
	// (package catalogdb words them as MySQL does).
	//
	// NoDatabase: an unqualified table without a current database
	// (ER_NO_DB_ERROR).
	NoDatabase
	// UnknownSchemaTable: information_schema has no such table
	// (ER_UNKNOWN_TABLE).
	UnknownSchemaTable
	// AmbiguousColumn: a column name that more than one table of the
	// statement has (ER_NON_UNIQ_ERROR).
	AmbiguousColumn
	// UnknownFunction: a call of a function that does not exist
	// (ER_SP_DOES_NOT_EXIST).
	UnknownFunction
	// ParameterCount: a call of a function with a wrong number of
	// arguments (ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT).
	ParameterCount
	// ReadOnlyVariable: SET of a read-only system variable
	// (ER_INCORRECT_GLOBAL_LOCAL_VAR).
	ReadOnlyVariable
	// DuplicateAlias: two tables of a statement with one name
	// (ER_NONUNIQ_TABLE).
	DuplicateAlias
	// ColumnCount: the SELECTs of a UNION differ in their number of
	// columns (ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT).
	ColumnCount
	// SubqueryRows: a scalar subquery returned more than one row
	// (ER_SUBQUERY_NO_1_ROW).
	SubqueryRows
	// NotInGroupBy: a selected column that is neither grouped nor
	// aggregated under ONLY_FULL_GROUP_BY (ER_WRONG_FIELD_WITH_GROUP).
	NotInGroupBy
	// DisplayWidth: a length beyond MySQL's largest, CAST(x AS
	// CHAR(4294967296)), MariaDB's ER_TOO_BIG_DISPLAYWIDTH.
	DisplayWidth
	// TooBigPrecision: a fraction of a second of more than 6 digits,
	// NOW(7) (MariaDB's ER_TOO_BIG_PRECISION).
	TooBigPrecision
	// TooBigScale: a DECIMAL of more than 38 digits after the point,
	// CAST(x AS DECIMAL(65, 39)) (MariaDB's ER_TOO_BIG_SCALE).
	TooBigScale
	// ScaleOverPrecision: a DECIMAL(M, D) of M < D, CAST(x AS
	// DECIMAL(5, 6)) (MariaDB's ER_M_BIGGER_THAN_D).
	ScaleOverPrecision
	// CollationCharset: a collation of another character set than the
	// one it is given with, SET NAMES utf8mb4 COLLATE latin1_bin
	// (MariaDB's ER_COLLATION_CHARSET_MISMATCH).
	CollationCharset
	// LockWait: a statement waited its longest for a resource other
	// statements hold (memory to parse it), MariaDB's
	// ER_LOCK_WAIT_TIMEOUT, which clients and pools retry.
	LockWait
	numKinds
)

// code is the MySQL error number and SQLSTATE of a Kind.
type code struct {
	number uint16
	state  string
	name   string
}

var codes = [numKinds]code{
	Internal:        {1105, "HY000", "internal"},
	Parse:           {1064, "42000", "parse"},
	Unsupported:     {1235, "42000", "unsupported"},
	UnknownTable:    {1146, "42S02", "unknown table"},
	UnknownColumn:   {1054, "42S22", "unknown column"},
	UnknownDatabase: {1049, "42000", "unknown database"},
	BudgetExhausted: {1226, "42000", "budget exhausted"},
	AccessDenied:    {1045, "28000", "access denied"},
	Backend:         {1105, "HY000", "backend"},
	InvalidValue:    {1231, "42000", "invalid value"},
	Canceled:        {1317, "70100", "canceled"},
	Timeout:         {3024, "HY000", "timeout"},
	// MySQL's ER_NO_SUCH_THREAD.
	NoSuchConnection: {1094, "HY000", "no such connection"},
	// MySQL's ER_MAX_PREPARED_STMT_COUNT_REACHED and ER_NET_PACKET_TOO_LARGE.
	TooManyPrepared: {1461, "42000", "too many prepared statements"},
	TooLarge:        {1153, "08S01", "too large"},
	// MySQL's ER_CANT_AGGREGATE_2COLLATIONS.
	CollationMix: {1267, "HY000", "illegal mix of collations"},
	// MySQL's ER_DBACCESS_DENIED_ERROR.
	DatabaseAccessDenied: {1044, "42000", "database access denied"},
	// MySQL's ER_DATA_OUT_OF_RANGE.
	OutOfRange: {1690, "22003", "out of range"},
	// MySQL has no error for a result too large to hold (it streams its
	// rows): the catalog engine's 1105, as a statement over the catalog
	// gets it.
	ResultTooLarge: {1105, "HY000", "result too large"},
	// MySQL's ER_UNKNOWN_TIME_ZONE.
	UnknownTimeZone: {1298, "HY000", "unknown time zone"},
	// MySQL's ER_UNKNOWN_SYSTEM_VARIABLE.
	UnknownVariable: {1193, "HY000", "unknown system variable"},
	// MySQL's ER_UNKNOWN_STMT_HANDLER.
	UnknownStatement: {1243, "HY000", "unknown prepared statement"},
	// MySQL's ER_WRONG_ARGUMENTS.
	WrongArguments: {1210, "HY000", "wrong arguments"},
	// MySQL's ER_ILLEGAL_VALUE_FOR_TYPE, ER_UNKNOWN_CHARACTER_SET,
	// ER_UNKNOWN_COLLATION and ER_WRONG_USAGE.
	IllegalValue:     {1367, "22007", "illegal value"},
	UnknownCharset:   {1115, "42000", "unknown character set"},
	UnknownCollation: {1273, "HY000", "unknown collation"},
	WrongUsage:       {1221, "HY000", "wrong usage"},

	NoDatabase:         {1046, "3D000", "no database selected"},
	UnknownSchemaTable: {1109, "42S02", "unknown information_schema table"},
	AmbiguousColumn:    {1052, "23000", "ambiguous column"},
	UnknownFunction:    {1305, "42000", "unknown function"},
	ParameterCount:     {1582, "42000", "wrong parameter count"},
	ReadOnlyVariable:   {1238, "HY000", "read-only variable"},
	DuplicateAlias:     {1066, "42000", "duplicate table alias"},
	ColumnCount:        {1222, "21000", "different number of columns"},
	SubqueryRows:       {1242, "21000", "subquery returns more than 1 row"},
	NotInGroupBy:       {1055, "42000", "column not in GROUP BY"},
	DisplayWidth:       {1439, "42000", "display width out of range"},
	TooBigPrecision:    {1426, "42000", "precision too big"},
	TooBigScale:        {1425, "42000", "scale too big"},
	ScaleOverPrecision: {1427, "42000", "scale over precision"},
	CollationCharset:   {1253, "42000", "collation not of the character set"},
	// MariaDB's ER_LOCK_WAIT_TIMEOUT: the error of a wait for something
	// other sessions hold; ER_CON_COUNT_ERROR (1040) would say the
	// connection was refused, ER_QUERY_TIMEOUT (3024) that the
	// statement's own timeout passed.
	LockWait: {1205, "HY000", "lock wait timeout"},
}

func init() {
	for k, c := range codes {
		if c.number == 0 || c.state == "" {
			panic(fmt.Sprintf("dperr: kind %d has no MySQL code", k))
		}
	}
}

// String names the kind, for logs and golden tests.
func (k Kind) String() string {
	if k < 0 || k >= numKinds {
		return fmt.Sprintf("kind(%d)", int(k))
	}
	return codes[k].name
}

// Code returns the MySQL error number and SQLSTATE of the kind.
func (k Kind) Code() (uint16, string) {
	if k < 0 || k >= numKinds {
		k = Internal
	}
	return codes[k].number, codes[k].state
}

// Error is an error a client may see.
type Error struct {
	Kind Kind
	// Msg is shown to the client as is.
	Msg string
	// cause is for logs only.
	cause error
}

// New returns an error of the given kind with a client-visible message.
func New(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// Wrap returns an error of the given kind whose client-visible message is the
// formatted text and whose cause is kept for logs only.
func Wrap(kind Kind, cause error, format string, args ...any) *Error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...), cause: cause}
}

// Error returns the client-visible message; it never includes the cause.
func (e *Error) Error() string { return e.Msg }

// Unwrap returns the cause, for errors.Is/As and logging.
func (e *Error) Unwrap() error { return e.cause }

// SQLCode returns the MySQL error number and SQLSTATE to send to the client.
func (e *Error) SQLCode() (uint16, string) { return e.Kind.Code() }

// KindOf returns the Kind of the first *Error in err's chain, or Internal.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Internal
}
