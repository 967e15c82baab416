package demo

import (
	"testing"
	"time"
)

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
