package planner

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

func closed(lo, hi float64) sqlrewrite.Range {
	return sqlrewrite.Range{Lower: lo, Upper: hi, HasLower: true, HasUpper: true}
}

func TestConditionSpans(t *testing.T) {
	ages := Domain{Lower: 0, Upper: 101, Bins: 101, Integer: true}      // one bin per year
	coarse := Domain{Lower: 0, Upper: 10000, Bins: 4096, Integer: true} // 2.44 years per bin
	income := Domain{Lower: 0, Upper: 500000, Bins: 1000}
	open := sqlrewrite.Range{Lower: 17.5, Upper: 25, HasLower: true, HasUpper: true, UpperOpen: true}
	for _, tc := range []struct {
		name string
		d    Domain
		c    sqlrewrite.Condition
		want Spans
		ok   bool
	}{
		{"integer closed range", ages, sqlrewrite.Condition{Range: pointerTo(closed(18, 24))}, Spans{{18, 25}}, true},
		{"integer open ends", ages, sqlrewrite.Condition{Range: &open}, Spans{{18, 25}}, true},
		{"clipped below", ages, sqlrewrite.Condition{Range: pointerTo(closed(-10, 5))}, Spans{{0, 6}}, true},
		{"clipped above", ages, sqlrewrite.Condition{Range: pointerTo(closed(90, 500))}, Spans{{90, 101}}, true},
		{"outside", ages, sqlrewrite.Condition{Range: pointerTo(closed(200, 300))}, nil, true},
		{"unbounded", ages, sqlrewrite.Condition{Range: &sqlrewrite.Range{Lower: 65, HasLower: true}}, Spans{{65, 101}}, true},
		{"IN merges touching cells", ages, sqlrewrite.Condition{In: []sqlrewrite.Value{{Num: 19}, {Num: 18}, {Num: 30}, {Num: 30.5}}}, Spans{{18, 20}, {30, 31}}, true},
		{"fractional cells", coarse, sqlrewrite.Condition{Range: pointerTo(closed(0, 99))}, Spans{{0, 40.96}}, true},
		{"real range", income, sqlrewrite.Condition{Range: pointerTo(closed(50000, 75250))}, Spans{{100, 150.5}}, true},
		{"real equality", income, sqlrewrite.Condition{In: []sqlrewrite.Value{{Num: 1000}}}, nil, false},
	} {
		got, u := tc.d.columnSpans("c", []sqlrewrite.Condition{tc.c})
		if (u == nil) != tc.ok || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: got %v %v, want %v %v", tc.name, got, u, tc.want, tc.ok)
		}
	}
}

