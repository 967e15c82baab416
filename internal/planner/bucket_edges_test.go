package planner_test

import (
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// bucketCatalog declares a real column x in [lo, hi].
func bucketCatalog(lo, hi float64) *catalog.Config {
	return &catalog.Config{Tables: []catalog.Table{{Name: "t", Source: "t", Columns: []catalog.Column{
		{Name: "x", Source: "x", Type: catalog.Real, Lower: &lo, Upper: &hi},
	}}}}
}

// TestBucketOfEdgeValue: the review's statement puts the row -1.8 in
// bucket -6 of width 0.3, as FLOOR(-1.8 / 0.3) is -6 in doubles (the
// edge of bucket -6 was -6 * 0.3, -1.7999999999999998, above -1.8).
func TestBucketOfEdgeValue(t *testing.T) {
	cat := bucketCatalog(-10, 10)
	q := "SELECT FLOOR(x / 0.3) AS b, COUNT(*) FROM t WHERE x BETWEEN -1.85 AND -1.75 GROUP BY b"
	st, err := sqlrewrite.NewParser(cat).Parse(q)
	if err != nil {
		t.Fatal(err)
	}
	qp, err := planner.New(cat).PlanQuery(st.(*sqlrewrite.Query), planner.Settings{Epsilon: 1, Mechanism: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	edges := qp.Dims[0].Edges
	if len(qp.Groups) != 2 || qp.Groups[0][0].Num != -7 || len(edges) != 3 {
		t.Fatalf("%s: groups %v, edges %v; want buckets -7 and -6", q, qp.Groups, edges)
	}
	if !(edges[1] <= -1.8) {
		t.Errorf("%s: the edge of bucket -6 is %v, above -1.8, which FLOOR puts in it", q, edges[1])
	}
}

// TestBucketsWithoutDoubles: buckets narrower than the doubles' spacing
// over the bounds, some holding no double, have no strictly increasing
// edges; the statement is refused as unsupported when planned (before
// any reservation), not failed when its fetch is rendered.
func TestBucketsWithoutDoubles(t *testing.T) {
	cat := bucketCatalog(1, 1+1e-12)
	q := "SELECT FLOOR(x / 2e-16) AS b, COUNT(*) FROM t GROUP BY b"
	st, err := sqlrewrite.NewParser(cat).Parse(q)
	if err != nil {
		t.Fatal(err)
	}
	_, err = planner.New(cat).PlanQuery(st.(*sqlrewrite.Query), planner.Settings{Epsilon: 1, Mechanism: "auto"})
	if dperr.KindOf(err) != dperr.Unsupported {
		t.Errorf("%s: %v, want unsupported", q, err)
	}
}
