package catalog

import "sync"

// ColumnZones records, for the configured date and timestamp columns,
// whether the backend stores each with a time zone (PostgreSQL
// timestamptz, MySQL and MariaDB TIMESTAMP): such a column is read as
// the wall-clock time it shows in the backend sessions' zone
// (backend.time_zone), where a column without one (PostgreSQL date and
// timestamp, MySQL DATE and DATETIME, SQLite text) is the same in every
// zone. cmd/dpproxy reads them from the backend at start and again with
// each table's type check. A column without an entry (a table created
// later) is unknown. The zero value holds none. Safe for concurrent use.
type ColumnZones struct {
	mu    sync.RWMutex
	zoned map[[2]string]bool
}

// Set records whether the configured column of table has a time zone.
func (z *ColumnZones) Set(table, column string, zoned bool) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.zoned == nil {
		z.zoned = map[[2]string]bool{}
	}
	z.zoned[charsetKey(table, column)] = zoned
}

// Zoned reports whether the configured column of table has a time zone;
// known is false when nothing was recorded (or z is nil).
func (z *ColumnZones) Zoned(table, column string) (zoned, known bool) {
	if z == nil {
		return false, false
	}
	z.mu.RLock()
	defer z.mu.RUnlock()
	zoned, known = z.zoned[charsetKey(table, column)]
	return zoned, known
}
