package sqlrewrite

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

// TestDateDomainMatchesAxisSize: for random bounds of date and timestamp
// columns, every part's domain (the labels GROUP BY answers) has exactly
// as many values as its axis has cells (what the grouped fetch reads and
// the backend fills), the periods are consecutive and start at the lower
// bound's period, and a cyclic part lists each value that occurs within
// the bounds once, in increasing order.
func TestDateDomainMatchesAxisSize(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	base := time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 300 {
		typ := catalog.Date
		if i%2 == 1 {
			typ = catalog.Timestamp
		}
		lo := base.Add(time.Duration(rng.IntN(20*365*24)) * time.Hour).Add(time.Duration(rng.IntN(3600)) * time.Second)
		hi := lo.Add(time.Duration(rng.IntN([]int{3, 40, 400, 9000}[i%4]*24)) * time.Hour)
		col := &catalog.Column{Name: "d", Type: typ}
		num := func(t time.Time) float64 {
			if typ == catalog.Date {
				return float64(t.Unix() / catalog.SecondsPerDay)
			}
			return float64(t.Unix())
		}
		l, h := num(lo), num(hi)
		col.Lower, col.Upper = &l, &h
		for _, k := range []*dateKey{
			{col: col, part: PartYear, kind: "year", label: numberLabel(time.Time.Year)},
			{col: col, part: PartMonth, kind: "yyyymm", label: yearMonthKey(col).label},
			{col: col, part: PartDay, kind: "date", label: dateLabel(false)},
			{col: col, part: PartMonthOfYear}, {col: col, part: PartQuarterOfYear},
			{col: col, part: PartDayOfWeek}, {col: col, part: PartDayOfMonth},
		} {
			d, labels, err := k.domain("x", nil)
			if err != nil {
				if k.part == PartDay && d == nil {
					continue // more days than MaxGroups
				}
				t.Fatal(err)
			}
			if n := d.Axis.Size(); n != len(labels) || n == 0 {
				t.Fatalf("%v..%v part %d: %d labels, axis of %d cells", lo, hi, k.part, len(labels), n)
			}
			if d.Axis.Cycle != nil {
				for j := 1; j < len(d.Axis.Cycle); j++ {
					if d.Axis.Cycle[j] <= d.Axis.Cycle[j-1] {
						t.Fatalf("cycle %v not increasing", d.Axis.Cycle)
					}
				}
				if first := component(col.TimeOf(l), k.part); !slices.Contains(d.Axis.Cycle, first) {
					t.Fatalf("cycle %v misses the lower bound's %d", d.Axis.Cycle, first)
				}
				continue
			}
			if got, want := labels[0], k.label(periodStart(col.TimeOf(l), k.part)); got != want {
				t.Fatalf("first label %v, want %v", got, want)
			}
			if got, want := labels[len(labels)-1], k.label(periodStart(col.TimeOf(h), k.part)); got != want {
				t.Fatalf("last label %v, want %v", got, want)
			}
		}
	}
}
