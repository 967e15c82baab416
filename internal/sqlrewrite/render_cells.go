package sqlrewrite

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// cells renders a Cells fetch: one key per dimension, computed by a CASE
// that is NULL for a NULL or undeclared value, and the count per
// combination of keys, rows with a NULL key dropped:
//
//	SELECT k0, k1, COUNT(*) FROM (SELECT key0 AS k0, key1 AS k1 FROM t WHERE F) AS c
//	WHERE k0 IS NOT NULL AND k1 IS NOT NULL GROUP BY k0, k1
//
// A categorical key is CASE WHEN col = v0 THEN 0 WHEN col = v1 THEN 1 END
// (strings as bind arguments); a bucketed key is CASE WHEN NOT readable
// THEN NULL WHEN col < e1 THEN 0 … WHEN col < e_{k-1} THEN k-2 ELSE k-1 END,
// above maxLinearBuckets buckets a binary search of the same buckets
// (bucketSearch), so the ends clamp (readable as in Render; PostgreSQL's
// NaN, ordered above every number, falls in the last cell as clamp puts
// it at the upper bound);
// a tiered key is CASE WHEN NOT readable THEN NULL WHEN range0 THEN 0 …
// ELSE k END (THEN k for the unreadable values with UnreadableInElse, THEN
// k+1 with UnreadableInNull).
func (r *renderer) cells(f Fetch) (string, error) {
	dims := f.Cells.Dims
	if len(dims) == 0 {
		return "", errors.New("sqlrewrite: a cells fetch needs at least one dimension")
	}
	keys := make([]string, len(dims))
	names := make([]string, len(dims))
	notNull := make([]string, len(dims))
	for i, d := range dims {
		key, err := r.cellKey(d)
		if err != nil {
			return "", err
		}
		names[i] = "k" + strconv.Itoa(i)
		keys[i] = key + " AS " + names[i]
		notNull[i] = names[i] + " IS NOT NULL"
	}
	from, err := r.from(f, "")
	if err != nil {
		return "", err
	}
	group := strings.Join(names, ", ")
	return "SELECT " + group + ", COUNT(*) FROM (SELECT " + strings.Join(keys, ", ") + from + ") AS c WHERE " +
		strings.Join(notNull, " AND ") + " GROUP BY " + group, nil
}

// cellKey renders the index of one dimension.
func (r *renderer) cellKey(d CellDim) (string, error) {
	col, err := r.column(d.Column)
	if err != nil {
		return "", err
	}
	set := 0
	for _, n := range []int{len(d.Values), len(d.Edges), len(d.Tiers)} {
		if n > 0 {
			set++
		}
	}
	if d.Date != nil {
		if set != 0 {
			return "", fmt.Errorf("sqlrewrite: cell dimension %s needs exactly one of Values, Edges, Tiers and Date", d.Column)
		}
		return r.dateIndex(col, *d.Date)
	}
	if set != 1 {
		return "", fmt.Errorf("sqlrewrite: cell dimension %s needs exactly one of Values, Edges, Tiers and Date", d.Column)
	}
	var sb strings.Builder
	sb.WriteString("CASE")
	if len(d.Tiers) > 0 {
		// As SQL's CASE, on the readable values (an unreadable one has no
		// key, or the cell Unreadable says); each range compares the
		// column in its own type.
		unreadable := "NULL"
		switch d.Unreadable {
		case UnreadableInElse:
			unreadable = strconv.Itoa(len(d.Tiers))
		case UnreadableInNull:
			unreadable = strconv.Itoa(len(d.Tiers) + 1)
		}
		fmt.Fprintf(&sb, " WHEN NOT (%s) THEN %s", r.readable(col), unreadable)
		for i, rg := range d.Tiers {
			for _, e := range []float64{rg.Lower, rg.Upper} {
				if math.IsNaN(e) || math.IsInf(e, 0) {
					return "", fmt.Errorf("sqlrewrite: tiers of %s need finite ends", d.Column)
				}
			}
			c, err := r.rangeCondition(col, &rg)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(&sb, " WHEN %s THEN %d", c, i)
		}
		fmt.Fprintf(&sb, " ELSE %d END", len(d.Tiers))
		return sb.String(), nil
	}
	if len(d.Values) > 0 {
		for i, v := range d.Values {
			if v.IsText != d.Values[0].IsText {
				return "", fmt.Errorf("sqlrewrite: cell values of %s must be of one type", d.Column)
			}
			if v.Null {
				// The NULL group: the unreadable values (nullCondition's
				// rule); no equality holds on them, so its place in the
				// CASE does not matter.
				c, err := r.nullCondition(col, Condition{Column: d.Column, IsNull: true, Text: v.IsText})
				if err != nil {
					return "", err
				}
				fmt.Fprintf(&sb, " WHEN %s THEN %d", c, i)
				continue
			}
			lit, err := r.value(v)
			if err != nil {
				return "", err
			}
			operand := col
			switch {
			case d.Exact && v.IsText:
				operand = r.exactText(col)
			case d.Exact:
				// As Condition.Exact's filters compare it.
				if !ExactKey(v.Num) {
					return "", fmt.Errorf("sqlrewrite: exact key %g of %s is no integer below 2^53", v.Num, d.Column)
				}
				lit = integerLiteral(v.Num)
			}
			comparison := operand + " = " + lit
			if !v.IsText && !r.spec.typed {
				// As the value's filter reads it (readableNumber).
				comparison = r.readable(col) + " AND " + comparison
			}
			fmt.Fprintf(&sb, " WHEN %s THEN %d", comparison, i)
		}
		sb.WriteString(" END")
		return sb.String(), nil
	}
	if len(d.Edges) < 2 {
		return "", fmt.Errorf("sqlrewrite: cell dimension %s needs at least two edges", d.Column)
	}
	for i, e := range d.Edges {
		if math.IsNaN(e.Num) || math.IsInf(e.Num, 0) || e.Exact != "" && !validExact(e.Exact) || i > 0 && !d.Edges[i-1].Below(e) {
			return "", fmt.Errorf("sqlrewrite: edges of %s must be finite and strictly increasing", d.Column)
		}
	}
	// The column is compared in its own type, never cast (a cast can fail
	// on a huge NUMERIC); an unreadable value (Render) has no key.
	fmt.Fprintf(&sb, " WHEN NOT (%s) THEN NULL", r.readable(col))
	bucketSearch(&sb, col, d.Edges)
	sb.WriteString(" END")
	return sb.String(), nil
}

