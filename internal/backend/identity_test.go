package backend

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
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

// TestZone: Zone is the zone a session reads columns with a time zone in,
// one spelling per zone: the default and UTC are +00:00, offsets +hh:mm
// on PostgreSQL (which is set to a POSIX spelling of it) as on MariaDB, a
// name its name, and a zone the DSN sets wins over backend.time_zone.
// SQLite has none.
func TestZone(t *testing.T) {
	ctx := context.Background()
	pg, maria := testdb.PostgresDSN(t), testdb.MySQLDSN(t)
	u, err := url.Parse(pg)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("timezone", "Asia/Tokyo")
	u.RawQuery = q.Encode()
	sep := "?"
	if strings.Contains(maria, "?") {
		sep = "&"
	}
	for _, c := range []struct{ driver, dsn, zone, want string }{
		{"postgres", pg, "", "+00:00"},
		{"postgres", pg, "UTC", "+00:00"},
		{"postgres", pg, "+12:00", "+12:00"},
		{"postgres", pg, "-5:30", "-05:30"},
		{"postgres", pg, "Europe/Paris", "Europe/Paris"},
		{"postgres", u.String(), "+12:00", "Asia/Tokyo"},
		{"mysql", maria, "", "+00:00"},
		{"mysql", maria, "+12:00", "+12:00"},
		{"mysql", maria + sep + "time_zone=%27%2B03%3A00%27", "+12:00", "+03:00"},
		{"sqlite", testdb.SQLiteDSN(t), "+12:00", ""},
	} {
		b, err := Open(ctx, c.driver, c.dsn, c.zone, nil)
		if err != nil {
			t.Fatalf("%s in %q: %v", c.driver, c.zone, err)
		}
		got := b.Zone()
		if _, id, ok := catalog.Location(got); ok && got != "" {
			got = id // as package exec reads it
		}
		if got != c.want {
			t.Errorf("%s %s in %q: zone %q, want %q", c.driver, c.dsn, c.zone, got, c.want)
		}
		b.Close()
	}
}
