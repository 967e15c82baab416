package backend

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// Cells runs a cells fetch and returns the count of every cell of the
// product domain, indexed in mixed radix with the first dimension most
// significant (the order of mech.MMPredicate's cells).
func (s *Snapshot) Cells(ctx context.Context, f sqlrewrite.Fetch) ([]int64, error) {
	if f.Cells == nil || len(f.Cells.Dims) == 0 {
		return nil, dperr.New(dperr.Internal, "internal error: cells fetch without dimensions")
	}
	sizes := make([]int64, len(f.Cells.Dims))
	total := int64(1)
	for i, d := range f.Cells.Dims {
		sizes[i] = d.Size()
		total *= sizes[i]
	}
	counts := make([]int64, total)
	err := s.b.query(ctx, s.q, f, func(rows *sql.Rows) error {
		keys := make([]int64, len(sizes)+1)
		dest := make([]any, len(keys))
		for i := range keys {
			dest[i] = &keys[i]
		}
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				return err
			}
			var cell int64
			for i, k := range keys[:len(sizes)] {
				if k < 0 || k >= sizes[i] {
					return fmt.Errorf("cell key %d of dimension %d out of range", k, i)
				}
				cell = cell*sizes[i] + k
			}
			counts[cell] += keys[len(sizes)]
		}
		return nil
	})
	return counts, err
}
