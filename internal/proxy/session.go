package proxy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/exec"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// Session is one client connection's state. It is used by one goroutine at a time.
type Session struct {
	engine *Engine
	user   string
	connID uint32
	parser *sqlrewrite.Parser
	source noise.Source

	// The privacy settings; zero epsilon/delta mean the configured defaults.
	epsilon  float64
	delta    float64
	mechName string
	trim     float64

	userVars map[string]sqlrewrite.Value
	database string
	warnings []exec.Warning
}

// Close ends the session.
func (s *Session) Close() {}

// UseDatabase switches the current database (COM_INIT_DB and USE).
func (s *Session) UseDatabase(_ context.Context, name string) error {
	if !strings.EqualFold(name, Database) {
		return dperr.New(dperr.UnknownDatabase, "Unknown database '%s' (dpproxy serves database '%s')", name, Database)
	}
	s.database = Database
	return nil
}

// Execute runs one statement.
func (s *Session) Execute(ctx context.Context, query string) (*Result, error) {
	stmt, err := s.parser.Parse(query)
	if err != nil {
		s.setWarnings(errorWarning(err))
		return nil, err
	}
	res, err := s.execute(ctx, stmt)
	if err != nil {
		if dperr.KindOf(err) == dperr.Internal {
			// The cause may quote data-dependent detail: the log only.
			s.engine.log.Error("statement failed", "conn", s.connID, "user", s.user, "err", err, "cause", errors.Unwrap(err))
		}
		s.setWarnings(errorWarning(err))
		return nil, err
	}
	return res, nil
}

func (s *Session) execute(ctx context.Context, stmt sqlrewrite.Statement) (*Result, error) {
	switch st := stmt.(type) {
	case *sqlrewrite.Select:
		return s.selectPrivate(ctx, st)
	case *sqlrewrite.Query:
		return s.query(ctx, st)
	case *sqlrewrite.Explain:
		return s.explain(st)
	case *sqlrewrite.SetVariables:
		return s.set(st)
	case *sqlrewrite.ShowWarnings:
		return s.showWarnings(st), nil
	case *sqlrewrite.Show:
		return s.show(st)
	case *sqlrewrite.ConstantSelect:
		return s.constantSelect(ctx, st)
	case *sqlrewrite.Use:
		if err := s.UseDatabase(ctx, st.Database); err != nil {
			return nil, err
		}
		s.setWarnings(nil)
		return &Result{}, nil
	case *sqlrewrite.Empty:
		s.setWarnings(nil)
		return &Result{}, nil
	}
	return nil, dperr.New(dperr.Internal, "internal error: unhandled statement %T", stmt)
}

// settings returns the privacy settings of the next statement.
func (s *Session) settings() planner.Settings {
	p := s.engine.cat.Privacy
	st := planner.Settings{Epsilon: p.DefaultEpsilon, Delta: p.DefaultDelta, Mechanism: s.mechName, Trim: planner.DefaultTrim}
	if s.epsilon > 0 {
		st.Epsilon = s.epsilon
	}
	if s.delta > 0 {
		st.Delta = s.delta
	}
	if s.trim > 0 {
		st.Trim = s.trim
	}
	return st
}

func (s *Session) selectPrivate(ctx context.Context, sel *sqlrewrite.Select) (*Result, error) {
	plan, err := s.engine.planner.Plan(sel, s.settings())
	if err != nil {
		return nil, err
	}
	out, err := s.engine.executor.Run(ctx, s.user, plan, s.source)
	if err != nil {
		return nil, err
	}
	s.engine.queries.Add(1)
	s.setWarnings(out.Warnings)
	return &Result{Columns: out.Columns, Rows: out.ResultRows(), Warnings: uint16(len(out.Warnings))}, nil
}

func (s *Session) explain(ex *sqlrewrite.Explain) (*Result, error) {
	if ex.Query != nil {
		qp, err := s.engine.planner.PlanQuery(ex.Query, s.settings())
		if err != nil {
			return nil, err
		}
		s.setWarnings(nil)
		cols, rows := qp.Explain()
		return &Result{Columns: cols, Rows: rows}, nil
	}
	plan, err := s.engine.planner.Plan(ex.Select, s.settings())
	if err != nil {
		return nil, err
	}
	s.setWarnings(nil)
	cols, rows := plan.Explain()
	return &Result{Columns: cols, Rows: rows}, nil
}

