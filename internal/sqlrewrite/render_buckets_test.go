package sqlrewrite_test

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// bucketOf is the bucket the linear ladder CASE WHEN x < e_1 THEN 0 …
// WHEN x < e_{k-1} THEN k-2 ELSE k-1 END gives a readable x (NaN, below
// no edge, in the last).
func bucketOf(edges []float64, x float64) int {
	for i := 1; i < len(edges)-1; i++ {
		if x < edges[i] {
			return i - 1
		}
	}
	return len(edges) - 2
}

// randomEdges draws k+1 strictly increasing finite edges, their gaps
// from one ulp to 1e300 and their signs mixed.
func randomEdges(rng *rand.Rand, k int) []float64 {
	scale := math.Pow(10, float64(rng.IntN(401)-100))
	e := []float64{(rng.Float64() - 0.7) * scale}
	for len(e) < k+1 {
		last := e[len(e)-1]
		var next float64
		switch rng.IntN(4) {
		case 0:
			next = math.Nextafter(last, math.Inf(1))
		case 1:
			next = last + rng.Float64()*scale
		case 2:
			next = last + math.Abs(last)*rng.Float64()
		default:
			next = math.Ceil(last) + float64(rng.IntN(3))
		}
		if !(next > last) || math.IsInf(next, 0) || math.Abs(next) > 1e300 {
			next = math.Nextafter(last, math.Inf(1))
		}
		// No magnitude below 1e-100 but 0, as the catalog's bounds
		// (MariaDB refuses subnormal literals).
		if next != 0 && math.Abs(next) < 1e-100 {
			next = 1e-100
			if last < 0 {
				next = 0
			}
		}
		e = append(e, next)
	}
	return e
}

// caseNode is a CASE of a bucket key, parsed: its comparisons col < edge
// in order, each with its result, and the ELSE's.
type caseNode struct {
	edges   []float64
	results []caseResult
	orElse  caseResult
}

// caseResult is a bucket index, or a nested CASE.
type caseResult struct {
	index int
	sub   *caseNode
}

// eval returns the bucket the CASE gives x and the comparisons it makes.
func (n *caseNode) eval(x float64) (bucket, comparisons int) {
	for i, e := range n.edges {
		comparisons++
		if x < e {
			b, c := n.results[i].eval(x)
			return b, comparisons + c
		}
	}
	b, c := n.orElse.eval(x)
	return b, comparisons + c
}

func (r caseResult) eval(x float64) (int, int) {
	if r.sub == nil {
		return r.index, 0
	}
	return r.sub.eval(x)
}

// parseBucketCase parses the WHENs and ELSE of a rendered bucket key
// after its unreadable WHEN (tokens separated by spaces, the key's
// column col), up to its END; it returns the tokens after that END.
func parseBucketCase(t *testing.T, toks []string, col string) (*caseNode, []string) {
	t.Helper()
	n := &caseNode{}
	result := func() caseResult {
		if toks[0] == "(CASE" {
			sub, rest := parseBucketCase(t, toks[1:], col)
			if rest[0] != "END)" {
				t.Fatalf("nested CASE ends with %q", rest[0])
			}
			toks = rest[1:]
			return caseResult{sub: sub}
		}
		i, err := strconv.Atoi(toks[0])
		if err != nil {
			t.Fatalf("result %q: %v", toks[0], err)
		}
		toks = toks[1:]
		return caseResult{index: i}
	}
	for toks[0] == "WHEN" {
		if toks[1] != col || toks[2] != "<" || toks[4] != "THEN" {
			t.Fatalf("unexpected WHEN %q", toks[:5])
		}
		e, err := strconv.ParseFloat(strings.Trim(toks[3], "()"), 64)
		if err != nil {
			t.Fatalf("edge %q: %v", toks[3], err)
		}
		toks = toks[5:]
		n.edges = append(n.edges, e)
		n.results = append(n.results, result())
	}
	if toks[0] != "ELSE" {
		t.Fatalf("expected ELSE, got %q", toks[0])
	}
	toks = toks[1:]
	n.orElse = result()
	return n, toks
}

// TestBucketKeysAreBalanced parses the bucket key a cells fetch renders,
// for every number of buckets k from 1 to 300 on random edges, and
// evaluates it on each edge, the values one ulp on either side, both
// zeros, values beyond the ends, ±Inf and NaN: each gets the linear
// ladder's bucket, and above eight buckets every value makes ⌊log2 k⌋ or
// ⌈log2 k⌉ comparisons (the linear ladder made up to k-1, so the
// backend's time depended on where the values fall).
func TestBucketKeysAreBalanced(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 2026))
	const prefix = "SELECT k0, COUNT(*) FROM (SELECT CASE WHEN NOT (typeof(`x`) IN ('integer', 'real')) THEN NULL "
	for k := 1; k <= 300; k++ {
		edges := randomEdges(rng, k)
		q, _, err := sqlrewrite.Render(sqlrewrite.Fetch{Table: "t", Cells: &sqlrewrite.Cells{Dims: []sqlrewrite.CellDim{{Column: "x", Edges: sqlrewrite.DoubleEdges(edges)}}}}, sqlrewrite.SQLite)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(q, prefix) {
			t.Fatalf("k=%d: unexpected query %.200s", k, q)
		}
		node, rest := parseBucketCase(t, strings.Split(strings.TrimPrefix(q, prefix), " "), "`x`")
		if rest[0] != "END" || rest[1] != "AS" {
			t.Fatalf("k=%d: key ends with %q", k, rest[:2])
		}
		values := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), -math.MaxFloat64, math.MaxFloat64}
		for _, e := range edges {
			values = append(values, e, math.Nextafter(e, math.Inf(1)), math.Nextafter(e, math.Inf(-1)))
		}
		lo, hi := math.Floor(math.Log2(float64(k))), math.Ceil(math.Log2(float64(k)))
		for _, x := range values {
			got, comparisons := node.eval(x)
			if want := bucketOf(edges, x); got != want {
				t.Fatalf("k=%d edges %v: %v in bucket %d, want %d", k, edges, x, got, want)
			}
			if k > 8 && (float64(comparisons) < lo || float64(comparisons) > hi) {
				t.Fatalf("k=%d: %v makes %d comparisons, want %v to %v", k, x, comparisons, lo, hi)
			}
		}
	}
}
