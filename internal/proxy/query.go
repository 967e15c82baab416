package proxy

import (
	"context"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// query answers a grouped or post-processed query (sqlrewrite.Query).
func (s *Session) query(ctx context.Context, q *sqlrewrite.Query) (*Result, error) {
	qp, err := s.engine.planner.PlanQuery(q, s.settings())
	if err != nil {
		return nil, err
	}
	if qp.Base != nil {
		// Without keys the base plan runs as a plain statement, synopses
		// and all; with keys it builds none (grouped plans).
		if err := s.withinCap(ctx, qp.Base); err != nil {
			return nil, err
		}
	}
	out, err := s.engine.executor.RunQuery(ctx, s.user, qp, s.source)
	if err != nil {
		return nil, err
	}
	s.engine.queries.Add(1)
	s.setWarnings(out.Warnings)
	return answer(out)
}
