package backend

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/lib/pq"
)

// Identity is a digest of what a backend's answers depend on besides the
// statement: the driver, the server and database the DSN names (host,
// port, database, user and every connection parameter, PostgreSQL's
// search_path and options, MySQL's time_zone; never the password), and the
// zone its sessions read columns with a time zone in (the configured one,
// or with ServerTimeZone the server's, read when the pool was opened). Two
// backends with one identity answer a statement alike while the data does
// not change; the repeat window keys its answers with it, so a proxy
// restarted on another database or in another zone answers afresh. It is
// empty for a backend made by New.
func (b *Backend) Identity() string { return b.identity }

// identity computes Identity for a pool of driver on dsn whose sessions
// run in timeZone (OpenDB).
func identity(ctx context.Context, db *sql.DB, driver, dsn, timeZone string) (string, error) {
	var parts []string
	switch driver {
	case "postgres":
		cfg, err := pq.NewConfig(dsn)
		if err != nil {
			return "", err
		}
		parts = append(parts, "host="+cfg.Host, "hostaddr="+cfg.Hostaddr.String(), fmt.Sprintf("port=%d", cfg.Port),
			"dbname="+cfg.Database, "user="+cfg.User, "options="+cfg.Options)
		for k, v := range cfg.Runtime {
			parts = append(parts, "runtime "+k+"="+v)
		}
	case "mysql":
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			return "", err
		}
		parts = append(parts, "net="+cfg.Net, "addr="+cfg.Addr, "dbname="+cfg.DBName, "user="+cfg.User, "collation="+cfg.Collation)
		for k, v := range cfg.Params {
			parts = append(parts, "param "+k+"="+v)
		}
	default:
		parts = append(parts, "dsn="+dsn) // a file name and pragmas: no password
	}
	slices.Sort(parts)
	zone := SessionTimeZone(timeZone)
	if zone == "" {
		server, err := serverTimeZone(ctx, db, driver)
		if err != nil {
			return "", fmt.Errorf("read the server's time zone: %w", err)
		}
		zone = "server " + server
	}
	sum := sha256.New()
	for _, p := range append([]string{"driver=" + driver, "zone=" + zone}, parts...) {
		fmt.Fprintf(sum, "%d:%s;", len(p), p)
	}
	return hex.EncodeToString(sum.Sum(nil)), nil
}

// serverTimeZone reads the zone a session of db runs in when nothing sets
// one (OpenDB with ServerTimeZone); SQLite has none.
func serverTimeZone(ctx context.Context, db *sql.DB, driver string) (string, error) {
	var zone string
	switch driver {
	case "postgres":
		err := db.QueryRowContext(ctx, "SELECT current_setting('TimeZone')").Scan(&zone)
		return zone, err
	case "mysql":
		var system string
		err := db.QueryRowContext(ctx, "SELECT @@time_zone, @@system_time_zone").Scan(&zone, &system)
		return strings.Join([]string{zone, system}, " "), err
	}
	return "", nil
}

// Zone names the zone the backend's sessions read columns with a time
// zone in (PostgreSQL timestamptz, MySQL and MariaDB TIMESTAMP), as a
// session reported it when Open opened the pool: backend.time_zone, one
// the DSN sets, or with ServerTimeZone the server's, as the session names
// it (an offset PostgreSQL was sent as "<+hh:mm>-hh:mm" is "+hh:mm";
// MySQL's "SYSTEM" is followed by the server's system zone). Callers that
// compare zones read spellings of one zone as one with catalog.Location. Releases
// stored over such a column are keyed with it (package exec). It is empty
// on SQLite, which has no such column, and for a backend made by New.
func (b *Backend) Zone() string { return b.zone }

// sessionZone reads Zone from a session of db.
func sessionZone(ctx context.Context, db *sql.DB, driver string) (string, error) {
	var zone string
	switch driver {
	case "postgres":
		if err := db.QueryRowContext(ctx, "SELECT current_setting('TimeZone')").Scan(&zone); err != nil {
			return "", err
		}
		if m := postgresOffsetZone.FindStringSubmatch(zone); m != nil {
			zone = m[1] // postgresZone's spelling of an offset
		}
	case "mysql":
		var system string
		if err := db.QueryRowContext(ctx, "SELECT @@session.time_zone, @@system_time_zone").Scan(&zone, &system); err != nil {
			return "", err
		}
		if strings.EqualFold(zone, "SYSTEM") {
			return "SYSTEM " + system, nil
		}
	default:
		return "", nil
	}
	return zone, nil
}

// postgresOffsetZone is postgresZone's spelling of an offset east of UTC,
// "<+12:00>-12:00"; the submatch is the offset as MySQL spells it.
var postgresOffsetZone = regexp.MustCompile(`^<([+-]\d{2}:\d{2})>[+-]\d{2}:\d{2}$`)
