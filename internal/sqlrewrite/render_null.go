package sqlrewrite

import "fmt"

// nullCondition renders a condition with IsNull or Complement on the quoted
// column col. Every value is read by the rule of Render's doc comment
// (NULL, and on SQLite text or blobs in a numeric column, are unreadable),
// and the rendered condition is two-valued — TRUE or FALSE on every row,
// never NULL — so the Complement is exactly the rows the plain condition
// does not select:
//
//	IsNull:            NOT (readable(c))
//	IsNull Complement: NOT (NOT (readable(c)))            (col IS NOT NULL)
//	Complement:        NOT (readable(c) AND plain(c))     (col <> v OR col IS NULL)
//
// readable is typeof(c) IN ('integer', 'real') for a numeric column on
// SQLite, dateKnown for a date or timestamp column (Temporal) and
// c IS NOT NULL otherwise, all never NULL; plain is the Range or In
// condition, which is not NULL on a readable value, so the AND is FALSE
// (never NULL) on an unreadable one. Nothing here evaluates arithmetic,
// so no value can make the statement fail.
func (r *renderer) nullCondition(col string, c Condition) (string, error) {
	var readable string
	switch {
	case c.Temporal != "":
		readable = r.dateKnown(col, c.Temporal)
	case c.Text:
		readable = col + " IS NOT NULL"
	default:
		readable = r.readable(col)
	}
	var selected string
	switch {
	case c.IsNull && c.Range == nil && len(c.In) == 0:
		selected = "NOT (" + readable + ")"
	case c.IsNull:
		return "", fmt.Errorf("sqlrewrite: IS NULL on %s takes no Range or In", c.Column)
	default:
		plain := c
		plain.Complement = false
		s, err := r.condition(plain)
		if err != nil {
			return "", err
		}
		selected = readable + " AND " + s
	}
	if c.Complement {
		return "NOT (" + selected + ")", nil
	}
	return selected, nil
}
