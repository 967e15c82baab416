package planner

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// textColl is the collation a text datum compares in, and whether it is a
// column's: MySQL's IMPLICIT coercibility, which a released text key has
// (the collation dpproxy declares for its column, columnCollation), and
// CONCAT of one. Text of a
// literal, a number made text (CONCAT, CAST AS CHAR) and the labels of a
// CASE of tiers has the session's collation_connection (COERCIBLE). Two
// texts compare in the column's collation when either has one, else in
// the connection's. A choice (IF, CASE, COALESCE, IFNULL, NULLIF) keeps the
// collation of the value it returns, where MySQL gives it the column's
// when any of its values has one: the two differ only for a literal
// chosen beside a key, compared with another literal, under a connection
// collation other than the column's.
type textColl struct {
	c      collation
	column bool
}

// Truncation is MySQL's 1292 "Truncated incorrect <Type> value:
// '<Value>'": text read as a number (compared with one, in arithmetic, as
// a condition) that is not a number as a whole. Its longest numeric
// prefix is read (leading spaces, a sign, digits with a point, an
// exponent), 0 without one.
type Truncation struct {
	Value string
	// Type is DOUBLE, DECIMAL (text compared with an integer, as MariaDB
	// names it) or INTEGER (CAST AS SIGNED or UNSIGNED, castText).
	Type string
	// Note marks text whose rest after the number is only spaces, which
	// MySQL reports at level Note; any other rest is a Warning.
	Note bool
}

// The levels of parseNumber's truncation.
const (
	wholeNumber = iota
	trailingSpaces
	truncated
)

// parseNumber reads text as MySQL converts a string to a DOUBLE: the
// longest prefix of the form [spaces][+|-]digits[.digits][e[+|-]digits]
// (digits before or after the point), 0 when there is none; a value beyond
// DOUBLE's range is its largest value of the sign. level says what was
// left: nothing, only spaces, or more (or an overflow).
func parseNumber(s string) (x float64, level int) {
	isSpace := func(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }
	digits := func(i int) int {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i
	}
	start := 0
	for start < len(s) && isSpace(s[start]) {
		start++
	}
	i := start
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	intEnd := digits(i)
	end, mantissa := intEnd, intEnd > i
	if end < len(s) && s[end] == '.' {
		if fracEnd := digits(end + 1); fracEnd > end+1 || mantissa {
			end, mantissa = fracEnd, true
		}
	}
	if !mantissa {
		return 0, truncated
	}
	if end < len(s) && (s[end] == 'e' || s[end] == 'E') {
		j := end + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if expEnd := digits(j); expEnd > j {
			end = expEnd
		}
	}
	x, err := strconv.ParseFloat(s[start:end], 64)
	level = wholeNumber
	for _, c := range []byte(s[end:]) {
		if !isSpace(c) {
			level = truncated
			break
		}
		level = trailingSpaces
	}
	if err != nil { // out of range: ParseFloat gives ±Inf
		x, level = math.Copysign(math.MaxFloat64, x), truncated
	}
	return x, level
}

// readNumber counts the truncation of text d read as a number of type
// typ (DOUBLE, DECIMAL, INTEGER); other datums read as numbers silently.
func (w *Warnings) readNumber(d Datum, typ string) {
	if w == nil || d.Null || !d.IsText {
		return
	}
	if _, level := parseNumber(d.Str); level != wholeNumber {
		w.Truncations = append(w.Truncations, Truncation{Value: d.Str, Type: typ, Note: level == trailingSpaces})
	}
}

// readTruth counts the truncation of text read as a condition (IF, CASE
// WHEN, AND, OR, HAVING), which MySQL reads as a DOUBLE.
func (w *Warnings) readTruth(d Datum) { w.readNumber(d, "DOUBLE") }

// numericArgs are the operators and functions that read every argument as
// a number (a DOUBLE in MySQL's message): arithmetic, logic, the numeric
// functions.
var numericArgs = map[string]bool{
	"neg": true, "+": true, "-": true, "*": true, "/": true, "div": true, "%": true,
	"not": true, "xor": true, "istrue": true, "isfalse": true,
	"round": true, "truncate": true, "floor": true, "ceil": true, "abs": true, "sign": true, "power": true,
	"sqrt": true, "exp": true, "ln": true, "log": true, "log10": true, "log2": true, "cast-real": true, "cast-float": true,
}

