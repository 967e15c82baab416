package demo

import (
	"fmt"
	"testing"
	"time"
)

// pinnedSpend is the spend of the first two and the last row of Visits(13),
// as drawn before the sites were added.
const pinnedSpend = "59 95 63"

// TestVisitsIsSeededAndHeavyTailed: the expansion is a function of the
// seed, every person has 1..50 rows, and the tail is heavy (some persons
// have 30 or more rows, most have few).
func TestVisitsIsSeededAndHeavyTailed(t *testing.T) {
	a, b := Visits(7), Visits(7)
	if len(a) != len(b) || a[len(a)/2] != b[len(b)/2] {
		t.Fatal("Visits(7) differs between calls")
	}
	perPerson := map[int]int{}
	years := map[string]int{}
	for _, r := range a {
		perPerson[r.PersonID]++
		if r.Spend < 0 || r.Spend > VisitsSpendUpper {
			t.Fatalf("spend %v outside [0, %d]", r.Spend, VisitsSpendUpper)
		}
		if d, err := time.Parse(time.DateOnly, r.VisitDate); err != nil || r.VisitDate < VisitsFirstDay || r.VisitDate > VisitsLastDay || d.Format(time.DateOnly) != r.VisitDate {
			t.Fatalf("visit date %q is not a day of [%s, %s]", r.VisitDate, VisitsFirstDay, VisitsLastDay)
		}
		years[r.VisitDate[:4]]++
	}
	var one, many, most int
	for _, m := range perPerson {
		most = max(most, m)
		switch {
		case m == 1:
			one++
		case m >= 30:
			many++
		}
		if m < 1 || m > VisitsMaxRows {
			t.Fatalf("a person has %d rows", m)
		}
	}
	if len(perPerson) != 1000 || one < 300 || many < 2 {
		t.Errorf("%d persons, %d with one row, %d with ≥ 30 rows", len(perPerson), one, many)
	}
	// Six years drawn uniformly: each holds a sixth of the rows, ± 5%.
	for y, n := range years {
		if len(years) != 6 || n < len(a)/6-len(a)/20 || n > len(a)/6+len(a)/20 {
			t.Errorf("year %s has %d of %d rows (%d years)", y, n, len(a), len(years))
		}
	}
	t.Logf("%d rows, %d persons, %d with one row, %d with ≥ 30, most %d", len(a), len(perPerson), one, many, most)
}

// TestVisitsSites: the sites are a function of the seed, skewed (the most
// visited site is shared by many persons, some by few), the hermit's site
// has one person and at least 30 rows, and adding the sites left the
// other columns as the stream without sites drew them (the first rows'
// spend is pinned).
func TestVisitsSites(t *testing.T) {
	rows := Visits(13)
	persons := map[string]map[int]bool{}
	perSite := map[string]int{}
	for _, r := range rows {
		if persons[r.Site] == nil {
			persons[r.Site] = map[int]bool{}
		}
		persons[r.Site][r.PersonID] = true
		perSite[r.Site]++
	}
	if h := persons[VisitsHermitSite]; len(h) != 1 || perSite[VisitsHermitSite] < 30 {
		t.Errorf("hermit site: %d persons, %d rows", len(h), perSite[VisitsHermitSite])
	}
	top, few := 0, 0
	for _, s := range VisitSites {
		top = max(top, len(persons[s]))
		if len(persons[s]) < 30 {
			few++
		}
	}
	if top < 300 || few < 3 || len(persons) > len(VisitSites)+1 {
		t.Errorf("sites not skewed: most persons %d, sites with < 30 persons %d, %d sites", top, few, len(persons))
	}
	var counts []string
	for _, s := range append(VisitSites, VisitsHermitSite) {
		counts = append(counts, fmt.Sprintf("%s:%d/%d", s, len(persons[s]), perSite[s]))
	}
	t.Logf("persons/rows per site: %v", counts)
	if got := fmt.Sprint(rows[0].Spend, rows[1].Spend, rows[len(rows)-1].Spend); got != pinnedSpend {
		t.Errorf("spend of rows 0, 1, last = %s, want %s (the sites' stream must not move the other columns)", got, pinnedSpend)
	}
}
