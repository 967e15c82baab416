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
	if !(edges[1].Num <= -1.8) {
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

// planBuckets parses and plans q over cat.
func planBuckets(t *testing.T, cat *catalog.Config, q string) (*planner.QueryPlan, error) {
	t.Helper()
	st, err := sqlrewrite.NewParser(cat).Parse(q)
	if err != nil {
		return nil, err
	}
	return planner.New(cat).PlanQuery(st.(*sqlrewrite.Query), planner.Settings{Epsilon: 1, Mechanism: "auto"})
}

// TestIntegerBucketsBeyond2p53: the buckets of FLOOR(n / 5) * 5 of a
// BIGINT n from 2^53 on start at the integers 5k, odd ones no doubles:
// bucket 1801439850948201 is labelled 9007199254741005 exactly, and its
// rows are compared with that integer, not with 9007199254741006, the
// least double of the bucket, which left 9007199254741005 in the bucket
// below.
func TestIntegerBucketsBeyond2p53(t *testing.T) {
	lo, hi := float64(1<<53), float64(1<<53+10008)
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "t", Source: "t", Columns: []catalog.Column{
		{Name: "n", Source: "n", Type: catalog.Integer, Lower: &lo, Upper: &hi},
	}}}}
	qp, err := planBuckets(t, cat, "SELECT FLOOR(n / 5) * 5 AS b, COUNT(*) FROM t GROUP BY b")
	if err != nil {
		t.Fatal(err)
	}
	key := qp.Query.Keys[0]
	g := int(1801439850948201 - key.First)
	if v := key.Values[g]; v.Decimal != "9007199254741005" {
		t.Errorf("bucket 1801439850948201 is labelled %+v, want the digits 9007199254741005", v)
	}
	if e := qp.Dims[0].Edges[g]; e.Exact != "9007199254741005" {
		t.Errorf("bucket 1801439850948201 starts at %+v, want 9007199254741005 exactly", e)
	}
	if r := qp.GroupFilters[g][0].Range; r == nil || r.LowerExact != "9007199254741005" || r.UpperExact != "" || r.Upper != 9007199254741010 {
		t.Errorf("bucket 1801439850948201's filter is %+v, want [9007199254741005, 9007199254741010)", r)
	}
}

// TestBucketRanges: buckets are refused (1235, when planned) where the
// answer could not be MySQL's: x DIV w of a DOUBLE beyond what MariaDB's
// DECIMAL holds (x DIV 2e96 over [0, 1e100] overflows with warning 1916;
// a width of 1e-40 has more than 38 digits after the point), and bucket
// numbers beyond 2^53, which are no consecutive doubles (planning FLOOR(x
// / 1) over [2^62, 2^62 + 4096] never ended: its loop over the bucket
// numbers added 1 to 2^62, which stays 2^62); a DIV within the range is
// answered.
func TestBucketRanges(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		key    string
		ok     bool
	}{
		{0, 1e100, "x DIV 2e96", false},
		{0, 1e64, "x DIV 2e60", true},
		{0, 1e-37, "x DIV 1e-40", false},
		{0, 1e-35, "x DIV 1e-38", true},
		{0, 1e-35, "x DIV 0.00000000000000000000000000000000000001", true},
		{1 << 62, 1<<62 + 4096, "FLOOR(x / 1)", false},
		{1 << 52, 1<<52 + 4096, "FLOOR(x / 1)", true},
	} {
		q := "SELECT " + c.key + " AS b, COUNT(*) FROM t GROUP BY b"
		_, err := planBuckets(t, bucketCatalog(c.lo, c.hi), q)
		if c.ok && err != nil {
			t.Errorf("%s over [%g, %g]: %v", q, c.lo, c.hi, err)
		}
		if !c.ok && dperr.KindOf(err) != dperr.Unsupported {
			t.Errorf("%s over [%g, %g]: %v, want unsupported", q, c.lo, c.hi, err)
		}
	}
}
