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
// (strings as bind arguments); a bucketed key is CASE WHEN col IS NULL
// THEN NULL WHEN col < e1 THEN 0 … WHEN col < e_{k-1} THEN k-2 ELSE k-1 END,
// so the ends clamp (readable as in Render; PostgreSQL's NaN, ordered above
// every number, falls in the last cell as clamp puts it at the upper bound);
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
		if math.IsNaN(e) || math.IsInf(e, 0) || i > 0 && !(e > d.Edges[i-1]) {
			return "", fmt.Errorf("sqlrewrite: edges of %s must be finite and strictly increasing", d.Column)
		}
	}
	// The column is compared in its own type, never cast (a cast can fail
	// on a huge NUMERIC); an unreadable value (Render) has no key.
	fmt.Fprintf(&sb, " WHEN NOT (%s) THEN NULL", r.readable(col))
	last := len(d.Edges) - 2
	for i := 0; i < last; i++ {
		fmt.Fprintf(&sb, " WHEN %s < %s THEN %d", col, realLiteral(d.Edges[i+1]), i)
	}
	fmt.Fprintf(&sb, " ELSE %d END", last)
	return sb.String(), nil
}
