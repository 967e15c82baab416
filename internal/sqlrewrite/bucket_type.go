package sqlrewrite

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// LabelKind is the MariaDB type of a bucket's label (Bucketing.Type).
type LabelKind uint8

// The label kinds; LabelUnset leaves the type to the label values (a
// bucket of a row expression, a rounded key).
const (
	LabelUnset LabelKind = iota
	// LabelBigint is an integer: x DIV w, and times an integer w.
	LabelBigint
	// LabelDecimal is DECIMAL(Precision, Scale): FLOOR of an exact
	// quotient (an integer column by integer or decimal literals), times
	// and plus such literals, or x DIV w times a decimal w.
	LabelDecimal
	// LabelDouble is a DOUBLE of Scale fixed decimals (31 for none):
	// anything of a DOUBLE column or a float literal.
	LabelDouble
)

// LabelType is the MariaDB 10.11 type of a bucket label, by its rules for
// the expression over the column's type (BIGINT for integer, DOUBLE for
// real) and the literals as written: FLOOR(b / 0.3) * 0.3 of a BIGINT b
// is DECIMAL(23,1) (-22.2, 3.0), FLOOR(d / 0.3) * 0.3 of a DOUBLE d a
// DOUBLE of 1 decimal (-7.199999999999999 written -7.2), FLOOR(b / 5)
// DECIMAL(20,0), b DIV 10 BIGINT.
type LabelType struct {
	Kind             LabelKind
	Precision, Scale int
}

// notFixedDecimals is MariaDB's NOT_FIXED_DEC, a DOUBLE's decimals that
// fix none.
const notFixedDecimals = 31

// mariaType is an operand's type as MariaDB derives result types: an
// integer or DECIMAL of precision p and scale s, or a DOUBLE of s decimals.
type mariaType struct {
	kind LabelKind
	p, s int
}

// literalType is the type MariaDB gives a number literal: an integer of
// its digits, a DECIMAL of its digits (0.25 is DECIMAL(3,2)), a float
// literal (no decimal text) a DOUBLE of no fixed decimals.
func literalType(e ast.ExprNode) mariaType {
	text := strings.TrimPrefix(decimalLiteral(e), "-")
	if text == "" {
		return mariaType{LabelDouble, 0, notFixedDecimals}
	}
	whole, frac, point := strings.Cut(text, ".")
	if !point {
		return mariaType{LabelBigint, max(len(whole), 1), 0}
	}
	return mariaType{LabelDecimal, max(len(whole), 1) + len(frac), len(frac)}
}

// decimals is the decimals MariaDB counts of t in a DOUBLE computed
// from it: a DECIMAL's scale, an integer's 0, a DOUBLE's own.
func (t mariaType) decimals() int { return t.s }

func doubleOf(s int) mariaType { return mariaType{LabelDouble, 0, min(s, notFixedDecimals)} }

func decimalOf(p, s int) mariaType {
	return mariaType{LabelDecimal, min(p, 65), min(s, 38)}
}

// additive is a + b and a - b.
func additive(a, b mariaType) mariaType {
	switch {
	case a.kind == LabelDouble || b.kind == LabelDouble:
		return doubleOf(max(a.decimals(), b.decimals()))
	case a.kind == LabelBigint && b.kind == LabelBigint:
		return mariaType{LabelBigint, max(a.p, b.p) + 1, 0}
	}
	s := max(a.s, b.s)
	return decimalOf(max(a.p-a.s, b.p-b.s)+1+s, s)
}

// times is a * b.
func times(a, b mariaType) mariaType {
	switch {
	case a.kind == LabelDouble || b.kind == LabelDouble:
		return doubleOf(max(a.decimals(), b.decimals()))
	case a.kind == LabelBigint && b.kind == LabelBigint:
		return mariaType{LabelBigint, a.p + b.p, 0}
	}
	return decimalOf(a.p+b.p, a.s+b.s)
}

// quotient is a / b: a DECIMAL of 4 more decimals (MariaDB's
// div_precision_increment) and the divisor's scale more digits.
func quotient(a, b mariaType) mariaType {
	if a.kind == LabelDouble || b.kind == LabelDouble {
		return doubleOf(max(a.decimals(), b.decimals()) + 4)
	}
	return decimalOf(a.p+b.s+4, a.s+4)
}

// floorOf is FLOOR(a): of a DOUBLE a DOUBLE of no decimals; of a DECIMAL
// its whole digits (one more with a fraction), an integer up to 18
// digits, else DECIMAL(p, 0).
func floorOf(a mariaType) mariaType {
	switch a.kind {
	case LabelDouble:
		return doubleOf(0)
	case LabelBigint:
		return a
	}
	p := a.p - a.s
	if a.s > 0 {
		p++
	}
	p = max(p, 1)
	if p > 18 {
		return decimalOf(p, 0)
	}
	return mariaType{LabelBigint, p, 0}
}

// intDiv is a DIV b: an integer of a's whole digits (at most 21, a
// DOUBLE's), whose length MariaDB counts without a sign, so a digit fewer
// as a precision (b DIV 2.5 * 2.5 of a BIGINT b is DECIMAL(20,1)).
func intDiv(a mariaType) mariaType {
	whole := a.p - a.s
	if a.kind == LabelDouble {
		whole = 21
	}
	return mariaType{LabelBigint, min(whole, 21) - 1, 0}
}

// bucketLabelType is the type of the label of the bucket
// FLOOR((x - o1) / w) [* mult] [+ o2], or x DIV w [* mult], of a column
// that is a BIGINT when integer, else a DOUBLE; o1, mult and o2 nil when
// absent.
func bucketLabelType(integer, div bool, w, mult, o1, o2 ast.ExprNode) LabelType {
	x := mariaType{LabelBigint, 19, 0}
	if !integer {
		x = doubleOf(notFixedDecimals)
	}
	var t mariaType
	if div {
		t = intDiv(x)
	} else {
		if o1 != nil {
			x = additive(x, literalType(o1))
		}
		t = floorOf(quotient(x, literalType(w)))
	}
	if mult != nil {
		t = times(t, literalType(mult))
	}
	if o2 != nil {
		t = additive(t, literalType(o2))
	}
	if t.kind == LabelBigint {
		return LabelType{Kind: LabelBigint}
	}
	return LabelType{Kind: t.kind, Precision: t.p, Scale: t.s}
}

// roundedLabelType is MariaDB's type of the rounded key x (roundedKey) of
// a column: of a DOUBLE a DOUBLE of no decimals; of a BIGINT a BIGINT,
// but ROUND to tens or more a DECIMAL(20,0), one digit more than
// BIGINT's. Other keys (SIGN, MariaDB's INT, and those of other row
// expressions) are left to their labels.
func roundedLabelType(x *RowExpr) LabelType {
	if len(x.Args) == 0 || x.Args[0].Kind != RowColumn || x.Func == FuncSign {
		return LabelType{}
	}
	switch {
	case !x.Args[0].Integer:
		return LabelType{Kind: LabelDouble}
	case x.Func == FuncRound && x.Num < 0:
		return LabelType{Kind: LabelDecimal, Precision: 20}
	}
	return LabelType{Kind: LabelBigint}
}
