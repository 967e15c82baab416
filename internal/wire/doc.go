// Package wire serves dpproxy over the MySQL client/server protocol.
//
// It owns the listener's accept loop, the handshake and mysql_native_password
// authentication against an [Accounts] store, the command phase of every
// connection, and the translation of [Session] results and errors into MySQL
// packets. It knows nothing about SQL semantics: every statement text goes to
// the connection's [Session], which decides what to answer.
//
// wire imports go-mysql and the standard library only. It declares the
// interfaces it consumes ([Accounts], [Engine], [Session]) and the rest of
// dpproxy satisfies them structurally.
//
// Contracts:
//   - One [Session] per authenticated connection, opened after the password
//     check and closed when the connection ends; its methods are called from
//     one goroutine at a time.
//   - A connection keeps the user it logged in as: COM_CHANGE_USER is
//     refused. COM_RESET_CONNECTION closes the connection's prepared
//     statements and resets its session ([Session].Reset).
//   - An error that carries a MySQL code (a method SQLCode() (uint16, string)
//     anywhere in its chain) reaches the client with that code, SQLSTATE and
//     the coded error's message. Any other error reaches the client as 1105
//     (HY000) "internal error" with a reference; its text goes to the log only.
//   - Prepared statements are emulated: COM_STMT_EXECUTE substitutes the
//     arguments as SQL literals into the prepared text and calls
//     Session.Execute with the result, so the session validates every
//     statement the same way whichever protocol carried it. An execution
//     that asks for a read-only cursor runs the same way, once; its rows
//     wait on the statement for COM_STMT_FETCH.
package wire
