package catalogdb

import (
	"fmt"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// temporalNumber is a DATETIME(p) or TIMESTAMP(p) of p > 0 operand of
// arithmetic with a number, read as MariaDB reads it there: the DECIMAL
// YYYYMMDDhhmmss.f of p digits (FROM_UNIXTIME(1.5) + 0 is
// 19700101000001.5); go-mysql-server dropped the fraction
// (19700101000001).
type temporalNumber struct {
	*expression.UnaryExpression
	precision int
}

var _ sql.Expression = temporalNumber{}

// fractionalTemporal is the precision of t when it is a DATETIME(p) or
// TIMESTAMP(p) of p > 0, else 0.
func fractionalTemporal(t sql.Type) int {
	if !types.IsDatetimeType(t) && !types.IsTimestampType(t) {
		return 0
	}
	return t.(sql.DatetimeType).Precision()
}

// numericTemporals reads a fractional DATETIME or TIMESTAMP operand of
// a +, - or * with a number as temporalNumber; nil when a has none.
func numericTemporals(a *expression.Arithmetic) sql.Expression {
	switch a.Op {
	case "+", "-", "*":
	default:
		return nil
	}
	l, r := a.LeftChild, a.RightChild
	_, lInterval := l.(*expression.Interval)
	_, rInterval := r.(*expression.Interval)
	switch {
	case lInterval || rInterval: // DATE_ADD's d + INTERVAL n DAY
		return nil
	case fractionalTemporal(l.Type()) > 0 && types.IsNumber(r.Type()):
		l = temporalNumber{&expression.UnaryExpression{Child: l}, fractionalTemporal(l.Type())}
	case fractionalTemporal(r.Type()) > 0 && types.IsNumber(l.Type()):
		r = temporalNumber{&expression.UnaryExpression{Child: r}, fractionalTemporal(r.Type())}
	default:
		return nil
	}
	return expression.NewArithmetic(l, r, a.Op)
}

// Eval implements sql.Expression.
func (n temporalNumber) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := n.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	t, ok := v.(time.Time)
	if !ok {
		return nil, fmt.Errorf("catalogdb: a %T as a DATETIME", v)
	}
	digits := fmt.Sprintf("%s.%06d", t.Format("20060102150405"), t.Nanosecond()/1000)
	return decimal.RequireFromString(digits[:len(digits)-6+n.precision]), nil
}

// Type implements sql.Expression: DECIMAL(14 + p, p).
func (n temporalNumber) Type() sql.Type {
	return types.MustCreateDecimalType(uint8(14+n.precision), uint8(n.precision))
}

// String implements sql.Expression.
func (n temporalNumber) String() string { return n.Child.String() }

// WithChildren implements sql.Expression.
func (n temporalNumber) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(n, len(children), 1)
	}
	return temporalNumber{&expression.UnaryExpression{Child: children[0]}, n.precision}, nil
}
