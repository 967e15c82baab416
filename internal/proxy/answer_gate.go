package proxy

import "fmt"

// Bounds of the private answers held at once. A grouped or post-processed
// answer (Session.query) is built whole in memory before it is sent, up
// to catalog.MaxResultBytes of cells (64 MiB, about 180 MB of RSS), and
// held until the client has read it, which a slow reader may spread over
// timeouts.write plus the answer's bytes at 64 KiB/s (package wire). So
// each such answer first reserves its plan's public bound on its size
// (planner.QueryPlan.ResultBound: the statement and the configuration,
// never the data), before any budget is reserved or any data read, and
// holds it until the answer has been written, or its write failed, or the
// connection closed (Session.Answered, Session.Close): at most
// answerBudgetBytes of bounds process-wide and userAnswerBytes of one
// user's (answers of at most ungatedAnswerBytes, BI tools' dashboards,
// never wait). A wait is in order, and ends with the statement (1317,
// 3024) or after gateWait (1205): see byteGate.
const (
	ungatedAnswerBytes = 64 << 10
	answerBudgetBytes  = 1 << 30
	userAnswerBytes    = 256 << 20
)

// newAnswerGate returns the gate of answers (see ungatedAnswerBytes).
func newAnswerGate() *byteGate {
	return newByteGate(ungatedAnswerBytes, answerBudgetBytes, userAnswerBytes,
		fmt.Sprintf("statement waited %s for memory to hold its answer, held by answers not yet read by their clients (%d MiB at once, %d MiB per user); nothing was charged; retry, read answers faster, or ask for fewer groups, fewer columns or shorter strings", gateWait, answerBudgetBytes>>20, userAnswerBytes>>20),
		"statement timed out waiting for memory to hold its answer, held by answers not yet read by their clients; nothing was charged")
}