// comparisons are the operators that compare their two arguments.
var comparisons = map[string]bool{"=": true, "<>": true, "<": true, "<=": true, ">": true, ">=": true, "<=>": true, "nullif": true}

// readArgs counts the truncations of the text arguments op reads as
// numbers (MySQL's 1292): every one of arithmetic, logic and numeric
// functions; a text compared with a number (=, NULLIF, IN's pairs), or
// with BETWEEN, GREATEST or LEAST any text of arguments not all text.
// Comparisons with NULL compare nothing.
func (w *Warnings) readArgs(op string, a []Datum) {
	if w == nil {
		return
	}
	compared := func(x, y Datum) {
		if x.Null || y.Null || x.IsText == y.IsText {
			return
		}
		if x.IsText {
			x, y = y, x
		}
		w.readNumber(y, comparedAs(x.Int))
	}
	switch {
	case numericArgs[op]:
		for _, d := range a {
			w.readNumber(d, "DOUBLE")
		}
	case comparisons[op]:
		compared(a[0], a[1])
	case op == "in":
		for _, v := range a[1:] {
			compared(a[0], v)
			if !a[0].Null && !v.Null && compareValues(a[0], v) == 0 {
				break
			}
		}
	case op == "between", op == "greatest", op == "least":
		if slices.ContainsFunc(a, func(d Datum) bool { return d.Null }) || !mixed(a) {
			return
		}
		ints := !slices.ContainsFunc(a, func(d Datum) bool { return !d.IsText && !d.Int })
		if op != "between" {
			ints = false
		}
		for _, d := range a {
			w.readNumber(d, comparedAs(ints))
		}
	}
}

// comparedAs is the type MySQL names when it reads text compared with a
// number: DECIMAL beside an integer (MariaDB), DOUBLE otherwise.
func comparedAs(integer bool) string {
	if integer {
		return "DECIMAL"
	}
	return "DOUBLE"
}

// mixed reports whether some argument is a number: then BETWEEN, GREATEST
// and LEAST compare them all as numbers.
func mixed(a []Datum) bool {
	return slices.ContainsFunc(a, func(d Datum) bool { return !d.Null && !d.IsText })
}

// literalText marks d, when it is text other than a date, as text in the
// session's collation_connection (a literal's, COERCIBLE).
func (w *Warnings) literalText(d Datum) Datum {
	if d.IsText && d.Temporal == "" && w != nil {
		d.coll = textColl{c: w.conn}
	}
	return d
}

// keyType is key i's type where its bucketing fixes it (bucketType), 0
// otherwise.
func (w *Warnings) keyType(i int) ResultType {
	if w == nil || i >= len(w.keyTypes) {
		return 0
	}
	return w.keyTypes[i]
}

// keyText marks d, the value of key i, when it is text other than a date:
// a key of a column's values compares in the column's collation; a CASE of
// tiers' labels are literals.
func (w *Warnings) keyText(d Datum, i int) Datum {
	if !d.IsText || d.Temporal != "" || w == nil {
		return d
	}
	if i < len(w.literalKeys) && w.literalKeys[i] {
		return w.literalText(d)
	}
	d.coll = textColl{c: w.column, column: true}
	return d
}

// madeText is the collation of text made from the arguments (CONCAT): a
// column's when one of them has one, else the connection's.
func (w *Warnings) madeText(args []Datum) textColl {
	for _, d := range args {
		if d.IsText && d.coll.column {
			return d.coll
		}
	}
	if w == nil {
		return textColl{}
	}
	return textColl{c: w.conn}
}

// collationOf is the collation texts compare in: the first column's
// among them, else the first one's (literals all have the connection's).
func collationOf(ds ...Datum) collation {
	for _, d := range ds {
		if d.IsText && d.coll.column {
			return d.coll.c
		}
	}
	for _, d := range ds {
		if d.IsText {
			return d.coll.c
		}
	}
	return collationBinNoPad
}

// compareText compares two texts in their collation (collationOf); a date
// or timestamp's text compares byte by byte, as before any collation.
func compareText(a, b Datum) int {
	if a.Temporal != "" || b.Temporal != "" {
		return strings.Compare(a.Str, b.Str)
	}
	return collationOf(a, b).compare(a.Str, b.Str)
}

