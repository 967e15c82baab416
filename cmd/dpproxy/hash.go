package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/dpproxy/dpproxy/internal/wire"
)

// hashPassword prints the mysql_native_password hash ("*" and 40 hex digits
// of SHA1(SHA1(password))) for a configuration file's users[].password_hash.
// The password comes from the argument or, safer (no shell history, no
// process list), from the first line of stdin; an argument starting with
// "-" is read as a request for usage, never as a password.
const hashPasswordUsage = "usage: dpproxy hash-password [PASSWORD], or the password on the first line of stdin (echo 'secret' | dpproxy hash-password); a password starting with - only on stdin"

func hashPassword(args []string, stdin io.Reader, stdout io.Writer) error {
	var password string
	switch len(args) {
	case 0:
		line, err := bufio.NewReader(stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		password = strings.TrimRight(line, "\r\n")
	case 1:
		if strings.HasPrefix(args[0], "-") {
			// -h, --help or a mistyped flag: never hash it. A password
			// that starts with "-" comes on stdin.
			return errors.New(hashPasswordUsage)
		}
		password = args[0]
	default:
		return errors.New(hashPasswordUsage)
	}
	if password == "" {
		return errors.New("hash-password: empty password")
	}
	fmt.Fprintln(stdout, wire.FormatNativePasswordHash(wire.NativePasswordHash(password)))
	return nil
}
