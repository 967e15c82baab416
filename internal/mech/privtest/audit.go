package privtest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
)

// Mechanism runs the mechanism under audit once on dataset D (neighbour 0)
// or on its neighbour D' (neighbour 1), drawing all randomness from src,
// and returns the outcome. A discrete mechanism returns its output as a
// float64; NaN is an outcome of its own (for example a refusal ⊥).
type Mechanism func(src rand.Source, neighbour int) float64

// Config describes one audit.
type Config struct {
	// Epsilon and Delta are the claimed guarantee.
	Epsilon, Delta float64
	// Samples is the number of runs on each dataset.
	Samples int
	// Seed keys the random streams (see Seed and NewSource).
	Seed uint64
	// Confidence is the probability that a correct mechanism passes;
	// 0 means DefaultConfidence.
	Confidence float64
	// Edges, ascending, cut the outcomes into buckets (-∞, e0), [e0, e1),
	// ..., [e_last, +∞). When empty, Bins buckets are cut at quantiles of
	// a separate pilot run (so edges and counts are independent).
	Edges []float64
	// Bins is the number of pilot buckets; 0 means DefaultBins.
	Bins int
}

// Defaults of Config.
const (
	DefaultConfidence = 0.999
	DefaultBins       = 32
)

const (
	// maxPilot caps the pilot runs per dataset.
	maxPilot = 50000
	// minPointCount is the fewest outcomes per dataset of an event that
	// enters the point estimate.
	minPointCount = 1000
)

// Stream numbers of NewSource: one per dataset and phase.
const (
	streamD uint64 = iota + 1
	streamNeighbour
	streamPilotD
	streamPilotNeighbour
)

// Result is the outcome of an audit.
type Result struct {
	// LowerBound is ε̂_lb: with probability ≥ Confidence, the mechanism's
	// privacy loss on this pair of datasets is at least this (at the claimed δ).
	LowerBound float64
	// Event names the event and direction attaining LowerBound.
	Event string
	// PointEstimate is max ln((p̂ - δ)/p̂') over events with at least
	// 1000 outcomes on each dataset (sparser events only show sampling
	// noise): the plain empirical privacy loss, not a bound.
	PointEstimate float64
	// Events is the number of events in the Bonferroni correction.
	Events int
	// Edges are the bucket edges used.
	Edges []float64
}

// Audit runs Run and fails t if the lower bound on the privacy loss exceeds
// the claimed ε (or the configuration is invalid). It logs the seed, the
// bound and the point estimate.
func Audit(t Reporter, cfg Config, m Mechanism) Result {
	t.Helper()
	res, err := Run(cfg, m)
	if err != nil {
		t.Errorf("privacy audit: %v", err)
		return res
	}
	t.Logf("privacy audit (seed=%#x, %d samples per dataset, %d events): ε̂_lb=%.4f at %s, point estimate %.4f, claimed ε=%v δ=%v",
		cfg.Seed, cfg.Samples, res.Events, res.LowerBound, res.Event, res.PointEstimate, cfg.Epsilon, cfg.Delta)
	if res.LowerBound > cfg.Epsilon {
		t.Errorf("privacy audit: ε lower bound %.4f at %s exceeds the claimed ε=%v (confidence %v)",
			res.LowerBound, res.Event, cfg.Epsilon, confidence(cfg))
	}
	return res
}

// Run audits m: it draws cfg.Samples outcomes on each dataset, buckets them
// and returns the lower confidence bound of the package comment.
func Run(cfg Config, m Mechanism) (Result, error) {
	if err := validate(cfg); err != nil {
		return Result{}, err
	}
	pilot := pilotRun(cfg, m)
	edges := cfg.Edges
	if len(edges) == 0 {
		edges = pilotEdges(cfg, pilot)
	}
	var hist, pilotHist [2][]int
	for nb, stream := range []uint64{streamD, streamNeighbour} {
		hist[nb] = histogram(m, NewSource(cfg.Seed, stream), nb, cfg.Samples, edges)
		pilotHist[nb] = bucketize(pilot[nb], edges)
	}
	res := bound(cfg, edges, hist, pilotHist)
	res.Edges = edges
	return res, nil
}

// validate checks a Config.
func validate(cfg Config) error {
	switch {
	case !(cfg.Epsilon >= 0) || math.IsInf(cfg.Epsilon, 0):
		return fmt.Errorf("privtest: epsilon %v", cfg.Epsilon)
	case !(cfg.Delta >= 0 && cfg.Delta < 1):
		return fmt.Errorf("privtest: delta %v", cfg.Delta)
	case cfg.Samples < 1:
		return fmt.Errorf("privtest: %d samples", cfg.Samples)
	case cfg.Confidence != 0 && !(cfg.Confidence > 0 && cfg.Confidence < 1):
		return fmt.Errorf("privtest: confidence %v", cfg.Confidence)
	case !slices.IsSorted(cfg.Edges) || slices.ContainsFunc(cfg.Edges, math.IsNaN):
		return errors.New("privtest: edges must be ascending numbers")
	case cfg.Bins < 0:
		return fmt.Errorf("privtest: %d bins", cfg.Bins)
	}
	return nil
}

