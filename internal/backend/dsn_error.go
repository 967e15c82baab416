package backend

import (
	"errors"
	"net/url"
	"regexp"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// dsnError is the error of a DSN the driver could not parse: the driver's
// reason, which may quote the DSN (lib/pq quotes the part it could not
// read, net/url the whole URL), with every password it holds replaced by
// "xxxxx", so that a start-up error printed to a terminal or a log never
// holds a credential. The passwords are those a URL's user info, a MySQL
// DSN's user:password@ or a key=value DSN's password= give, read from the
// DSN however the configured driver reads it, and any user:password@ or
// password= the message itself quotes.
func dsnError(driver, dsn string, err error) error {
	msg := err.Error()
	for _, p := range dsnPasswords(dsn) {
		msg = strings.ReplaceAll(msg, p, "xxxxx")
	}
	msg = quotedUserInfo.ReplaceAllString(msg, "${1}:xxxxx@")
	msg = keyValuePassword.ReplaceAllString(msg, "${1}xxxxx")
	return errors.New("the DSN is not one the " + driver + " driver reads: " + msg)
}

var (
	// quotedUserInfo is user:password@ in a URL or a MySQL DSN.
	quotedUserInfo = regexp.MustCompile(`([^\s:/@"'=]+):[^\s@"']*@`)
	// keyValuePassword is password=… in a key=value DSN, quoted or not.
	keyValuePassword = regexp.MustCompile(`(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s"]+)`)
)

// dsnPasswords are the non-empty passwords dsn holds in any of the forms
// dsnError names.
func dsnPasswords(dsn string) []string {
	var out []string
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok {
			out = append(out, p, url.PathEscape(p), url.QueryEscape(p))
		}
	}
	if cfg, err := mysql.ParseDSN(dsn); err == nil {
		out = append(out, cfg.Passwd)
	}
	for _, m := range keyValuePassword.FindAllStringSubmatch(dsn, -1) {
		out = append(out, strings.Trim(m[2], "'"))
	}
	kept := out[:0]
	for _, p := range out {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return kept
}
