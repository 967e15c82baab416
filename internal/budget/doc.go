// Package budget is dpproxy's durable privacy-budget ledger (DESIGN.md §2,
// "Composition", "Refusals are paid", "Budget ledger").
//
// # Model
//
// An account is a named budget, such as "user:alice" (an analyst) or
// "table:pums" (what all analysts together may spend on a backend relation).
// Each account keeps a running total of what it has used: every reservation
// that was not cancelled, committed or not. Under basic sequential
// composition a release costs its (ε, δ) on every account it is charged to.
//
// The usage is shared by every Ledger in the database; the limit it is held
// to is each reservation's (Account.Limit): the limit stored with the
// account (SetLimit), for accounts whose limit is itself shared state (the
// claims of shared releases); a limit of the caller's own (OwnLimit), so
// that several proxies with different configurations each enforce theirs
// against the usage all of them add to, and one proxy's SetLimit cannot
// change what another enforces; or none (NoLimit), which still charges the
// account, so that its usage stays complete for the proxies that do bound
// it. An account with its own limit or none is created, with no usage,
// when a reservation first charges it; the limit then stored is for the
// record only.
//
// Reserve charges a set of accounts at once, all or nothing, in one
// transaction: it fails with a dperr.BudgetExhausted error when the cost
// does not fit the first account that blocks, naming what remains of it
// only if the account is marked Disclose (the analyst's own: what remains
// of a table cap is what the other analysts left). A Reservation then
// ends in exactly one of two ways: Commit after the answer was released (or
// after any failure once data was read), or Cancel when no data was read at
// all. A reservation that is neither committed nor
// cancelled, because the process crashed or was killed, stays counted as spent
// forever: data may have been read, so the ledger errs on the side of privacy.
// Nothing the ledger has counted is lost by a restart, since every change is a
// committed database transaction before Reserve, Commit or Cancel returns,
// nor by a crash of the database or its host, since those commits are
// durable: Open refuses a database that may acknowledge a commit before it
// is on disk, and PostgreSQL sessions pin synchronous_commit
// (Dialect.Session; durable.go).
//
// # Tolerance
//
// Budgets are float64 sums, each addition (and each cancelled cost taken
// back) rounded up, so the stored usage is never below the exact sum of
// what it holds: a cost too small to move a rounded sum still counts. Ten
// reservations of 0.1 then add up to a little over 1. A cost fits when,
// for each of ε and δ with a positive cost, used + cost (rounded up) ≤
// limit·(1 + Tolerance), with Tolerance = 1e-9: exact sums of the
// configured amounts fit, and no analyst can gain more than a billionth of
// the budget from rounding. A remaining amount within the tolerance of
// zero is reported as zero.
//
// # Concurrency
//
// Several connections of one proxy and several proxies sharing one ledger
// database never overspend. Every operation is one database transaction that
// locks the accounts it charges before reading them, always in the same
// (sorted) order, followed by reservation rows: on PostgreSQL and MySQL/MariaDB
// (InnoDB) with SELECT ... FOR UPDATE, on SQLite by making the first statement
// of the transaction a write, which takes the database's write lock at once,
// like BEGIN IMMEDIATE, whatever _txlock the caller's DSN names. Each SQLite
// transaction also sets PRAGMA busy_timeout on its connection, so a DSN without
// one still waits for the lock instead of failing. Serialization failures,
// deadlocks and SQLITE_BUSY are retried a bounded number of times with
// jittered exponential backoff. On PostgreSQL and MySQL/MariaDB a
// transaction's row-lock waits are bounded by the ledger's lock timeout
// (SetLockTimeout), each transaction setting it: a wait that reaches it (a
// row another session holds locked) fails the transaction, rolled back
// and not run again, with a dperr.Timeout error. Concurrent Reserves and Commits of one
// Ledger are grouped into one such transaction (group commit, batch.go):
// one account lock and one durable commit serve many statements, each
// Reserve still checked, in queue order, against everything granted
// before it. On PostgreSQL and MariaDB a batch whose accounts' usage the
// Ledger knows from its own last batch is one round trip, a
// compare-and-swap that locks the accounts and writes only if their usage
// is still the one the batch was checked against, and commits by itself:
// one statement on PostgreSQL, one anonymous compound statement on
// MariaDB (casbatch.go). MySQL, which has no such statement, takes the
// locked path.
//
// # Storage
//
// The ledger lives in tables prefixed dpproxy_ (so it may share the backend's
// database): dpproxy_meta holds the schema version (Open upgrades versions
// 1 and 2 in place, leaving tombstones under the names of the tables it
// moves, so that older binaries still running fail: schema.go),
// dpproxy_accounts_v3 the stored limits and totals,
// dpproxy_reservations one row per reservation for auditors (see History) with dpproxy_reservation_accounts indexing it by account, and
// dpproxy_state_v3 a small key-value store for mechanisms that keep
// state next to the ledger (PutState, GetState, and SwapState, the
// compare-and-swap through which a shared state has one writer;
// SwapStates swaps several keys in one transaction, so that a state
// changes only while its writer's lease, stored under another key, is
// still the writer's; Reservation.CancelIf cancels only together with a
// swap, so that a claim is freed only by a creation that still holds its
// lease). CarryOver adds an account's usage to another account once, recording
// that it did in dpproxy_state_v3. Names are compared byte for byte (on
// MySQL/MariaDB they are VARBINARY: a VARCHAR compares with PAD SPACE).
package budget
