package bench

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// anchorsDirs are where the shared data directory may be relative to the
// package: beside the repository (a checkout next to shared/, as in CI) or
// one level further up (a worktree); the tests skip when it is absent.
var anchorsDirs = []string{"../../shared/data", "../../../shared/data"}

func loadAnchors(t *testing.T) ([]Anchor, []*Dataset) {
	t.Helper()
	anchorsDir := ""
	for _, d := range anchorsDirs {
		if _, err := os.Stat(filepath.Join(d, "anchors", "google-dp-go.tsv")); err == nil {
			anchorsDir = d
			break
		}
	}
	if anchorsDir == "" {
		t.Skipf("no anchors file in %v", anchorsDirs)
	}
	path := filepath.Join(anchorsDir, "anchors", "google-dp-go.tsv")
	anchors, err := ReadAnchors(path)
	if err != nil {
		t.Fatal(err)
	}
	data, err := AnchorDatasets(anchorsDir, anchors)
	if err != nil {
		t.Fatal(err)
	}
	return anchors, data
}

// TestAnchorRowsReproduceTruth checks that AnchorRows draws the anchors'
// rows: every published truth (PERCENTILE_CONT, AVG, VAR_POP) is
// reproduced to 10^-6 relative.
func TestAnchorRowsReproduceTruth(t *testing.T) {
	anchors, data := loadAnchors(t)
	byName, stats := DatasetsByName(data), StatisticsByName()
	for _, a := range anchors {
		d := byName[fmt.Sprintf("%s-n%d", a.Dataset, a.N)]
		got := Truth(stats[a.Statistic], d)
		if math.Abs(got-a.Truth) > 1e-6*math.Max(1, math.Abs(a.Truth)) {
			t.Errorf("%s n=%d %s: truth %v, anchors say %v", a.Dataset, a.N, a.Statistic, got, a.Truth)
		}
	}
}

// TestGoogleArmMatchesAnchors runs the Google arm with the anchors' 200
// trials on every cell and requires its mean |error| to agree with the
// published one within ArmTolerance standard errors of the difference
// (the anchor's standard error estimated by the arm's).
func TestGoogleArmMatchesAnchors(t *testing.T) {
	anchors, data := loadAnchors(t)
	results := Run(Config{Statistics: Statistics, Data: data, Epsilons: []float64{0.1, 1},
		Candidates: []Candidate{GoogleCandidate()}, Trials: 200, Seed: 7, Workers: 2})
	// GoogleComparison pairs with the rule's cells: give it the arm twice.
	var both []Result
	for _, r := range results {
		both = append(both, r)
		r.Mechanism = RuleName
		both = append(both, r)
	}
	rows := GoogleComparison(anchors, both)
	if len(rows) != len(anchors) {
		t.Fatalf("%d cells compared, want %d", len(rows), len(anchors))
	}
	for _, r := range rows {
		if math.Abs(r.ArmZ) > ArmTolerance || math.IsNaN(r.ArmZ) {
			t.Errorf("%s %s ε=%g: arm %.4g ± %.2g, anchor %.4g (z = %.1f)", r.Anchor.Statistic, r.Google.Dataset, r.Anchor.Epsilon,
				r.Google.MeanAbs, r.Google.StdErr, r.Anchor.MeanAbs, r.ArmZ)
		}
	}
}

// TestRuleWithinGoogleOnAnchors is issue 15's regression test for AVG and
// VARIANCE on every cell of the anchors: the rule's mean |error| (the edge
// releases, 0.64–0.78× for the mean and 0.5–0.63× for the variance at 1000
// trials, bench/RESULTS-google.md) must stay within ruleRegressionSlack of
// the Google arm's (300 seeded trials each, so the outcome is
// deterministic; the slack covers their noise, about ±13%). Before the
// edge releases the rule lost on most cells at n·ε = 100 (Google's own
// constructions after a probe count, up to 1.1×) and, earlier still, on
// several cells with n·ε ≥ 1000 (piecewise variance up to 4.7× on
// nettrace n = 1000, ε = 1; auto-mean's preprocessing 1.34× on hepth
// n = 100000, ε = 1).
func TestRuleWithinGoogleOnAnchors(t *testing.T) {
	const ruleRegressionSlack = 0.95
	anchors, data := loadAnchors(t)
	stats := []Statistic{{Name: "mean", Kind: MeanStat}, {Name: "variance", Kind: VarianceStat}}
	results := Run(Config{Statistics: stats, Data: data, Epsilons: []float64{0.1, 1},
		Candidates: []Candidate{RuleCandidate(), GoogleCandidate()}, Trials: 300, Seed: 11, Workers: 2})
	checked := 0
	for _, r := range GoogleComparison(anchors, results) {
		if r.Anchor.Statistic != "mean" && r.Anchor.Statistic != "variance" {
			continue
		}
		checked++
		if r.Ratio > ruleRegressionSlack {
			t.Errorf("%s %s ε=%g: rule %.4g, Google %.4g (%.2f×)", r.Anchor.Statistic, r.Auto.Dataset, r.Anchor.Epsilon, r.Auto.MeanAbs, r.Google.MeanAbs, r.Ratio)
		}
	}
	if checked != 56 {
		t.Errorf("%d cells checked, want 56", checked)
	}
}
