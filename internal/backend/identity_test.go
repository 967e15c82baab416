package backend

import (
	"context"
	"net/url"
	"testing"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestIdentity: backends opened on the same database in the same zone
// share an identity, whatever the password; another time zone (offset or
// name), another database or schema (search_path), another driver, and
// the server's zone are each another identity.
func TestIdentity(t *testing.T) {
	ctx := context.Background()
	open := func(driver, dsn, zone string) string {
		t.Helper()
		b, err := Open(ctx, driver, dsn, zone, nil)
		if err != nil {
			t.Fatalf("%s %s in %q: %v", driver, dsn, zone, err)
		}
		defer b.Close()
		if b.Identity() == "" {
			t.Fatalf("%s %s in %q: no identity", driver, dsn, zone)
		}
		return b.Identity()
	}
	pg := testdb.PostgresDSN(t)
	u, err := url.Parse(pg)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), "not-checked-under-trust")
	withPassword := u.String()
	q := u.Query()
	q.Set("search_path", "public")
	u.RawQuery = q.Encode()
	otherSchema := u.String()

	maria := testdb.MySQLDSN(t)
	base := open("postgres", pg, "")
	if got := open("postgres", withPassword, ""); got != base {
		t.Error("a password in the DSN changed the identity")
	}
	if got := open("postgres", pg, "UTC"); got != base {
		t.Error("UTC and the default (UTC) are two identities")
	}
	ids := map[string]string{"base": base}
	for name, id := range map[string]string{
		"+12:00":       open("postgres", pg, "+12:00"),
		"-05:30":       open("postgres", pg, "-05:30"),
		"Europe/Paris": open("postgres", pg, "Europe/Paris"),
		"server":       open("postgres", pg, ServerTimeZone),
		"search_path":  open("postgres", otherSchema, ""),
		"sqlite":       open("sqlite", testdb.SQLiteDSN(t), ""),
		"mariadb":      open("mysql", maria, ""),
		"mariadb +12":  open("mysql", maria, "+12:00"),
	} {
		for other, otherID := range ids {
			if id == otherID {
				t.Errorf("%s and %s: one identity", name, other)
			}
		}
		ids[name] = id
	}
}