// TestRealRangeEndsOnBinEdges: on a real column with 10 bins over
// [0, 10], the database puts a value on an edge in the bin above it (10,
// the upper bound, in the cell [10, 11) of its own). An end exactly on an edge is answered
// when the span takes or leaves the edge value's bin as the range takes or
// leaves the value; otherwise it asks for the rows holding exactly that
// value, which a synopsis cannot count (x <= 5 was read as x < 5, every
// row with x = 5 dropped, with no note). Ranges on the column intersect
// first, so x <= 5 AND x < 3 is x < 3.
func TestRealRangeEndsOnBinEdges(t *testing.T) {
	d := Domain{Lower: 0, Upper: 10, Bins: 10}
	lower := func(v float64, open bool) sqlrewrite.Condition {
		return sqlrewrite.Condition{Range: &sqlrewrite.Range{Lower: v, HasLower: true, LowerOpen: open}}
	}
	upper := func(v float64, open bool) sqlrewrite.Condition {
		return sqlrewrite.Condition{Range: &sqlrewrite.Range{Upper: v, HasUpper: true, UpperOpen: open}}
	}
	between := func(lo, hi float64) sqlrewrite.Condition {
		return sqlrewrite.Condition{Range: pointerTo(closed(lo, hi))}
	}
	for _, tc := range []struct {
		name  string
		conds []sqlrewrite.Condition
		want  Spans
		why   string // a substring of the reason, "" when answered
	}{
		{"x < 5", []sqlrewrite.Condition{upper(5, true)}, Spans{{0, 5}}, ""},
		{"x >= 5", []sqlrewrite.Condition{lower(5, false)}, Spans{{5, 11}}, ""},
		{"x <= 5", []sqlrewrite.Condition{upper(5, false)}, nil, "x <= 5 ends exactly on an edge of the synopsis bins of the real column x (width 1), and the rows holding 5 are in the bin [5, 6)"},
		{"x > 5", []sqlrewrite.Condition{lower(5, true)}, nil, "x > 5 ends exactly on an edge"},
		{"x BETWEEN 2 AND 5", []sqlrewrite.Condition{between(2, 5)}, nil, "x <= 5 ends exactly on an edge"},
		{"x BETWEEN 2 AND 5.5", []sqlrewrite.Condition{between(2, 5.5)}, Spans{{2, 5.5}}, ""},
		{"x <= 5.5", []sqlrewrite.Condition{upper(5.5, false)}, Spans{{0, 5.5}}, ""},
		{"x <= 5 AND x < 3", []sqlrewrite.Condition{upper(5, false), upper(3, true)}, Spans{{0, 3}}, ""},
		{"x BETWEEN 7 AND 5", []sqlrewrite.Condition{between(7, 5)}, nil, ""},
		{"x BETWEEN 5.5 AND 5.5", []sqlrewrite.Condition{between(5.5, 5.5)}, nil, "select single values"},
		{"x >= 5.5 AND x <= 5.5", []sqlrewrite.Condition{lower(5.5, false), upper(5.5, false)}, nil, "select single values"},
		// At the bounds: 0 is in the bottom bin, 10 in its cell [10, 11),
		// which every end at 10 takes or leaves exactly.
		{"x <= 10", []sqlrewrite.Condition{upper(10, false)}, Spans{{0, 11}}, ""},
		{"x < 10", []sqlrewrite.Condition{upper(10, true)}, Spans{{0, 10}}, ""},
		{"x >= 10", []sqlrewrite.Condition{lower(10, false)}, Spans{{10, 11}}, ""},
		{"x > 10", []sqlrewrite.Condition{lower(10, true)}, nil, ""},
		{"x BETWEEN 5 AND 10", []sqlrewrite.Condition{between(5, 10)}, Spans{{5, 11}}, ""},
		{"x < 12", []sqlrewrite.Condition{upper(12, true)}, Spans{{0, 11}}, ""},
		{"x >= 9.5", []sqlrewrite.Condition{lower(9.5, false)}, Spans{{9.5, 11}}, ""},
		{"x >= 0", []sqlrewrite.Condition{lower(0, false)}, Spans{{0, 11}}, ""},
		{"x > 0", []sqlrewrite.Condition{lower(0, true)}, nil, "the rows holding 0 are in the bin [0, 1)"},
		{"x <= 0", []sqlrewrite.Condition{upper(0, false)}, nil, "x <= 0 ends exactly on an edge"},
		{"x < 0", []sqlrewrite.Condition{upper(0, true)}, nil, ""},
		// Ends outside the domain are clipped, as before.
		{"x > -1", []sqlrewrite.Condition{lower(-1, true)}, Spans{{0, 11}}, ""},
	} {
		got, u := d.columnSpans("x", tc.conds)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) || (u == nil) != (tc.why == "") || u != nil && !strings.Contains(u.String(), tc.why) {
			t.Errorf("%s: got %v %v, want %v and a reason with %q", tc.name, got, u, tc.want, tc.why)
		}
	}
	// An integer column gets its ends right: x <= 5 takes the cell [5, 6).
	ints := Domain{Lower: 0, Upper: 10, Bins: 10, Integer: true}
	if got, u := ints.columnSpans("k", []sqlrewrite.Condition{between(2, 5)}); u != nil || fmt.Sprint(got) != fmt.Sprint(Spans{{2, 6}}) {
		t.Errorf("integer k BETWEEN 2 AND 5: got %v %v, want [2, 6)", got, u)
	}
}

func pointerTo[T any](v T) *T { return &v }

func TestSpansIntersectUnion(t *testing.T) {
	a := Spans{{0, 10}, {20, 30}}
	b := Spans{{5, 25}}
	if got, want := a.intersect(b), (Spans{{5, 10}, {20, 25}}); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("intersect: got %v, want %v", got, want)
	}
	if got, want := a.union(Spans{{10, 20}}), (Spans{{0, 30}}); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("union: got %v, want %v", got, want)
	}
	if got, want := (Spans{{0.5, 3}, {7, 7.25}}).binRanges(8), [][2]int{{0, 2}, {7, 7}}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("bin ranges: got %v, want %v", got, want)
	}
}

