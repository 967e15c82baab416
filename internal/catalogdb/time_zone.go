package catalogdb

import (
	"context"
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

// timeZoneVariable is time_zone as SET (SET time_zone, SET @@session.
// time_zone, SET SESSION time_zone) takes it: with the rule private
// statements read the session's zone with (catalog.SessionTimeZone), a
// value that is no zone refused with MySQL's 1298 before anything is
// set, and an offset kept as MySQL shows it ('+5:00' is '+05:00', which
// the engine's NOW() also reads).
func timeZoneVariable() sql.SystemVariable {
	return &sql.MysqlSystemVariable{
		Name:              "time_zone",
		Scope:             sql.GetMysqlScope(sql.SystemVariableScope_Both),
		Dynamic:           true,
		SetVarHintApplies: true,
		Type:              timeZoneType{types.NewSystemStringType("time_zone")},
		Default:           "SYSTEM",
	}
}

// timeZoneType is a system string type whose Convert is
// catalog.SessionTimeZone.
type timeZoneType struct{ sql.SystemVariableType }

// Convert implements sql.Type: NULL and every value that is not a zone
// are refused with 1298, as MySQL refuses them.
func (t timeZoneType) Convert(ctx context.Context, v any) (any, sql.ConvertInRange, error) {
	s, isString := v.(string)
	if zone, ok := catalog.SessionTimeZone(s); isString && ok {
		return zone, sql.InRange, nil
	}
	shown := "NULL"
	if v != nil {
		shown = fmt.Sprint(v)
		if isString {
			shown = s
		}
	}
	return nil, sql.OutOfRange, mysql.NewSQLError(mysql.ERUnknownTimeZone, "HY000", "Unknown or incorrect time zone: '%s'", shown)
}
