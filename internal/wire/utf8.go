package wire

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// The session reads every statement as utf8mb4, whatever character set
// the client named in its handshake (which MariaDB would take for
// character_set_client) and whatever it SETs (the session refuses SET
// NAMES of another character set). Text that is not valid UTF-8 (latin1's
// é, 0xE9, from a client that believes the connection is latin1) is
// refused where it enters, before the session sees it, so before anything
// is reserved: the parser would otherwise fail on it with an internal
// error or read an identifier's invalid bytes as '?' after the statement
// was charged. MariaDB answers an invalid identifier so (1300, HY000);
// string literals it takes as they are, which dpproxy cannot. The session
// is told of the refusal (checkText, refusedText), so that SHOW WARNINGS
// lists it as MariaDB's does.

// maxInvalidExcerpt is how many characters of the text an invalid-string
// error quotes, as MariaDB quotes at most 64 of an identifier.
const maxInvalidExcerpt = 64

// wordEnds are the bytes an excerpt of invalid text stops at.
const wordEnds = " \t\r\n'\"`(),;="

// checkUTF8 returns nil if text is valid UTF-8, else MySQL's 1300
// (Invalid utf8mb4 character string, HY000) quoting what is around the
// first invalid byte; what names the text ("" for a statement, "parameter
// 2" for an argument).
func checkUTF8(text, what string) error {
	if utf8.ValidString(text) {
		return nil
	}
	var where string
	if what != "" {
		where = " in " + what
	}
	return gomysql.NewError(gomysql.ER_INVALID_CHARACTER_STRING, fmt.Sprintf(
		"Invalid utf8mb4 character string: '%s'%s; dpproxy reads statements and their arguments as utf8mb4 (SET NAMES utf8mb4): send UTF-8 text",
		invalidExcerpt(text), where))
}

// checkText is checkUTF8, the session told of a refusal (Refused).
func (c *connection) checkText(text, what string) error {
	err := checkUTF8(text, what)
	c.refusedText(err)
	return err
}

// refusedText tells the session of err when it is checkUTF8's refusal.
func (c *connection) refusedText(err error) {
	if me, ok := errors.AsType[*gomysql.MyError](err); ok && me.Code == gomysql.ER_INVALID_CHARACTER_STRING {
		c.session.Refused(me.Code, me.Message)
	}
}

// invalidExcerpt is the word of text holding its first invalid byte (from
// after the last space, quote or punctuation before it, at most 32 bytes
// back, to the next one after it), at most maxInvalidExcerpt characters of
// it, with invalid bytes and control characters written \xHH as MariaDB
// writes them, and "..." when cut.
func invalidExcerpt(text string) string {
	bad := 0
	for bad < len(text) {
		r, size := utf8.DecodeRuneInString(text[bad:])
		if r == utf8.RuneError && size <= 1 {
			break
		}
		bad += size
	}
	start := bad
	for start > 0 && bad-start < 32 && !strings.ContainsRune(wordEnds, rune(text[start-1])) {
		start--
	}
	// Step forward to a character boundary if the 32 bytes cut one.
	for start < bad && !utf8.RuneStart(text[start]) {
		start++
	}
	var b strings.Builder
	for i, n := start, 0; i < len(text); n++ {
		if n == maxInvalidExcerpt {
			b.WriteString("...")
			break
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if i > bad && strings.ContainsRune(wordEnds, r) {
			break
		}
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02X`, text[i])
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02X`, r)
		default:
			b.WriteString(text[i : i+size])
		}
		i += size
	}
	return b.String()
}