func TestCanonicalPredicate(t *testing.T) {
	lo, hi := 0.0, 100.0
	tbl := &catalog.Table{Name: "t", Columns: []catalog.Column{
		{Name: "age", Type: catalog.Integer, Lower: &lo, Upper: &hi},
		{Name: "score", Type: catalog.Real, Lower: &lo, Upper: &hi},
		{Name: "state", Type: catalog.Text},
	}}
	rng := func(col string, r sqlrewrite.Range) sqlrewrite.Condition {
		return sqlrewrite.Condition{Column: col, Range: &r}
	}
	in := func(col string, vs ...sqlrewrite.Value) sqlrewrite.Condition {
		return sqlrewrite.Condition{Column: col, In: vs}
	}
	num := func(x float64) sqlrewrite.Value { return sqlrewrite.Value{Num: x} }
	str := func(s string) sqlrewrite.Value { return sqlrewrite.Value{Str: s, IsText: true} }
	for _, tc := range []struct {
		a, b []sqlrewrite.Condition
		want string
	}{
		{nil, nil, ""},
		// An integer range of one value is that value; column order is irrelevant.
		{[]sqlrewrite.Condition{in("age", num(30)), in("state", str("NY"), str("CA"))},
			[]sqlrewrite.Condition{in("STATE", str("CA"), str("NY"), str("CA")), rng("age", closed(29.5, 30.2))},
			`age in (30) and state in ("CA", "NY")`},
		// Ranges intersect; open integer ends close.
		{[]sqlrewrite.Condition{rng("age", sqlrewrite.Range{Lower: 17, HasLower: true, LowerOpen: true}), rng("age", closed(0, 64))},
			[]sqlrewrite.Condition{rng("age", closed(18, 64.9))},
			"age [18, 64]"},
		// Real ranges keep open ends; IN is filtered by the range.
		{[]sqlrewrite.Condition{rng("score", sqlrewrite.Range{Lower: 1.5, HasLower: true, LowerOpen: true}), in("age", num(1), num(2), num(50))},
			[]sqlrewrite.Condition{in("age", num(50), num(2), num(1), num(70)), rng("score", sqlrewrite.Range{Lower: 1.5, HasLower: true, LowerOpen: true}), rng("age", closed(1, 60))},
			"age in (1, 2, 50) and score (1.5, inf)"},
	} {
		a, b := canonicalPredicate(tbl, tc.a), canonicalPredicate(tbl, tc.b)
		if a != b || a != tc.want {
			t.Errorf("got %q and %q, want %q", a, b, tc.want)
		}
	}
}

// TestSynopsisCountsNearTruth builds synopses with every mechanism at a
// large ε from a known histogram and checks range and bucket answers.
// Seed from DPPROXY_TEST_SEED (default 1). At ε = 100 on 101 bins the
// noise of any range sum has a standard deviation below 1 for every
// mechanism (Identity: √101·√2/100 ≈ 0.14; the trees: at most 14 nodes
// of ⌈log2 101⌉ + 1 = 8 levels, each of scale at most 8/75 after DAWA's
// split), so a tolerance of 5 (over 5 standard deviations of a sum of
// Laplace terms, with DAWA's uniform spreading exact on this periodic
// histogram only up to its partition) fails with probability below 1e-6.
func TestSynopsisCountsNearTruth(t *testing.T) {
	seed := uint64(1)
	if s := os.Getenv("DPPROXY_TEST_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("seed %d", seed)
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed)
	src := rand.NewChaCha8(key)
	hist := make([]int64, 101)
	for j := range hist {
		hist[j] = int64(j % 7 * 10)
	}
	d := Domain{Lower: 0, Upper: 101, Bins: 101, Integer: true}
	for _, m := range []string{catalog.SynopsisDAWA, catalog.SynopsisGreedyH, catalog.SynopsisH2, catalog.SynopsisIdentity} {
		for _, w := range []string{catalog.WorkloadAllRanges, catalog.WorkloadPrefix, catalog.WorkloadUniformIntervals, catalog.WorkloadFirstStatement} {
			spec := &SynopsisSpec{Domain: d, Config: catalog.Histogram{Bins: 101, Epsilon: 100, Mechanism: m, Workload: catalog.Workload{Kind: w}},
				Observed: [][2]int{{18, 34}, {20, 29}}}
			syn, err := spec.Build(src, hist)
			if err != nil {
				t.Fatalf("%s/%s: %v", m, w, err)
			}
			a := &SynopsisAnswer{Spans: d.rangeSpan(closed(18, 34))}
			var want int64
			for j := 18; j <= 34; j++ {
				want += hist[j]
			}
			if got := a.Count(syn, nil); math.Abs(float64(got-want)) > 5 {
				t.Errorf("%s/%s: range [18, 34]: got %d, want %d ± 5", m, w, got, want)
			}
			bucket := Span{20, 30}
			want = 0
			for j := 20; j <= 30; j++ { // the bucket [20, 30) within [18, 35)
				if j < 30 {
					want += hist[j]
				}
			}
			if got := a.Count(syn, &bucket); math.Abs(float64(got-want)) > 5 {
				t.Errorf("%s/%s: bucket [20, 30): got %d, want %d ± 5", m, w, got, want)
			}
		}
	}
}