// extreme is GREATEST (greatest) or LEAST of non-NULL arguments, as MySQL
// compares them: as numbers when one of them is a number, else as texts in
// their collation (a column's when any has one); the first of equals.
// Of text (not a date) and numbers together it is the DOUBLE value of the
// extreme, as MariaDB's: LEAST('1.50', 2) is 1.5, GREATEST('07', 1) 7.
func extreme(a []Datum, greatest bool) Datum {
	numeric := mixed(a)
	double := numeric && slices.ContainsFunc(a, func(d Datum) bool { return d.IsText && d.Temporal == "" })
	coll := collationOf(a...)
	best := a[0]
	for _, d := range a[1:] {
		var c int
		switch {
		case numeric:
			c = cmp.Compare(number(d), number(best))
		case d.Temporal != "" || best.Temporal != "":
			c = strings.Compare(d.Str, best.Str)
		default:
			c = coll.compare(d.Str, best.Str)
		}
		if greatest && c > 0 || !greatest && c < 0 {
			best = d
		}
	}
	if double {
		return numberOf(number(best), false, true)
	}
	return best
}

// evalPredicate evaluates BETWEEN, IN, IS TRUE, IS FALSE and LIKE (ok),
// with MySQL's NULLs: IN is true when the subject equals a value (as =
// compares the pair), else NULL when the subject or a value is NULL;
// BETWEEN is low <= x AND x <= high, comparing the three as numbers when
// one is a number, else as texts (of a column's collation when one has
// it), NULL as AND makes it; IS TRUE and IS FALSE are never NULL; LIKE
// matches the subject's text (a number's as CONCAT makes it) in the
// collation of the pair, NULL when either is. ok is false for any other
// operator.
func evalPredicate(op string, a []Datum, w *Warnings) (d Datum, ok bool) {
	switch op {
	case "istrue":
		return boolean(!a[0].Null && truth(a[0])), true
	case "isfalse":
		return boolean(!a[0].Null && !truth(a[0])), true
	case "in":
		if a[0].Null {
			return Datum{Null: true}, true
		}
		null := false
		for _, v := range a[1:] {
			if v.Null {
				null = true
			} else if compareValues(a[0], v) == 0 {
				return boolean(true), true
			}
		}
		if null {
			return Datum{Null: true}, true
		}
		return boolean(false), true
	case "between":
		x := a[0]
		if x.Null {
			return Datum{Null: true}, true
		}
		numeric, coll := mixed(a), collationOf(a...)
		compare := func(p, q Datum) int {
			switch {
			case numeric:
				return cmp.Compare(number(p), number(q))
			case p.Temporal != "" || q.Temporal != "":
				return strings.Compare(p.Str, q.Str)
			}
			return coll.compare(p.Str, q.Str)
		}
		atLeast, atMost := Datum{Null: true}, Datum{Null: true}
		if !a[1].Null {
			atLeast = boolean(compare(x, a[1]) >= 0)
		}
		if !a[2].Null {
			atMost = boolean(compare(x, a[2]) <= 0)
		}
		d, _ := evalOp("and", []Datum{atLeast, atMost}, w)
		return d, true
	case "like":
		if a[0].Null || a[1].Null {
			return Datum{Null: true}, true
		}
		escape := '\\'
		if len(a) > 2 {
			escape = -1 // ESCAPE '': none
			for _, r := range text(a[2]) {
				escape = r
				break
			}
		}
		subject, pattern := w.asText(a[0]), w.asText(a[1])
		return boolean(collationOf(subject, pattern).like(subject.Str, pattern.Str, escape)), true
	}
	return Datum{}, false
}

// asText is d as text, as CONCAT makes a number text (in the connection's
// collation); a date's text compares in the connection's too.
func (w *Warnings) asText(d Datum) Datum {
	if !d.IsText || d.Temporal != "" {
		return Datum{Str: text(d), IsText: true, coll: w.madeText(nil)}
	}
	return d
}

// distinctKey is a key of a datum for DISTINCT, COUNT(DISTINCT) and
// PARTITION BY: equal for datums MySQL takes as equal, text by its
// collation's sort key (so 'a' and 'A' of a key are one value).
func distinctKey(d Datum) string {
	switch {
	case d.Null:
		return "n"
	case d.IsText && d.Temporal == "":
		return "t" + collationOf(d).key(d.Str)
	case d.IsText:
		return "d" + d.Str
	}
	return fmt.Sprint("x", d.Num)
}

// distinctKeys is distinctKey of every datum of a row.
func distinctKeys(ds []Datum) string {
	var b strings.Builder
	for _, d := range ds {
		k := distinctKey(d)
		fmt.Fprintf(&b, "%d:%s", len(k), k)
	}
	return b.String()
}
