package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/demo"
)

// loadDemo creates the demo's census table in a database: the quickest way
// to try dpproxy in front of PostgreSQL or MariaDB.
func loadDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("dpproxy load-demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	driver := fs.String("driver", "", "sqlite, postgres or mysql")
	dsn := fs.String("dsn", "", "data source name of the database")
	table := fs.String("table", "pums", "table to create (an existing one is replaced)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *driver == "" || *dsn == "" {
		return errors.New("load-demo needs --driver and --dsn")
	}
	if _, err := backend.Dialect(*driver); err != nil {
		return err
	}
	db, err := sql.Open(*driver, *dsn)
	if err != nil {
		return backend.RedactDSN(err, *dsn)
	}
	defer db.Close()
	if err := demo.LoadPUMS(ctx, db, *driver, *table); err != nil {
		// The driver may read the DSN only now, and quote it.
		return backend.RedactDSN(err, *dsn)
	}
	fmt.Fprintf(stdout, "loaded %d rows into %s\n", len(demo.PUMS()), *table)
	return nil
}
