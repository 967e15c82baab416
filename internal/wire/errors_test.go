package wire

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

func TestToMyError(t *testing.T) {
	bare := gomysql.NewError(gomysql.ER_PARSE_ERROR, "syntax")
	for _, tc := range []struct {
		name         string
		err          error
		wantCode     uint16
		wantState    string
		wantMsg      string
		wantInternal bool
	}{
		{"bare MyError", bare, 1064, "42000", "syntax", false},
		{"coded", codedErr, 1226, "42000", codedErr.msg, false},
		{"wrapped coded keeps the coded message", fmt.Errorf("exec: %w", codedErr), 1226, "42000", codedErr.msg, false},
		{"bad SQLSTATE", &codedError{1064, "4200", "x"}, 1064, "HY000", "x", false},
		{"plain", errors.New(plainSecret), 1105, "HY000", "internal error (ref 7-3)", true},
	} {
		me, internal := toMyError(tc.err, "7-3")
		if me.Code != tc.wantCode || me.State != tc.wantState || me.Message != tc.wantMsg || internal != tc.wantInternal {
			t.Errorf("%s: got %d (%s) %q internal=%v, want %d (%s) %q internal=%v",
				tc.name, me.Code, me.State, me.Message, internal, tc.wantCode, tc.wantState, tc.wantMsg, tc.wantInternal)
		}
		if strings.Contains(me.Message, "salary") {
			t.Errorf("%s: got message %q, want no trace of the error text", tc.name, me.Message)
		}
	}
}
