package catalog

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // time zone names, whatever the host has installed
)

// Location reads a time zone as MySQL spells one: UTC (also "", the
// default of backend.time_zone), an offset from '-13:59' to '+14:00'
// ('+05:00', also '+5:00'), or a name of the proxy's time zone database
// ('Europe/Paris'). id identifies the zone: "+hh:mm" for UTC and offsets,
// the name otherwise. ok is false for anything else: "server", 'SYSTEM',
// and 'Local', which Go would read as the proxy host's zone and MySQL
// does not know.
func Location(zone string) (loc *time.Location, id string, ok bool) {
	if zone == "" || strings.EqualFold(zone, "UTC") {
		return time.UTC, "+00:00", true
	}
	if m := offsetPattern.FindStringSubmatch(zone); m != nil {
		h, _ := strconv.Atoi(m[2])
		mi, _ := strconv.Atoi(m[3])
		secs := h*3600 + mi*60
		if m[1] == "-" {
			secs = -secs
		}
		if mi > 59 || secs > 14*3600 || secs < -(13*3600+59*60) {
			return nil, "", false
		}
		sign := "+"
		if secs < 0 {
			sign = "-"
		}
		return time.FixedZone(zone, secs), fmt.Sprintf("%s%02d:%02d", sign, h, mi), true
	}
	if zone == "server" || strings.EqualFold(zone, "SYSTEM") || zone == "Local" {
		return nil, "", false
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return nil, "", false
	}
	return loc, loc.String(), true
}

// offsetPattern is a UTC offset as MySQL spells it, "+01:00".
var offsetPattern = regexp.MustCompile(`^([+-])(\d{1,2}):(\d{2})$`)

// SessionTimeZone is the value SET time_zone stores for zone, as MySQL
// shows it: 'SYSTEM' or 'UTC' (any case), an offset as "+hh:mm" ('+5:00'
// is '+05:00'), or a name Location reads, as given. ok is false for every
// other value, "" included, which MySQL refuses with 1298: the rule
// private statements read the session's zone with (Location), so a
// session never holds a zone they cannot read.
func SessionTimeZone(zone string) (value string, ok bool) {
	switch {
	case strings.EqualFold(zone, "SYSTEM"):
		return "SYSTEM", true
	case strings.EqualFold(zone, "UTC"):
		return "UTC", true
	case zone == "":
		return "", false
	}
	_, id, ok := Location(zone)
	if !ok {
		return "", false
	}
	if id[0] == '+' || id[0] == '-' {
		return id, true
	}
	return zone, true
}

// SystemLocation is the proxy's system time zone, what a session's
// 'SYSTEM' time_zone means in the catalog engine as in private
// statements: backend.time_zone (zone) as Location reads it, an offset
// named as MySQL shows it ("+05:00"), so that the name of the zone now
// is what MySQL's system_time_zone shows ('UTC', 'JST', '+05:00'). ok is
// false when Location reads no zone ("server").
func SystemLocation(zone string) (loc *time.Location, ok bool) {
	loc, id, ok := Location(zone)
	if ok && loc != time.UTC && (id[0] == '+' || id[0] == '-') {
		_, secs := time.Now().In(loc).Zone()
		loc = time.FixedZone(id, secs)
	}
	return loc, ok
}
