package wire

import (
	"errors"
	"fmt"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// sqlCoder is implemented by errors that carry their own MySQL error number
// and SQLSTATE (dperr.Error does).
type sqlCoder interface {
	SQLCode() (uint16, string)
}

// toMyError maps an error from a Session, or from wire itself, to the bare
// *mysql.MyError that go-mysql writes as an error packet (it recognises that
// type only by assertion, so a wrapped one would become 1105).
//
// A *mysql.MyError is passed through; an error with SQLCode anywhere in its
// chain keeps that code, its SQLSTATE and its own message. Anything else is
// an internal error: the client gets 1105 (HY000) "internal error" with ref,
// and nothing of err's text, which the caller must log with ref.
func toMyError(err error, ref string) (me *gomysql.MyError, internal bool) {
	if errors.As(err, &me) {
		return me, false
	}
	var c sqlCoder
	if errors.As(err, &c) {
		code, state := c.SQLCode()
		if len(state) != 5 {
			state = "HY000"
		}
		// c came out of err's chain, so it is an error.
		return &gomysql.MyError{Code: code, State: state, Message: c.(error).Error()}, false
	}
	return &gomysql.MyError{
		Code:    gomysql.ER_UNKNOWN_ERROR,
		State:   "HY000",
		Message: fmt.Sprintf("internal error (ref %s)", ref),
	}, true
}

// Errors wire raises itself.
var (
	errTooManyConnections = gomysql.NewError(gomysql.ER_CON_COUNT_ERROR, "Too many connections")
	errMalformedPacket    = gomysql.NewError(gomysql.ER_MALFORMED_PACKET, "Malformed communication packet.")
	// errChangeUser answers COM_CHANGE_USER: a connection stays with the
	// user who logged in (its budget account, its connection count).
	errChangeUser = gomysql.NewError(gomysql.ER_NOT_SUPPORTED_YET,
		"COM_CHANGE_USER is not supported: a connection keeps the user it logged in as; open a new connection to log in as another user (COM_RESET_CONNECTION resets a session)")
)

// errUnknownCommand answers a command byte wire does not implement.
func errUnknownCommand(cmd byte) *gomysql.MyError {
	return gomysql.NewError(gomysql.ER_UNKNOWN_COM_ERROR, fmt.Sprintf("Unknown command %d", cmd))
}

// errWrongArguments answers a COM_STMT_EXECUTE whose arguments cannot be
// turned into SQL literals.
func errWrongArguments(format string, args ...any) *gomysql.MyError {
	return gomysql.NewError(gomysql.ER_WRONG_ARGUMENTS,
		"Incorrect arguments to mysqld_stmt_execute: "+fmt.Sprintf(format, args...))
}

// errNegatedMinimum answers a COM_STMT_EXECUTE that negates a BIGINT
// argument -9223372036854775808 with a unary minus, as MariaDB does.
func errNegatedMinimum() *gomysql.MyError {
	return gomysql.NewError(gomysql.ER_DATA_OUT_OF_RANGE, "BIGINT value is out of range in '--9223372036854775808'")
}
