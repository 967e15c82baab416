package wire

import (
	"crypto/sha1"
	"crypto/subtle"
	"encoding/hex"
	"strings"
)

// NativePasswordHash returns SHA1(SHA1(password)), the 20-byte form of a
// mysql_native_password credential that Accounts stores.
func NativePasswordHash(password string) []byte {
	stage1 := sha1.Sum([]byte(password))
	stage2 := sha1.Sum(stage1[:])
	return stage2[:]
}

// FormatNativePasswordHash renders a hash as MySQL prints it in
// mysql.user.authentication_string and dpproxy's configuration stores it:
// "*" followed by 40 upper-case hex digits.
func FormatNativePasswordHash(hash []byte) string {
	return "*" + strings.ToUpper(hex.EncodeToString(hash))
}

// checkNativeScramble reports whether reply is the mysql_native_password
// answer to salt for the account whose stored hash is stage2 = SHA1(SHA1(pw)).
//
// The client sends reply = SHA1(pw) XOR SHA1(salt || stage2). XORing reply
// with SHA1(salt || stage2) recovers the candidate SHA1(pw); it is right iff
// its SHA1 equals stage2. The final comparison is constant-time.
func checkNativeScramble(reply, salt, stage2 []byte) bool {
	if len(reply) != sha1.Size || len(stage2) != sha1.Size {
		return false
	}
	h := sha1.New()
	h.Write(salt)
	h.Write(stage2)
	mask := h.Sum(nil)
	stage1 := make([]byte, sha1.Size)
	for i := range stage1 {
		stage1[i] = reply[i] ^ mask[i]
	}
	candidate := sha1.Sum(stage1)
	return subtle.ConstantTimeCompare(candidate[:], stage2) == 1
}
