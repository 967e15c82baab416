package demo

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// VisitRow is one row of the visits table: one visit of a person of the
// PUMS sample. PersonID is the privacy unit; Age and Income are the
// person's own (repeated on each of their rows), Spend, Site and
// VisitDate are the visit's (VisitDate as 'YYYY-MM-DD').
type VisitRow struct {
	PersonID  int
	Age       int
	Income    float64
	Spend     float64
	Site      string
	VisitDate string
}

// VisitsFirstDay and VisitsLastDay bound the visit dates: every visit
// falls on a day of [2019-01-01, 2024-12-31].
const (
	VisitsFirstDay = "2019-01-01"
	VisitsLastDay  = "2024-12-31"
)

// VisitSites are the sites of Visits, most visited first: some names hold
// quotes, accents and non-Latin script, so grouping by them exercises text
// keys end to end. No two are equal under a case- and accent-insensitive
// collation (MariaDB's default), so every backend groups them alike.
var VisitSites = []string{
	"Oslo", "Lyon", "São Paulo", "Zürich", "O'Hare", "東京", "Kraków", "Reykjavík", "Nairobi", "Lima",
	"Perth", "Quebec", "Dakar", "Hanoi", "Tbilisi", "Bergen", "Cork", "Tartu", "Ushuaia", "Nuuk",
	"Hobart", "Leh", "Iqaluit", "Thule",
}

// VisitsHermitSite is the site only the hermit visits: the first person
// with at least 30 visits makes every visit there, so it has many rows but
// one person (partition selection over persons never releases it).
const VisitsHermitSite = "Hermit's Hut"

// VisitsMaxRows is the most rows one person has in Visits.
const VisitsMaxRows = 50

// VisitsSpendUpper bounds Spend: every visit spends in [0, VisitsSpendUpper].
const VisitsSpendUpper = 1000

// Visits expands the 1,000 PUMS persons into a table with many rows per
// person: person i (PersonID i+1) has m ∈ [1, 50] visits with
// P[m] ∝ m^-1.5 (a heavy tail: mean about 5, one person in about 350 has
// 50), and each visit spends a whole amount in [0, 1000] that grows with the
// person's income and age, times a per-visit factor in [0.25, 1.75), on a
// day drawn uniformly from [VisitsFirstDay, VisitsLastDay]. The draws come
// from a splitmix64 stream started at seed, so the table is a pure
// function of the seed (about 5,000 rows).
//
// Site: each person has a home site drawn from VisitSites with P[i] ∝
// (i+1)^-1.3 (a skewed distribution: a few sites shared by hundreds of
// persons, a tail shared by a handful), and each visit is at home with
// probability 0.8, else at a site drawn from the same law; the hermit
// (VisitsHermitSite) excepted. Sites come from a second stream (seed with
// its bits flipped), and dates from a third (seed xor 0xd47e5d47e5d47e5d),
// so the other columns are those of the table without sites and dates.
func Visits(seed uint64) []VisitRow {
	next := splitmix(seed)
	uniform := func() float64 { return float64(next()>>11) * 0x1p-53 }
	nextSite := splitmix(^seed)
	uniformSite := func() float64 { return float64(nextSite()>>11) * 0x1p-53 }
	nextDay := splitmix(seed ^ 0xd47e5d47e5d47e5d)
	uniformDay := func() float64 { return float64(nextDay()>>11) * 0x1p-53 }
	first, _ := time.Parse(time.DateOnly, VisitsFirstDay)
	last, _ := time.Parse(time.DateOnly, VisitsLastDay)
	days := int(last.Sub(first).Hours()/24) + 1
	siteCumulative := make([]float64, len(VisitSites))
	siteTotal := 0.0
	for i := range VisitSites {
		siteTotal += math.Pow(float64(i+1), -1.3)
		siteCumulative[i] = siteTotal
	}
	drawSite := func() string {
		u := uniformSite() * siteTotal
		i := 0
		for i < len(VisitSites)-1 && siteCumulative[i] <= u {
			i++
		}
		return VisitSites[i]
	}
	hermit := false
	cumulative := make([]float64, VisitsMaxRows)
	total := 0.0
	for m := 1; m <= VisitsMaxRows; m++ {
		total += math.Pow(float64(m), -1.5)
		cumulative[m-1] = total
	}
	var rows []VisitRow
	for i, p := range PUMS() {
		u := uniform() * total
		m := 1
		for m < VisitsMaxRows && cumulative[m-1] <= u {
			m++
		}
		base := 20 + math.Min(p.Income, 200000)/1000 + float64(p.Age)
		home, isHermit := drawSite(), !hermit && m >= 30
		hermit = hermit || isHermit
		for range m {
			spend := math.Min(math.Round(base*(0.25+1.5*uniform())), VisitsSpendUpper)
			site := home
			switch {
			case isHermit:
				site = VisitsHermitSite
			case uniformSite() >= 0.8:
				site = drawSite()
			}
			day := first.AddDate(0, 0, int(uniformDay()*float64(days))).Format(time.DateOnly)
			rows = append(rows, VisitRow{PersonID: i + 1, Age: p.Age, Income: p.Income, Spend: spend, Site: site, VisitDate: day})
		}
	}
	return rows
}

// splitmix returns a splitmix64 stream started at seed.
func splitmix(seed uint64) func() uint64 {
	state := seed
	return func() uint64 {
		state += 0x9e3779b97f4a7c15
		z := state
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		return z ^ z>>31
	}
}

// LoadVisits creates table name in db (dropping an existing one) with the
// columns person_id, age, income, spend, site and visit_date (DATE; on
// SQLite text 'YYYY-MM-DD'), and inserts rows. driver is "sqlite",
// "postgres" or "mysql".
func LoadVisits(ctx context.Context, db *sql.DB, driver, name string, rows []VisitRow) error {
	realType := map[string]string{"sqlite": "REAL", "postgres": "DOUBLE PRECISION", "mysql": "DOUBLE"}[driver]
	if realType == "" {
		return fmt.Errorf("demo: unknown driver %q", driver)
	}
	textType := map[string]string{"sqlite": "TEXT", "postgres": "TEXT", "mysql": "VARCHAR(64)"}[driver]
	for _, s := range []string{
		"DROP TABLE IF EXISTS " + name,
		fmt.Sprintf("CREATE TABLE %s (person_id INTEGER, age INTEGER, income %s, spend %s, site %s, visit_date DATE)", name, realType, realType, textType),
	} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("demo: %s: %w", s, err)
		}
	}
	const batch = 500
	for start := 0; start < len(rows); start += batch {
		end := min(start+batch, len(rows))
		var sb strings.Builder
		fmt.Fprintf(&sb, "INSERT INTO %s (person_id, age, income, spend, site, visit_date) VALUES ", name)
		for i, r := range rows[start:end] {
			if i > 0 {
				sb.WriteString(", ")
			}
			if strings.ContainsAny(r.Site, "\\\x00") {
				return fmt.Errorf("demo: site %q: backslashes and NUL are not loaded", r.Site)
			}
			fmt.Fprintf(&sb, "(%d, %d, %s, %s, '%s', '%s')", r.PersonID, r.Age,
				strconv.FormatFloat(r.Income, 'f', -1, 64), strconv.FormatFloat(r.Spend, 'f', -1, 64), strings.ReplaceAll(r.Site, "'", "''"), r.VisitDate)
		}
		if _, err := db.ExecContext(ctx, sb.String()); err != nil {
			return fmt.Errorf("demo: insert: %w", err)
		}
	}
	return nil
}