// confidence returns cfg.Confidence or its default.
func confidence(cfg Config) float64 {
	if cfg.Confidence == 0 {
		return DefaultConfidence
	}
	return cfg.Confidence
}

// pilotRun runs m on both datasets, on streams of their own (independent
// of the main run): its outcomes choose the bucket edges (when not given)
// and the ratio-ranked events, so both are fixed before the counts that
// the confidence bounds use are drawn.
func pilotRun(cfg Config, m Mechanism) [2][]float64 {
	bins := cfg.Bins
	if bins == 0 {
		bins = DefaultBins
	}
	// With the edges given the pilot only ranks the buckets by ratio:
	// an eighth of the samples does (a quarter when it also cuts edges).
	n := min(max(cfg.Samples/4, bins), maxPilot)
	if len(cfg.Edges) > 0 {
		n = min(max(cfg.Samples/8, bins), maxPilot)
	}
	var out [2][]float64
	for nb, stream := range []uint64{streamPilotD, streamPilotNeighbour} {
		src := NewSource(cfg.Seed, stream)
		for range n {
			out[nb] = append(out[nb], m(src, nb))
		}
	}
	return out
}

// pilotEdges cuts the pooled outcomes of the pilot run at equally spaced
// quantiles, dropping repeated edges (atoms of discrete outcomes).
func pilotEdges(cfg Config, pilot [2][]float64) []float64 {
	bins := cfg.Bins
	if bins == 0 {
		bins = DefaultBins
	}
	var pooled []float64
	for _, xs := range pilot {
		for _, x := range xs {
			if !math.IsNaN(x) {
				pooled = append(pooled, x)
			}
		}
	}
	if len(pooled) == 0 {
		return nil
	}
	slices.Sort(pooled)
	var edges []float64
	for j := 1; j < bins; j++ {
		e := pooled[j*len(pooled)/bins]
		if len(edges) == 0 || e > edges[len(edges)-1] {
			edges = append(edges, e)
		}
	}
	return edges
}

// histogram runs m samples times on dataset nb. Bucket i < len(edges)+1
// holds outcomes with exactly i edges ≤ x; the last bucket holds NaN.
func histogram(m Mechanism, src rand.Source, nb, samples int, edges []float64) []int {
	h := make([]int, len(edges)+2)
	for range samples {
		h[bucketOf(m(src, nb), edges)]++
	}
	return h
}

// bucketize counts xs in the buckets of histogram.
func bucketize(xs []float64, edges []float64) []int {
	h := make([]int, len(edges)+2)
	for _, x := range xs {
		h[bucketOf(x, edges)]++
	}
	return h
}

// bucketOf returns the bucket of x: the number of edges ≤ x, or the NaN
// bucket len(edges)+1.
func bucketOf(x float64, edges []float64) int {
	if math.IsNaN(x) {
		return len(edges) + 1
	}
	return sort.Search(len(edges), func(i int) bool { return edges[i] > x })
}

// event is the union of ordered buckets [lo, hi), or the NaN bucket, or
// (set non-nil) the union of the buckets listed in set, the NaN bucket
// being index len(edges)+1.
type event struct {
	lo, hi int
	nan    bool
	set    []int
}

// ratioEvents returns, for each direction a, the unions of the j buckets
// (NaN included) with the highest pilot ratios (p_a + ½)/(p_b + ½), for
// every j. Where the privacy loss is spread thinly over many buckets,
// each below δ (a mechanism that leaks in many places at once), only such
// a union holds enough of the leaking mass to exceed δ: (ε, δ)-DP bounds
// P(S) − e^ε·P'(S) ≤ δ for the whole region S where the ratio is large,
// not for each bucket of it.
func ratioEvents(pilot [2][]int) []event {
	k := len(pilot[0])
	var es []event
	for a := range 2 {
		b := 1 - a
		order := make([]int, k)
		for i := range order {
			order[i] = i
		}
		ratio := func(i int) float64 { return (float64(pilot[a][i]) + 0.5) / (float64(pilot[b][i]) + 0.5) }
		sort.SliceStable(order, func(i, j int) bool { return ratio(order[i]) > ratio(order[j]) })
		for j := 1; j < k; j++ {
			es = append(es, event{set: slices.Clone(order[:j])})
		}
	}
	return es
}

// events returns every bucket, every union of the lowest buckets and every
// union of the highest ones (the ordered buckets are 0..k-1, the union of
// all of them is "not NaN"), and NaN.
func events(k int) []event {
	var es []event
	for i := range k {
		es = append(es, event{lo: i, hi: i + 1})
	}
	for j := 2; j < k; j++ {
		es = append(es, event{lo: 0, hi: j}, event{lo: k - j, hi: k})
	}
	if k > 1 {
		es = append(es, event{lo: 0, hi: k})
	}
	return append(es, event{nan: true})
}

