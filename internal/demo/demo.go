// Package demo ships the census sample dpproxy's zero-configuration demo
// serves (see ATTRIBUTION.md for its source and licence), the demo
// configuration, and a loader that creates the sample table in any supported
// database (the embedded SQLite demo, and integration tests against
// PostgreSQL and MariaDB).
package demo

import (
	"bytes"
	"context"
	"database/sql"
	_ "embed"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
)

//go:embed pums.csv
var pumsCSV []byte

// PUMSColumns are the columns of the sample, in file order.
var PUMSColumns = []string{"age", "sex", "educ", "race", "income", "married"}

// PUMSRow is one person of the sample.
type PUMSRow struct {
	Age, Sex, Educ, Race int
	Income               float64
	Married              int
}

// PUMS returns the 1,000 rows of the sample.
func PUMS() []PUMSRow {
	recs, err := csv.NewReader(bytes.NewReader(pumsCSV)).ReadAll()
	if err != nil {
		panic(fmt.Sprintf("demo: embedded pums.csv: %v", err))
	}
	rows := make([]PUMSRow, 0, len(recs)-1)
	for _, r := range recs[1:] {
		n := make([]float64, len(r))
		for i, s := range r {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				panic(fmt.Sprintf("demo: embedded pums.csv: %v", err))
			}
			n[i] = v
		}
		rows = append(rows, PUMSRow{int(n[0]), int(n[1]), int(n[2]), int(n[3]), n[4], int(n[5])})
	}
	return rows
}

// LoadPUMS creates table name in db (dropping an existing one) and inserts
// the sample. driver is "sqlite", "postgres" or "mysql".
func LoadPUMS(ctx context.Context, db *sql.DB, driver, name string) error {
	realType := map[string]string{"sqlite": "REAL", "postgres": "DOUBLE PRECISION", "mysql": "DOUBLE"}[driver]
	if realType == "" {
		return fmt.Errorf("demo: unknown driver %q", driver)
	}
	stmts := []string{
		"DROP TABLE IF EXISTS " + name,
		fmt.Sprintf("CREATE TABLE %s (age INTEGER, sex INTEGER, educ INTEGER, race INTEGER, income %s, married INTEGER)", name, realType),
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("demo: %s: %w", s, err)
		}
	}
	rows := PUMS()
	const batch = 250
	for start := 0; start < len(rows); start += batch {
		end := min(start+batch, len(rows))
		var sb strings.Builder
		fmt.Fprintf(&sb, "INSERT INTO %s (age, sex, educ, race, income, married) VALUES ", name)
		for i, r := range rows[start:end] {
			if i > 0 {
				sb.WriteString(", ")
			}
			fmt.Fprintf(&sb, "(%d, %d, %d, %d, %s, %d)", r.Age, r.Sex, r.Educ, r.Race,
				strconv.FormatFloat(r.Income, 'f', -1, 64), r.Married)
		}
		if _, err := db.ExecContext(ctx, sb.String()); err != nil {
			return fmt.Errorf("demo: insert: %w", err)
		}
	}
	return nil
}
