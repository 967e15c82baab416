package backend

import (
	"crypto/hmac"
	"crypto/sha256"
	"database/sql/driver"
	"encoding/binary"
	"math"
	"strconv"

	"modernc.org/sqlite"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// The SQLite backend computes the keyed hash of unit bounding
// (sqlrewrite.UnitBound) with this function; PostgreSQL and MariaDB use
// their built-in MD5. It is registered before any connection is opened.
func init() {
	if err := sqlite.RegisterDeterministicScalarFunction(sqlrewrite.UnitKeyFunction, 3, unitKey); err != nil {
		panic("backend: registering " + sqlrewrite.UnitKeyFunction + ": " + err.Error())
	}
}

// unitKey returns the first 63 bits of HMAC-SHA-256 keyed by the salt over
// the unit value (tagged with its storage class, so 1 and '1' differ) and
// the position: a non-negative integer. It is total: every storage class of
// the unit, NULL included, has an encoding.
func unitKey(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	salt, _ := args[0].(string)
	mac := hmac.New(sha256.New, []byte(salt))
	var msg []byte
	switch u := args[1].(type) {
	case int64:
		msg = strconv.AppendInt([]byte{'i'}, u, 10)
	case float64:
		msg = binary.BigEndian.AppendUint64([]byte{'r'}, math.Float64bits(u))
	case string:
		msg = append([]byte{'t'}, u...)
	case []byte:
		msg = append([]byte{'b'}, u...)
	default:
		msg = []byte{'n'}
	}
	pos, _ := args[2].(int64)
	msg = strconv.AppendInt(append(msg, '/'), pos, 10)
	mac.Write(msg)
	return int64(binary.BigEndian.Uint64(mac.Sum(nil)) >> 1), nil
}