// set applies SET: dp_* user variables are privacy settings, validated here;
// other user variables are remembered; system variables are accepted and ignored.
func (s *Session) set(st *sqlrewrite.SetVariables) (*Result, error) {
	p := s.engine.cat.Privacy
	// Validate everything first so a bad assignment changes nothing.
	type change func()
	var changes []change
	for _, a := range st.Assignments {
		if a.System {
			continue
		}
		a := a
		switch a.Name {
		case "dp_epsilon":
			if a.Default {
				changes = append(changes, func() { s.epsilon = 0 })
				continue
			}
			v, err := number(a)
			if err != nil {
				return nil, err
			}
			if !(v > 0) || v > p.MaxEpsilon {
				return nil, dperr.New(dperr.InvalidValue, "@dp_epsilon must be in (0, %g], got %g", p.MaxEpsilon, v)
			}
			changes = append(changes, func() { s.epsilon = v })
		case "dp_delta":
			if a.Default {
				changes = append(changes, func() { s.delta = 0 })
				continue
			}
			v, err := number(a)
			if err != nil {
				return nil, err
			}
			if !(v > 0) || v > p.MaxDelta {
				return nil, dperr.New(dperr.InvalidValue, "@dp_delta must be in (0, %g], got %g", p.MaxDelta, v)
			}
			changes = append(changes, func() { s.delta = v })
		case "dp_trim":
			if a.Default {
				changes = append(changes, func() { s.trim = 0 })
				continue
			}
			v, err := number(a)
			if err != nil {
				return nil, err
			}
			if !(v > 0 && v < 1) {
				return nil, dperr.New(dperr.InvalidValue, "@dp_trim is the total fraction the trimmed mean drops, in (0, 1), got %g", v)
			}
			changes = append(changes, func() { s.trim = v })
		case "dp_mechanism":
			name := "auto"
			if !a.Default {
				if !a.Value.IsText {
					return nil, dperr.New(dperr.InvalidValue, "@dp_mechanism takes a name in quotes: %s", strings.Join(s.engine.planner.MechanismNames(), ", "))
				}
				name = strings.ToLower(a.Value.Str)
			}
			if !s.engine.planner.ValidMechanism(name) {
				return nil, dperr.New(dperr.InvalidValue, "unknown mechanism '%s'; valid: %s", a.Value.Str, strings.Join(s.engine.planner.MechanismNames(), ", "))
			}
			changes = append(changes, func() { s.mechName = name })
		default:
			if strings.HasPrefix(a.Name, "dp_") {
				return nil, dperr.New(dperr.InvalidValue, "unknown dpproxy setting @%s; the settings are @dp_epsilon, @dp_delta, @dp_mechanism and @dp_trim", a.Name)
			}
			changes = append(changes, func() { s.userVars[a.Name] = a.Value })
		}
	}
	for _, c := range changes {
		c()
	}
	s.setWarnings(nil)
	return &Result{}, nil
}

func number(a sqlrewrite.Assignment) (float64, error) {
	if a.Value.IsText || math.IsNaN(a.Value.Num) || math.IsInf(a.Value.Num, 0) {
		return 0, dperr.New(dperr.InvalidValue, "@%s takes a number", a.Name)
	}
	return a.Value.Num, nil
}

func (s *Session) setWarnings(w []exec.Warning) { s.warnings = w }

func (s *Session) showWarnings(st *sqlrewrite.ShowWarnings) *Result {
	rows := [][]any{}
	for _, w := range s.warnings {
		if !st.Errors || w.Level == "Error" {
			rows = append(rows, []any{w.Level, int64(w.Code), w.Message})
		}
	}
	if st.Limit != nil {
		start := min(st.Limit.Offset, uint64(len(rows)))
		rows = rows[start:min(start+st.Limit.Count, uint64(len(rows)))]
	}
	// SHOW WARNINGS does not clear the warnings it shows.
	return &Result{Columns: []string{"Level", "Code", "Message"}, Rows: rows}
}

// errorWarning is what SHOW WARNINGS lists after a failed statement, as MySQL does.
func errorWarning(err error) []exec.Warning {
	code, _ := dperr.KindOf(err).Code()
	return []exec.Warning{{Level: "Error", Code: code, Message: err.Error()}}
}

// remaining returns the user's remaining budget.
func (s *Session) remaining(ctx context.Context) (eps, delta float64, err error) {
	c, err := s.engine.ledger.Remaining(ctx, catalog.UserAccount(s.user))
	if err != nil {
		return 0, 0, dperr.Wrap(dperr.Internal, err, "internal error: budget ledger unavailable")
	}
	return c.Epsilon, c.Delta, nil
}

func (s *Session) String() string { return fmt.Sprintf("session %d (%s)", s.connID, s.user) }
