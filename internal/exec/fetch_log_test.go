package exec

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// logRecords keeps every record logged, at every level, as its message
// and its attributes' values as text.
type logRecords struct {
	mu      sync.Mutex
	records []loggedRecord
}

type loggedRecord struct {
	msg   string
	attrs map[string]string
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	rec := loggedRecord{msg: r.Message, attrs: map[string]string{}}
	r.Attrs(func(a slog.Attr) bool {
		rec.attrs[a.Key] = a.Value.String()
		return true
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, rec)
	return nil
}
func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecords) WithGroup(string) slog.Handler      { return l }

// taken returns the records logged since the last call and forgets them.
func (l *logRecords) taken() []loggedRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.records
	l.records = nil
	return out
}

// TestFetchLogHoldsNoExactCount runs statements whose mechanisms fetch
// windows of order statistics placed by the exact count (a median's
// window around rank ⌊(n−1)/2⌋+1, PTR's, a percentile's, piecewise
// variance's smallest and largest grid indices, the trimmed mean's ranks
// between its windows, preprocessing's) on SQLite, PostgreSQL and
// MariaDB, over 7,919 rows (7,837 incomes, 4,058 rows aged 20 to 60),
// with the backend's log captured at debug level. No record holds one of
// those counts, and every LIMIT and OFFSET in a logged fetch is a
// placeholder: the text sent, which the backend logs, holds no number
// placed by the data, the ranks being bind arguments, which it does not
// log. Before, the log held LIMIT 4017 OFFSET 0 (preprocessing read
// every income of the 4,017 rows aged 20 to 60) and OFFSET 7751 (n − 86).
func TestFetchLogHoldsNoExactCount(t *testing.T) {
	lo, hiAge, hiIncome := 0.0, 100.0, 500000.0
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "pums", Source: "pums", Columns: []catalog.Column{
		{Name: "age", Source: "age", Type: catalog.Integer, Lower: &lo, Upper: &hiAge},
		{Name: "income", Source: "income", Type: catalog.Real, Lower: &lo, Upper: &hiIncome},
	}}}}
	const rows = 7919
	var values []string
	counts := map[int]bool{rows: true}
	incomes, aged, agedIncomes, over30 := 0, 0, 0, 0
	for i := range rows {
		age := 10 + (i*37)%80
		income := "NULL"
		if i%97 != 0 {
			income = fmt.Sprintf("%d.25", (i*7907)%100003)
			incomes++
		}
		if age >= 20 && age <= 60 {
			aged++
			if income != "NULL" {
				agedIncomes++
			}
		}
		if age > 30 && income != "NULL" {
			over30++
		}
		values = append(values, fmt.Sprintf("(%d, %s)", age, income))
	}
	for _, n := range []int{incomes, aged, agedIncomes, over30} {
		counts[n] = true
	}
	if incomes != 7837 || aged != 4058 {
		t.Fatalf("the table has %d incomes and %d rows aged 20 to 60, not the counts the comment names", incomes, aged)
	}
	statements := []struct {
		sql       string
		mechanism string
	}{
		{"SELECT COUNT(*), AVG(age), MEDIAN(income) FROM pums WHERE age BETWEEN 20 AND 60", "auto"},
		{"SELECT MEDIAN(income) FROM pums", "ptr"},
		{"SELECT PERCENTILE_CONT(income, 0.9) FROM pums WHERE age > 30", "auto"},
		{"SELECT VARIANCE(income) FROM pums", "piecewise"},
		{"SELECT AVG(income) FROM pums", "trimmed"},
		{"SELECT MEDIAN(income), VARIANCE(income) FROM pums WHERE age BETWEEN 20 AND 60", "preprocess"},
	}
	// A placeholder: ? (SQLite, MySQL) or $n (PostgreSQL).
	rankClause := regexp.MustCompile(`\b(LIMIT|OFFSET) (\S+)`)
	placeholder := regexp.MustCompile(`^(\?|\$[0-9]+)\)?$`)
	digits := regexp.MustCompile(`[0-9]+`)
	for _, b := range testBackends {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			for _, s := range []string{"CREATE TABLE pums (age INTEGER, income DOUBLE PRECISION)",
				"INSERT INTO pums (age, income) VALUES " + strings.Join(values, ", ")} {
				if _, err := db.Exec(s); err != nil {
					t.Fatalf("%.60s: %v", s, err)
				}
			}
			log := &logRecords{}
			e := newGroupedExecutor(t, backend.New(db, b.dialect, slog.New(log)))
			windows := 0
			for _, st := range statements {
				parsed, err := sqlrewrite.NewParser(cat).Parse(st.sql)
				if err != nil {
					t.Fatal(err)
				}
				plan, err := planner.New(cat).Plan(parsed.(*sqlrewrite.Select), planner.Settings{Epsilon: 1, Delta: 1e-6, Mechanism: st.mechanism})
				if err != nil {
					t.Fatalf("%s (%s): %v", st.sql, st.mechanism, err)
				}
				if _, err := e.Run(context.Background(), "a", plan, rand.NewChaCha8([32]byte{1})); err != nil {
					t.Fatalf("%s (%s): %v", st.sql, st.mechanism, err)
				}
				for _, rec := range log.taken() {
					for key, v := range rec.attrs {
						if key == "elapsed" {
							continue // a duration's digits may spell anything
						}
						for _, d := range digits.FindAllString(v, -1) {
							if n, _ := strconv.Atoi(d); counts[n] {
								t.Errorf("%s (%s): %q logged with the exact count %d in %s: %s", st.sql, st.mechanism, rec.msg, n, key, v)
							}
						}
					}
					for _, m := range rankClause.FindAllStringSubmatch(rec.attrs["sql"], -1) {
						windows++
						if !placeholder.MatchString(m[2]) {
							t.Errorf("%s (%s): %q logged %s %s: %s", st.sql, st.mechanism, rec.msg, m[1], m[2], rec.attrs["sql"])
						}
					}
				}
			}
			if windows == 0 {
				t.Error("no window fetch logged: the test reads nothing")
			}
		})
	}
}
