package sqlrewrite

import (
	"fmt"

	"github.com/dpproxy/dpproxy/internal/dperr"
)

// What dpproxy answers, quoted in every refusal so that the analyst learns
// what to write instead.
const (
	supportedQueries = "dpproxy answers only SELECT of aggregates COUNT, SUM, AVG, VARIANCE, STDDEV, MEDIAN, PERCENTILE_CONT over declared columns with an AND of range/equality predicates"
	supportedWhere   = "WHERE must be an AND of col BETWEEN a AND b, col <, <=, >, >= or = constant, and col IN (constants), on declared columns"
	supportedConst   = "SELECT without FROM may list only literals, @@system and @user variables, and the functions DATABASE(), USER(), CURRENT_USER(), VERSION(), CONNECTION_ID(), NOW(), LAST_INSERT_ID(), dp_remaining_epsilon() and dp_remaining_delta()"
	supportedSet     = "SET takes constants: numbers, strings, NULL or DEFAULT"
)

// refuse is an Unsupported error: what is not supported, then what is.
func refuse(what, supported string) error {
	return dperr.New(dperr.Unsupported, "not supported: %s; %s", what, supported)
}

// refuseQuery is refuse with the general description of dpproxy's queries.
func refuseQuery(format string, args ...any) error {
	return refuse(fmt.Sprintf(format, args...), supportedQueries)
}

// refuseWhere is refuse with the description of supported predicates.
func refuseWhere(format string, args ...any) error {
	return refuse(fmt.Sprintf(format, args...), supportedWhere)
}
