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
// The password comes from the argument or, safer, from the first line of stdin.
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
		password = args[0]
	default:
		return errors.New("usage: dpproxy hash-password [PASSWORD] (or the password on stdin)")
	}
	if password == "" {
		return errors.New("hash-password: empty password")
	}
	fmt.Fprintln(stdout, wire.FormatNativePasswordHash(wire.NativePasswordHash(password)))
	return nil
}