// TestAutoMechanismRule pins the rule read from the benchmark.
func TestAutoMechanismRule(t *testing.T) {
	for _, tc := range []struct {
		eps  float64
		bins int
		want string
	}{
		{0.01, 4096, catalog.SynopsisDAWA}, {2, 1 << 20, catalog.SynopsisDAWA}, {5, 4096, catalog.SynopsisGreedyH},
		{0.1, 1024, catalog.SynopsisDAWA}, {0.5, 2048, catalog.SynopsisGreedyH},
		{0.01, 1023, catalog.SynopsisGreedyH}, {1, 101, catalog.SynopsisGreedyH},
	} {
		if got := chooseSynopsisMechanism(tc.eps, tc.bins); got != tc.want {
			t.Errorf("ε=%v, %d bins: got %s, want %s", tc.eps, tc.bins, got, tc.want)
		}
	}
}

// TestSynopsisKeyIncludesConfiguration: a synopsis built under one
// histogram configuration must not answer for another, so every field that
// changes the release (ε, mechanism, workload kind and ranges) changes the
// key, and nothing else does. (The key of v1 held only the table, column,
// domain and predicate: every case below but "same" collided.)
func TestSynopsisKeyIncludesConfiguration(t *testing.T) {
	lo, hi := 0.0, 100.0
	base := catalog.Histogram{Bins: 101, Epsilon: 1, Mechanism: catalog.SynopsisAuto, Workload: catalog.Workload{Kind: catalog.WorkloadAllRanges}}
	key := func(h catalog.Histogram) string {
		col := catalog.Column{Name: "Age", Type: catalog.Integer, Lower: &lo, Upper: &hi, Histogram: &h}
		tbl := &catalog.Table{Name: "T", Columns: []catalog.Column{col}}
		return synopsisKey(tbl, &tbl.Columns[0], Domain{Lower: 0, Upper: 101, Bins: 101, Integer: true}, "", nil)
	}
	same := key(base)
	if again := key(base); again != same {
		t.Fatalf("key not deterministic: %q and %q", same, again)
	}
	for name, change := range map[string]func(*catalog.Histogram){
		"epsilon":        func(h *catalog.Histogram) { h.Epsilon = 2 },
		"epsilon by ulp": func(h *catalog.Histogram) { h.Epsilon = math.Nextafter(1, 2) },
		"mechanism":      func(h *catalog.Histogram) { h.Mechanism = catalog.SynopsisDAWA },
		"workload kind":  func(h *catalog.Histogram) { h.Workload.Kind = catalog.WorkloadPrefix },
		"workload ranges": func(h *catalog.Histogram) {
			h.Workload = catalog.Workload{Kind: catalog.WorkloadRanges, Ranges: [][2]float64{{0, 10}}}
		},
	} {
		h := base
		change(&h)
		if got := key(h); got == same {
			t.Errorf("%s changed but the key did not: %q", name, got)
		}
	}
	a := key(catalog.Histogram{Bins: 101, Epsilon: 1, Workload: catalog.Workload{Kind: catalog.WorkloadRanges, Ranges: [][2]float64{{0, 10}}}})
	b := key(catalog.Histogram{Bins: 101, Epsilon: 1, Workload: catalog.Workload{Kind: catalog.WorkloadRanges, Ranges: [][2]float64{{0, 10}, {20, 30}}}})
	if a == b {
		t.Errorf("different workload ranges share the key %q", a)
	}
}

