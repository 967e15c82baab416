package proxy

import (
	"context"

	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/exec"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// query answers a grouped or post-processed query (sqlrewrite.Query),
// holding its answer's reservation at the answer gate (holdAnswer) until
// it is written.
func (s *Session) query(ctx context.Context, q *sqlrewrite.Query) (*Result, error) {
	qp, err := s.engine.planner.PlanQuery(q, s.settings())
	if err != nil && q.FromLess != "" && dperr.KindOf(err) == dperr.Unsupported {
		// Constants post-processing does not compare (a collation it does
		// not implement): the catalog engine's answer, as before.
		return s.catalogQuery(ctx, q.FromLess, s.selectLimit(q))
	}
	if err != nil {
		return nil, err
	}
	if q.FromLess != "" {
		out, err := exec.RunConstants(qp)
		if err != nil {
			return nil, err
		}
		s.setWarnings(out.Warnings)
		return answer(out)
	}
	if qp.Base != nil {
		// Without keys the base plan runs as a plain statement, synopses
		// and all; with keys it builds none (grouped plans).
		if err := s.withinCap(ctx, qp.Base); err != nil {
			return nil, err
		}
	}
	// The answer is built whole and held until written: its memory is
	// reserved before its budget.
	if err := s.holdAnswer(ctx, qp); err != nil {
		return nil, err
	}
	out, err := s.engine.executor.RunQuery(ctx, s.user, qp, s.source)
	if err != nil {
		return nil, err
	}
	s.engine.queries.Add(1)
	s.setWarnings(out.Warnings)
	return answer(out)
}
