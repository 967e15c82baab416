package proxy

import "fmt"

// Bounds of the memory spent parsing. TiDB's parser allocates about 250
// to 500 bytes per byte of text (a refused 255 KiB IN list or FROM-less
// SELECT 1,1,... took 60 to 130 MB, a 4 MiB packet of nested operators
// 1.9 GB), so a statement's parse is weighed by its length: a statement
// longer than gatedStatementBytes waits until the text being parsed,
// process-wide, fits in parseBudgetBytes and the user's in
// userParseBytes. A statement longer than either counts as the whole of
// it (one 4 MiB statement parses alone). Statements of BI tools are
// shorter than gatedStatementBytes and never wait.
const (
	gatedStatementBytes = 16 << 10
	parseBudgetBytes    = 1 << 20
	userParseBytes      = 256 << 10
)

// largeStatementBytes is the length above which a statement is parsed only
// once, for its execution: a prepared statement's text that long is not
// described, relabeled or read again as a zero-row probe.
const largeStatementBytes = 256 << 10

// newParseGate returns the gate of parses (see gatedStatementBytes): a
// byteGate of parseBudgetBytes of text, process-wide, and userParseBytes
// per user, that statements of at most gatedStatementBytes pass freely.
func newParseGate() *byteGate {
	return newByteGate(gatedStatementBytes, parseBudgetBytes, userParseBytes,
		fmt.Sprintf("statement waited %s for memory to parse it, held by the parses of other long statements (over %d KiB, %d KiB at once, %d KiB per user); retry, or send shorter statements", gateWait, gatedStatementBytes>>10, parseBudgetBytes>>10, userParseBytes>>10),
		fmt.Sprintf("statement timed out waiting for the parses of other long statements (over %d KiB)", gatedStatementBytes>>10))
}
