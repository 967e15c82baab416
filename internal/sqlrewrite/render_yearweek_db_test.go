package sqlrewrite_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestYearWeekKeysOnEveryBackend parses GROUP BY YEARWEEK(col) and
// YEARWEEK(col, 3) over a date and a timestamp column bounded by 2010 and
// 2030, renders each key's Cells fetch on SQLite, PostgreSQL and MariaDB
// over a table holding every day of those years (the timestamp at 23:59),
// and checks each label's count against the days whose week the rule
// gives it: mode 0 the year and week number (days since January 1 / 7 +
// 1) of the Sunday starting the day's week, mode 3 time.ISOWeek. On
// MariaDB it checks those counts against its own GROUP BY YEARWEEK(d, 0)
// and YEARWEEK(d, 3), so the proxy's labels are MariaDB's for every day.
func TestYearWeekKeysOnEveryBackend(t *testing.T) {
	first := time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)
	last := time.Date(2030, 12, 31, 0, 0, 0, 0, time.UTC)
	want := map[int]map[float64]int{0: {}, 3: {}}
	var days []time.Time
	for d := first; !d.After(last); d = d.AddDate(0, 0, 1) {
		sunday := d.AddDate(0, 0, -int(d.Weekday()))
		want[0][float64(sunday.Year()*100+(sunday.YearDay()-1)/7+1)]++
		y, w := d.ISOWeek()
		want[3][float64(y*100+w)]++
		days = append(days, d)
	}
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "dp_yearweeks", Source: "dp_yearweeks", Columns: []catalog.Column{
		dated(catalog.Date, "d", "2010-01-01", "2030-12-31"),
		dated(catalog.Timestamp, "ts", "2010-01-01 00:00:00", "2030-12-31 23:59:59"),
	}}}}
	for _, b := range dbBackends {
		t.Run(b.name, func(t *testing.T) {
			db := b.loadDays(t, "dp_yearweeks", days, func(int) int { return 59 })
			p := sqlrewrite.NewParser(cat)
			for _, column := range []string{"d", "ts"} {
				for _, mode := range []int{0, 3} {
					key := fmt.Sprintf("YEARWEEK(%s, %d)", column, mode)
					if mode == 0 {
						key = fmt.Sprintf("YEARWEEK(%s)", column)
					}
					st, err := p.Parse("SELECT " + key + ", COUNT(*) FROM dp_yearweeks GROUP BY 1")
					if err != nil {
						t.Fatalf("%s: %v", key, err)
					}
					k := st.(*sqlrewrite.Query).Keys[0]
					got := map[float64]int{}
					for i, n := range cellCounts(t, db, b.dialect, "dp_yearweeks", sqlrewrite.CellDim{Column: column, Date: &k.Date.Axis}) {
						got[k.Values[i].Num] = n
					}
					if !reflect.DeepEqual(got, want[mode]) {
						t.Errorf("%s: counts %v, want %v", key, got, want[mode])
					}
					if b.dialect != sqlrewrite.MySQL {
						continue
					}
					rows, err := db.Query(fmt.Sprintf("SELECT YEARWEEK(%s, %d), COUNT(*) FROM dp_yearweeks GROUP BY 1", column, mode))
					if err != nil {
						t.Fatal(err)
					}
					own := map[float64]int{}
					for _, r := range testdb.Strings(t, rows, key) {
						var label float64
						var n int
						fmt.Sscan(r[0], &label)
						fmt.Sscan(r[1], &n)
						own[label] = n
					}
					if !reflect.DeepEqual(own, want[mode]) {
						t.Errorf("MariaDB's %s: counts %v, want %v", key, own, want[mode])
					}
				}
			}
		})
	}
}