// TestSynopsisEpsilonRange builds every synopsis mechanism, with every
// workload, at both ends of the ε range the catalog accepts for a synopsis
// and at the largest and smallest domains: the configuration's limits
// (catalog.MinSynopsisEpsilon, MaxReleaseEpsilon, MaxHistogramBins) leave
// no synopsis that is reserved for and then fails to build. The histogram
// is public (zeros), so is the noise stream.
func TestSynopsisEpsilonRange(t *testing.T) {
	if catalog.MinStatementDelta != mech.MinDelta {
		t.Errorf("catalog.MinStatementDelta %v, mech.MinDelta %v", catalog.MinStatementDelta, mech.MinDelta)
	}
	if catalog.MinReleaseEpsilon != mech.MinEpsilon || catalog.MaxReleaseEpsilon != mech.MaxEpsilon {
		t.Fatalf("catalog's release ε range [%v, %v] differs from mech's [%v, %v]",
			catalog.MinReleaseEpsilon, catalog.MaxReleaseEpsilon, mech.MinEpsilon, float64(mech.MaxEpsilon))
	}
	for _, bins := range []int{1, 2, 4096, 1 << 16} {
		d := Domain{Lower: 0, Upper: 1, Bins: bins}
		hist := make([]int64, d.Cells()) // a real column's bins and the cell of its upper bound
		for _, m := range []string{catalog.SynopsisDAWA, catalog.SynopsisGreedyH, catalog.SynopsisH2, catalog.SynopsisIdentity} {
			for _, eps := range []float64{catalog.MinSynopsisEpsilon, catalog.MaxReleaseEpsilon} {
				workloads := []string{catalog.WorkloadAllRanges, catalog.WorkloadPrefix, catalog.WorkloadUniformIntervals, catalog.WorkloadFirstStatement}
				if bins > 4096 {
					workloads = workloads[1:2] // the others are slow at this size; the ε checks do not depend on them
				}
				for _, w := range workloads {
					spec := &SynopsisSpec{Domain: d, Config: catalog.Histogram{Bins: bins, Epsilon: eps, Mechanism: m, Workload: catalog.Workload{Kind: w}}}
					if _, err := spec.Build(noise.NewStream(1), hist); err != nil {
						t.Errorf("%s/%s, %d bins, ε = %v: %v", m, w, bins, eps, err)
					}
				}
			}
		}
	}
}

// TestSynopsisKeyKeepsUnitAsWritten: the privacy unit is a backend column
// and, like the relation (relationIdentity), is named in the key as
// written, in a synopsis's key and an interactive instance's: "PersonID"
// and "personid" may be different columns (quoted PostgreSQL
// identifiers), whose releases must not be shared. Before, the unit was
// lower-cased while the relation was not.
func TestSynopsisKeyKeepsUnitAsWritten(t *testing.T) {
	lo, hi := 0.0, 100.0
	h := catalog.Histogram{Bins: 101, Epsilon: 1, Workload: catalog.Workload{Kind: catalog.WorkloadAllRanges}}
	key := func(unit string) string {
		col := catalog.Column{Name: "age", Type: catalog.Integer, Lower: &lo, Upper: &hi, Histogram: &h}
		tbl := &catalog.Table{Name: "t", Source: "People", PrivacyUnit: unit, MaxRowsPerUnit: 1, Columns: []catalog.Column{col}}
		return synopsisKey(tbl, &tbl.Columns[0], Domain{Lower: 0, Upper: 101, Bins: 101, Integer: true}, "", nil)
	}
	upper, lower := key("PersonID"), key("personid")
	if upper == lower || !strings.Contains(upper, "|unit=PersonID|") || !strings.Contains(upper, "source=People") {
		t.Errorf("keys %q and %q: want the unit as written, as the source is", upper, lower)
	}
	// So is an interactive instance's key.
	interactive := func(unit string) string {
		return interactiveKey(&catalog.Table{Name: "t", Source: "People", PrivacyUnit: unit, MaxRowsPerUnit: 1}, &catalog.Interactive{})
	}
	if upper, lower := interactive("PersonID"), interactive("personid"); upper == lower || !strings.Contains(upper, "|unit=PersonID|") {
		t.Errorf("interactive keys %q and %q: want the unit as written", upper, lower)
	}
}
