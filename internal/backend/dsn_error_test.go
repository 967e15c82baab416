package backend

import (
	"strings"
	"testing"
)

// TestDSNErrorsHoldNoPassword opens DSNs the driver cannot read, each
// holding the password s3cretpw in one of the forms a user may write, and
// checks the error names the driver and never the password (lib/pq quotes
// the part of a DSN it could not read, net/url the whole URL: a README
// review saw a MariaDB DSN given to a PostgreSQL ledger printed whole).
func TestDSNErrorsHoldNoPassword(t *testing.T) {
	cases := []struct{ driver, dsn string }{
		{"postgres", "root:s3cretpw@tcp(127.0.0.1:3306)/db"},
		{"postgres", "postgres://alice:s3cretpw%zz@127.0.0.1:5432/db"},
		{"postgres", "host=127.0.0.1 password=s3cretpw bogus"},
		{"postgres", "host=127.0.0.1 password='s3cretpw' bogus"},
		{"mysql", "postgres://alice:s3cretpw@127.0.0.1:5432/db"},
		{"mysql", "alice:s3cretpw@tcp(127.0.0.1:3306/db"},
		{"mysql", "alice:s3cretpw@tcp(127.0.0.1:3306)/db?bogus=%zz"},
		// A password net/url cannot read: its error quotes the URL whole
		// (an independent review of the first version of this redaction).
		{"postgres", "postgres://postgres:s3cretpw ab@127.0.0.1:5432/db"},
		{"postgres", "postgres://postgres:s3cretpw'ab@127.0.0.1:bad/db"},
		{"postgres", `postgres://postgres:s3cretpw"ab@127.0.0.1:5432/db`},
		{"postgres", "postgres://postgres:s3cretpw@x@127.0.0.1:bad/db"},
		{"postgres", "host=127.0.0.1 password='s3cretpw ab' bogus"},
	}
	for _, c := range cases {
		db, err := OpenDB(c.driver, c.dsn, "")
		if err == nil {
			db.Close()
			t.Errorf("%s %q: opened", c.driver, c.dsn)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "s3cretpw") || !strings.Contains(msg, c.driver+" driver") {
			t.Errorf("%s %q: error %q holds the password or does not name the driver", c.driver, c.dsn, msg)
		}
	}
}
