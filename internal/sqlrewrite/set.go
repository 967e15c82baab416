package sqlrewrite

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/dpproxy/dpproxy/internal/dperr"
)

// setVariables converts SET. Session scope only: SET GLOBAL is refused.
// Assignments to @dp_* are dpproxy's settings and take constants; every other
// assignment (system variables, SET NAMES, SET TRANSACTION, other user
// variables, with any expression, as Connector/J's
// sql_mode = concat(@@sql_mode, ',STRICT_TRANS_TABLES')) is evaluated by the
// catalog engine, which keeps the session's values, each no larger than
// its bound allows (size_guard.go; bounds are guardSizes').
func setVariables(s *ast.SetStmt, sql string, bounds map[ast.Node]int64) (*SetVariables, error) {
	set := &SetVariables{}
	// namesCollation is the COLLATE of the last SET NAMES, which the
	// catalog engine's parser drops (it sets collation_connection to the
	// character set's default): it is set after the statement's other
	// assignments, as MySQL's SET NAMES cs COLLATE c sets it.
	namesCollation := ""
	for _, v := range s.Variables {
		if v.IsGlobal || v.IsInstance {
			return nil, refuse("SET GLOBAL", "dpproxy sets session variables only")
		}
		if v.Value != nil {
			if err := checkAssignedSize(bounds, v); err != nil {
				return nil, err
			}
		}
		name := strings.ToLower(v.Name)
		if err := checkClientCharset(v, name); err != nil {
			return nil, err
		}
		if v.Name == ast.SetNames {
			namesCollation = ""
			if v.ExtendValue != nil {
				if c, ok := literal(v.ExtendValue); ok && c.IsText {
					namesCollation = c.Str
				}
			}
		}
		if v.IsSystem || !strings.HasPrefix(name, "dp_") {
			set.Catalog = sql
			continue
		}
		a := Assignment{Name: name}
		if _, ok := unparen(v.Value).(*ast.DefaultExpr); ok {
			a.Default = true
		} else {
			val, ok := literal(v.Value)
			if !ok {
				return nil, refuse("SET @"+name+" to an expression", supportedSet)
			}
			// NULL unsets a user variable, as in MySQL: the setting goes
			// back to its default (the parser takes no DEFAULT for a user
			// variable).
			a.Value, a.Default = val, val.Null
		}
		set.Assignments = append(set.Assignments, a)
	}
	if namesCollation != "" {
		set.Catalog += ", collation_connection = '" + strings.ReplaceAll(namesCollation, "'", "''") + "'"
	}
	return set, nil
}

// supportedCharset names the only character set of statements and
// answers: dpproxy reads every statement as utf8mb4 and sends all text as
// utf8mb4.
const supportedCharset = "dpproxy reads statements and sends text as utf8mb4: SET NAMES utf8mb4 (utf8mb3 and ascii, subsets of it, are accepted too)"

// supportedCollation names the collations a session may compare text
// in: those of utf8mb4 and its subsets (supportedCharset).
const supportedCollation = "dpproxy reads statements and sends text as utf8mb4: a utf8mb4 collation (utf8mb4_general_ci, utf8mb4_bin, utf8mb4_unicode_ci, utf8mb4_unicode_520_ci; those of utf8mb3 and ascii, subsets of it, are accepted too)"

// clientCharsets are the character sets a client may say it sends and
// reads: utf8mb4 and its subsets utf8mb3 (utf8) and ascii, whose text is
// utf8mb4 text as it is. resultsCharsets adds what character_set_results
// also takes, binary and NULL (no conversion: text as stored, which is
// utf8mb4 here), which MySQL's Connector/J and mysqldump set.
var (
	clientCharsets  = map[string]bool{"utf8mb4": true, "utf8mb3": true, "utf8": true, "ascii": true}
	resultsCharsets = map[string]bool{"utf8mb4": true, "utf8mb3": true, "utf8": true, "ascii": true, "binary": true}
)

// checkClientCharset refuses (1235, before anything is charged) an
// assignment that would tell the client its text is read or sent in a
// character set other than utf8mb4 or one of its subsets: SET NAMES x
// [COLLATE y], SET CHARACTER SET x, and SET character_set_client,
// character_set_connection or character_set_results = x. The catalog
// engine would take them, and @@character_set_results would say latin1
// while every answer is still utf8mb4, and a latin1 client's é (0xE9) is
// not utf8mb4 (the wire layer refuses such text, 1300). So are
// character_set_server and character_set_database of another character
// set, and collation_connection, collation_database and collation_server
// of a collation of another (latin1_swedish_ci), which the engine took
// while SET NAMES latin1 was refused; a collation's id (8) the engine
// refuses itself (1231). DEFAULT is utf8mb4. name is v's name in lower
// case.
func checkClientCharset(v *ast.VariableAssignment, name string) error {
	allowed, what, to, message, collation := clientCharsets, "", " ", supportedCharset, false
	switch {
	case v.Name == ast.SetNames:
		what = "SET NAMES"
	case v.Name == ast.SetCharset:
		what = "SET CHARACTER SET"
	case v.IsSystem && (name == "character_set_client" || name == "character_set_connection" ||
		name == "character_set_server" || name == "character_set_database"):
		what, to = "SET "+name, " = "
	case v.IsSystem && name == "character_set_results":
		what, to, allowed = "SET "+name, " = ", resultsCharsets
	case v.IsSystem && (name == "collation_connection" || name == "collation_database" || name == "collation_server"):
		what, to, message, collation = "SET "+name, " = ", supportedCollation, true
	default:
		return nil
	}
	var cs string
	switch e := unparen(v.Value).(type) {
	case *ast.DefaultExpr:
		return nil
	case *ast.ColumnNameExpr: // SET character_set_client = latin1
		if e.Name.Table.O != "" {
			return refuse(what+" to an expression", message)
		}
		cs = e.Name.Name.O
	default:
		c, ok := literal(v.Value)
		switch {
		case ok && c.Null && allowed["binary"]:
			return nil
		case ok && collation && !c.IsText && !c.Null:
			return nil // a collation's id: the catalog engine refuses it (1231)
		case !ok || !c.IsText:
			return refuse(what+" to an expression", message)
		}
		cs = c.Str
	}
	if err := checkNamesCollation(v, cs); err != nil {
		return err
	}
	charset := cs
	if collation {
		// A collation is named after its character set: latin1_bin,
		// utf8mb4_unicode_520_ci (binary is binary's).
		charset, _, _ = strings.Cut(cs, "_")
	}
	if !allowed[strings.ToLower(charset)] {
		return refuse(what+to+cs, message)
	}
	return nil
}

// checkNamesCollation refuses SET NAMES cs COLLATE c of a collation c of
// another character set than cs (SET NAMES utf8mb4 COLLATE latin1_bin) as
// MariaDB does (1253, its words; utf8 is utf8mb3 there).
func checkNamesCollation(v *ast.VariableAssignment, cs string) error {
	if v.Name != ast.SetNames || v.ExtendValue == nil {
		return nil
	}
	c, ok := literal(v.ExtendValue)
	if !ok || !c.IsText {
		return nil
	}
	canonical := func(name string) string {
		name = strings.ToLower(name)
		if name == "utf8" || strings.HasPrefix(name, "utf8_") {
			return "utf8mb3" + strings.TrimPrefix(name, "utf8")
		}
		return name
	}
	charset, collation := canonical(cs), canonical(c.Str)
	if of, _, _ := strings.Cut(collation, "_"); of != charset {
		return dperr.New(dperr.CollationCharset, "COLLATION '%s' is not valid for CHARACTER SET '%s'", collation, charset)
	}
	return nil
}