// describe renders an event with the bucket edges.
func (e event) describe(edges []float64) string {
	if e.set != nil {
		parts := make([]string, len(e.set))
		for i, b := range e.set {
			if b == len(edges)+1 {
				parts[i] = "{NaN}"
				continue
			}
			parts[i] = event{lo: b, hi: b + 1}.describe(edges)
		}
		if len(parts) > 4 {
			parts = append(parts[:4], fmt.Sprintf("… (%d buckets)", len(e.set)))
		}
		return strings.Join(parts, " ∪ ")
	}
	if e.nan {
		return "{NaN}"
	}
	var lo float64
	hi := math.Inf(1)
	if e.lo > 0 {
		lo = edges[e.lo-1]
	}
	if e.hi <= len(edges) {
		hi = edges[e.hi-1]
	}
	if e.lo == 0 {
		return fmt.Sprintf("(-Inf, %g)", hi)
	}
	return fmt.Sprintf("[%g, %g)", lo, hi)
}

// count returns the number of outcomes of h in e.
func (e event) count(h []int) int {
	if e.set != nil {
		c := 0
		for _, b := range e.set {
			c += h[b]
		}
		return c
	}
	if e.nan {
		return h[len(h)-1]
	}
	c := 0
	for _, v := range h[e.lo:e.hi] {
		c += v
	}
	return c
}

// bound computes the Result from the two histograms.
func bound(cfg Config, edges []float64, hist, pilot [2][]int) Result {
	es := append(events(len(edges)+1), ratioEvents(pilot)...)
	// Four one-sided bounds per event: a lower and an upper bound for
	// each dataset.
	alpha := (1 - confidence(cfg)) / float64(4*len(es))
	n := cfg.Samples
	res := Result{Events: len(es), Event: "none"}
	for _, e := range es {
		for a := range 2 {
			b := 1 - a
			ka, kb := e.count(hist[a]), e.count(hist[b])
			lower := ClopperPearsonLower(ka, n, alpha) - cfg.Delta
			if lower > 0 {
				if lb := math.Log(lower / ClopperPearsonUpper(kb, n, alpha)); lb > res.LowerBound {
					res.LowerBound = lb
					res.Event = fmt.Sprintf("%s, D%s vs D%s", e.describe(edges), prime(a), prime(b))
				}
			}
			pa, pb := float64(ka)/float64(n)-cfg.Delta, float64(kb)/float64(n)
			if pa > 0 && ka >= minPointCount && kb >= minPointCount {
				res.PointEstimate = max(res.PointEstimate, math.Log(pa/pb))
			}
		}
	}
	return res
}

// prime names dataset nb: "" for D, "'" for D'.
func prime(nb int) string {
	if nb == 1 {
		return "'"
	}
	return ""
}

// AuditSamples is the number of runs per dataset in AuditDefault.
const AuditSamples = 200000

// IntegerEdges returns bucket edges k+½ for k in [lo, hi), separating the
// integers lo..hi.
func IntegerEdges(lo, hi int) []float64 {
	var e []float64
	for k := lo; k < hi; k++ {
		e = append(e, float64(k)+0.5)
	}
	return e
}

// AuditDefault runs Audit with AuditSamples runs per dataset, the seed
// (overridable by DPPROXY_TEST_SEED) and the bucket edges given.
func AuditDefault(t Reporter, seed uint64, epsilon float64, edges []float64, m Mechanism) Result {
	t.Helper()
	cfg := Config{Epsilon: epsilon, Samples: AuditSamples, Seed: Seed(t, seed), Edges: edges}
	return Audit(t, cfg, m)
}

// PairSamples is the number of runs per dataset in AuditPair.
const PairSamples = 100000

// AuditPair audits a mechanism given by one sampler per dataset (d for D,
// d2 for its neighbour D'), PairSamples runs each, at the seed given
// (overridable by DPPROXY_TEST_SEED). A correct mechanism fails with
// probability ≤ 10⁻³ (Audit's 99.9% lower confidence bound).
func AuditPair(t Reporter, seed uint64, epsilon float64, d, d2 func(src rand.Source) float64) Result {
	t.Helper()
	cfg := Config{Epsilon: epsilon, Samples: PairSamples, Seed: Seed(t, seed)}
	return Audit(t, cfg, func(src rand.Source, nb int) float64 {
		if nb == 1 {
			return d2(src)
		}
		return d(src)
	})
}

// NeighbourPairs are edge-case add/remove neighbours on bounds [0, 10]:
// each D' is D with one row added, at n = 0 → 1 and 1 → 2 with values at
// the bounds, with ties at the median, and half at each bound. They are
// not necessarily the pairs where a mechanism's loss is largest (for the
// smooth median the worst pairs are found by search or built by hand):
// an audit on them alone cannot show a mechanism's worst case.
var NeighbourPairs = []struct {
	Name  string
	D, D2 []float64
}{
	{"n=0→1 at the upper bound", nil, []float64{10}},
	{"n=1→2 at the bounds", []float64{0}, []float64{0, 10}},
	{"ties at the median", []float64{3, 5, 5, 5, 5, 7}, []float64{3, 5, 5, 5, 5, 7, 10}},
	{"half and half", []float64{0, 0, 0, 10, 10, 10}, []float64{0, 0, 0, 10, 10, 10, 10}},
}
