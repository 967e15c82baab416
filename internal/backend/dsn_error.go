package backend

import (
	"errors"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// dsnError is the error of a DSN the driver could not parse: the driver's
// reason, with the DSN's credentials removed (RedactDSN), and the driver
// named.
func dsnError(driver, dsn string, err error) error {
	return errors.New("the DSN is not one the " + driver + " driver reads: " + RedactDSN(err, dsn).Error())
}

// RedactDSN returns err with every password of dsn removed from its text,
// so that an error printed to a terminal or a log never holds a
// credential: drivers and net/url quote a DSN they cannot read, whole
// (url.Error, %q) or in part (lib/pq). Wherever the text holds dsn, as it
// is or Go-quoted, it is replaced by dsn with everything between its
// user name and the last @ (a URL's or a MySQL DSN's password) and every
// password=… (a key=value DSN's) replaced by xxxxx; so are the passwords
// the DSN parses to, where it parses, and any user:…@ or password=… left
// in the text. A nil err stays nil.
func RedactDSN(err error, dsn string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	redacted := redactedDSN(dsn)
	quoted := strconv.Quote(dsn)
	msg = strings.ReplaceAll(msg, quoted[1:len(quoted)-1], redacted)
	msg = strings.ReplaceAll(msg, dsn, redacted)
	for _, p := range dsnPasswords(dsn) {
		msg = strings.ReplaceAll(msg, p, "xxxxx")
	}
	msg = quotedUserInfo.ReplaceAllString(msg, "${1}:xxxxx@")
	msg = keyValuePassword.ReplaceAllString(msg, "${1}xxxxx")
	if msg == err.Error() {
		return err
	}
	return errors.New(msg)
}

var (
	// quotedUserInfo is user:password@ in a URL or a MySQL DSN.
	quotedUserInfo = regexp.MustCompile(`([^\s:/@"'=]+):[^\s@"']*@`)
	// keyValuePassword is password=… in a key=value DSN, quoted or not.
	keyValuePassword = regexp.MustCompile(`(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s"]+)`)
)

// redactedDSN is dsn with its passwords replaced by xxxxx, read without
// parsing it (a DSN that does not parse is the one whose text errors
// quote): after a URL's scheme:// or from the start, the text from the
// first ':' to the last '@' when both are there, and every password=….
func redactedDSN(dsn string) string {
	out := keyValuePassword.ReplaceAllString(dsn, "${1}xxxxx")
	start := 0
	if i := strings.Index(out, "://"); i >= 0 {
		start = i + 3
	}
	if at := strings.LastIndex(out, "@"); at > start {
		if colon := strings.Index(out[start:at], ":"); colon >= 0 {
			out = out[:start+colon+1] + "xxxxx" + out[at:]
		}
	}
	return out
}

// dsnPasswords are the non-empty passwords dsn parses to in any of the
// forms RedactDSN names.
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
