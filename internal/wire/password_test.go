package wire

import (
	"bytes"
	"testing"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

func TestNativePasswordHash(t *testing.T) {
	for _, tc := range []struct{ password, want string }{
		// MySQL 5.7's PASSWORD('password'), a published vector.
		{"password", "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19"},
		// The demo user; checked with Python's hashlib.sha1 applied twice.
		{"demo", "*C142FB215B6E05B7C134B1A653AD4B455157FD79"},
	} {
		if got := FormatNativePasswordHash(NativePasswordHash(tc.password)); got != tc.want {
			t.Errorf("hash of %q: got %s, want %s", tc.password, got, tc.want)
		}
	}
}

func TestCheckNativeScramble(t *testing.T) {
	salt := []byte("0123456789abcdefghij")
	stored := NativePasswordHash(testPassword)
	for _, tc := range []struct {
		name  string
		reply []byte
		want  bool
	}{
		// go-mysql's client-side scramble is the reference for the reply.
		{"right password", gomysql.CalcNativePassword(salt, []byte(testPassword)), true},
		{"wrong password", gomysql.CalcNativePassword(salt, []byte("other")), false},
		{"other salt", gomysql.CalcNativePassword([]byte("jihgfedcba9876543210"), []byte(testPassword)), false},
		{"short reply", []byte{1, 2, 3}, false},
		{"empty reply", nil, false},
	} {
		if got := checkNativeScramble(tc.reply, salt, stored); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
	if checkNativeScramble(bytes.Repeat([]byte{0}, 20), salt, nil) {
		t.Errorf("got a match against an empty stored hash, want none")
	}
}
