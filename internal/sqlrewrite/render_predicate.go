package sqlrewrite

import (
	"errors"
	"fmt"
)

// predicate renders a Predicate with every node in parentheses, so that it
// can be joined to other conditions with AND: a leaf is "(condition)", And
// and Or are "(a AND b ...)" and "(a OR b ...)", Not is "(NOT a)". NOT in
// SQL keeps NULLs out on both sides, as the Predicate contract says.
// Never is "(1 = 0)", which every dialect reads as FALSE (PostgreSQL takes
// no integer as a boolean).
func (r *renderer) predicate(p *Predicate) (string, error) {
	if p == nil {
		return "", errors.New("sqlrewrite: nil predicate node")
	}
	switch p.Op {
	case Never:
		if p.Leaf != nil || len(p.Args) > 0 {
			return "", errors.New("sqlrewrite: Never takes no condition and no arguments")
		}
		return "(1 = 0)", nil
	case Leaf:
		if p.Leaf == nil || len(p.Args) > 0 {
			return "", errors.New("sqlrewrite: a leaf predicate needs a condition and no arguments")
		}
		c, err := r.condition(*p.Leaf)
		if err != nil {
			return "", err
		}
		return "(" + c + ")", nil
	case Not:
		if len(p.Args) != 1 || p.Leaf != nil {
			return "", errors.New("sqlrewrite: NOT needs exactly one argument")
		}
		a, err := r.predicate(p.Args[0])
		if err != nil {
			return "", err
		}
		return "(NOT " + a + ")", nil
	case And, Or:
		if len(p.Args) < 2 || p.Leaf != nil {
			return "", errors.New("sqlrewrite: AND and OR need two or more arguments")
		}
		args := make([]string, len(p.Args))
		for i, a := range p.Args {
			var err error
			if args[i], err = r.predicate(a); err != nil {
				return "", err
			}
		}
		op := " AND "
		if p.Op == Or {
			op = " OR "
		}
		return "(" + joinConditions(args, op) + ")", nil
	}
	return "", fmt.Errorf("sqlrewrite: unknown predicate operator %d", int(p.Op))
}