// maxLinearBuckets is the most buckets whose index bucketSearch renders
// as a linear ladder; more are searched by halves.
const maxLinearBuckets = 8

// bucketSearch writes, after a CASE's first WHENs, the WHENs and ELSE
// that give a readable value of col its bucket among the k = len(edges)-1
// buckets of the strictly increasing edges (bucket i is [edges[i],
// edges[i+1]), the first and last buckets clamping the values beyond the
// ends): the number of inner edges edges[1] … edges[k-1] the value is not
// below (a value below none of them, PostgreSQL's NaN included, is in
// bucket k-1). Up to maxLinearBuckets buckets it is the ladder
//
//	WHEN c < e_1 THEN 0 … WHEN c < e_{k-1} THEN k-2 ELSE k-1
//
// whose rows make as many comparisons as buckets below their own; above
// it a balanced binary search (bucketHalves), whose rows make ⌊log2 k⌋
// or ⌈log2 k⌉ comparisons whatever their value, so that the backend's
// time does not depend on where the values fall. Both give every value
// the same bucket, since c < e_j holding implies c < e_j' for every later
// edge, and a comparison of a readable value with a literal is never
// UNKNOWN.
func bucketSearch(sb *strings.Builder, col string, edges []Edge) {
	last := len(edges) - 2
	if last+1 > maxLinearBuckets {
		bucketHalves(sb, col, edges, 0, last)
		return
	}
	for i := 0; i < last; i++ {
		fmt.Fprintf(sb, " WHEN %s < %s THEN %d", col, edgeLiteral(edges[i+1]), i)
	}
	fmt.Fprintf(sb, " ELSE %d", last)
}

// bucketHalves writes the binary search of buckets lo < hi of
// bucketSearch:
//
//	WHEN c < e_mid THEN <lo … mid-1> ELSE <mid … hi>
//
// with mid = lo + ⌊(hi-lo+1)/2⌋, each half of more than one bucket a
// parenthesised CASE searching it the same way, of one its index.
func bucketHalves(sb *strings.Builder, col string, edges []Edge, lo, hi int) {
	mid := lo + (hi-lo+1)/2
	fmt.Fprintf(sb, " WHEN %s < %s THEN ", col, edgeLiteral(edges[mid]))
	bucketHalf(sb, col, edges, lo, mid-1)
	sb.WriteString(" ELSE ")
	bucketHalf(sb, col, edges, mid, hi)
}

// bucketHalf writes one half of bucketHalves.
func bucketHalf(sb *strings.Builder, col string, edges []Edge, lo, hi int) {
	if lo == hi {
		sb.WriteString(strconv.Itoa(lo))
		return
	}
	sb.WriteString("(CASE")
	bucketHalves(sb, col, edges, lo, hi)
	sb.WriteString(" END)")
}

// edgeLiteral writes a bucket edge: a double as realLiteral, exact digits
// as they are (an integer or a decimal literal, which MySQL and PostgreSQL
// read exactly and SQLite, for an integer, as an INTEGER), negative ones
// parenthesised.
func edgeLiteral(e Edge) string {
	if e.Exact == "" {
		return realLiteral(e.Num)
	}
	if strings.HasPrefix(e.Exact, "-") {
		return "(" + e.Exact + ")"
	}
	return e.Exact
}

// validExact reports whether s is an exact edge's digits: an optional
// minus, digits, and optionally a point and digits.
func validExact(s string) bool {
	s = strings.TrimPrefix(s, "-")
	whole, frac, hasPoint := strings.Cut(s, ".")
	digits := func(t string) bool {
		return t != "" && strings.Trim(t, "0123456789") == ""
	}
	return digits(whole) && (!hasPoint || digits(frac))
}
