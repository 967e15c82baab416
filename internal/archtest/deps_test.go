// Package archtest enforces the dependency direction of DESIGN.md §1 over
// the real import graph (go list), so a wrong import fails the build's tests.
package archtest

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/dpproxy/dpproxy"

// mechFamilies are the mechanism families under internal/mech: each may
// import the shared vocabulary (mechShared) and nothing of a sibling.
var mechFamilies = []string{
	"internal/mech/laplace", "internal/mech/quantile", "internal/mech/piecewise",
	"internal/mech/preprocess", "internal/mech/ptr", "internal/mech/histogram", "internal/mech/mm",
}

// mechShared is what every family may build on: the vocabulary (bounds,
// windows, estimates, errors), the noise samplers and exact arithmetic.
var mechShared = []string{"internal/mech", "internal/mech/noise", "internal/mech/exact"}

// allowed lists, for each package of ours, the packages of ours it may import
// directly. A package missing here may import nothing of ours but dperr.
var allowed = map[string][]string{
	"internal/dperr":         {},
	"internal/catalog":       {},
	"internal/mech":          {},
	"internal/mech/noise":    {"internal/mech"},
	"internal/mech/exact":    {},
	"internal/mech/privtest": {},
	"internal/mech/oracle":   {},
	"internal/bind":          {},
	"internal/wire":          {"internal/bind"},
	"internal/demo":          {"internal/catalog"},
	"internal/testdb":        {},
	"internal/fuzzseed":      {},
	"internal/sqlrewrite":    {"internal/bind", "internal/catalog", "internal/dperr"},
	"internal/budget":        {"internal/catalog", "internal/dperr"},
	"internal/backend":       {"internal/sqlrewrite", "internal/dperr"},
	"internal/planner":       with(mechShared, mechFamilies, "internal/sqlrewrite", "internal/catalog", "internal/dperr"),
	"internal/exec": with(mechShared, nil, "internal/mech/histogram", "internal/mech/mm", "internal/planner",
		"internal/sqlrewrite", "internal/budget", "internal/catalog", "internal/backend", "internal/dperr"),
	"internal/catalogdb": {"internal/catalog"},
	"internal/proxy": {"internal/bind", "internal/catalogdb", "internal/exec", "internal/planner", "internal/sqlrewrite", "internal/mech/noise",
		"internal/budget", "internal/catalog", "internal/dperr"},
	"internal/metrics": {"internal/wire", "internal/budget"},
}

func init() {
	for _, f := range mechFamilies {
		allowed[f] = mechShared
	}
}

// with concatenates package lists.
func with(a, b []string, more ...string) []string {
	return append(append(slices.Clone(a), b...), more...)
}

// thirdParty limits the non-standard imports of the leaf packages; every
// package under internal/mech may import gonum and nothing else outside
// the standard library.
var thirdParty = map[string][]string{
	"internal/dperr": {},
	"internal/bind":  {},
	"internal/wire":  {"github.com/go-mysql-org/go-mysql"},
	// metrics: Prometheus only; nothing else (it must not see data).
	"internal/metrics": {"github.com/prometheus/client_golang"},
}

// thirdPartyOf returns the third-party prefixes pkg may import, and whether
// it is limited at all.
func thirdPartyOf(pkg string) ([]string, bool) {
	if pkg == "internal/mech" || strings.HasPrefix(pkg, "internal/mech/") {
		return []string{"gonum.org/v1/gonum"}, true
	}
	limits, ok := thirdParty[pkg]
	return limits, ok
}

func TestDependencyDirection(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	seen := 0
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		if !strings.HasPrefix(pkg, "internal/") || pkg == "internal/archtest" {
			continue // cmd/ and bench/ wire everything together
		}
		seen++
		ok, declared := allowed[pkg]
		if !declared {
			t.Errorf("package %s is not in the dependency table; add it with its allowed imports", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			if rel, ours := strings.CutPrefix(imp, module+"/"); ours {
				if !slices.Contains(ok, rel) {
					t.Errorf("%s imports %s, which DESIGN.md §1 does not allow", pkg, rel)
				}
				continue
			}
			if limits, leaf := thirdPartyOf(pkg); leaf && !isStandard(imp) && !hasAnyPrefix(imp, limits) {
				t.Errorf("%s imports %s; it may import only the standard library and %v", pkg, imp, limits)
			}
		}
	}
	if seen == 0 {
		t.Fatal("go list found no packages")
	}
}

// testSupport are packages used only by tests; they may use seeded
// randomness.
var testSupport = []string{"internal/mech/privtest", "internal/mech/oracle", "internal/testdb"}

// TestNoSeededRandomnessInProduction fails if a package linked into the
// proxy imports math/rand or math/rand/v2: production noise comes from
// crypto/rand through noise.Source (DESIGN.md §2), and public streams come
// from noise.Stream, so no seeded generator is linked into the binary.
func TestNoSeededRandomnessInProduction(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"/cmd/dpproxy").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	seen := 0
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		rel, ours := strings.CutPrefix(fields[0], module+"/")
		if !ours || slices.Contains(testSupport, rel) {
			continue
		}
		seen++
		for _, imp := range fields[1:] {
			if imp == "math/rand" || imp == "math/rand/v2" {
				t.Errorf("%s imports %s; draw randomness from internal/mech/noise instead", rel, imp)
			}
		}
	}
	if seen == 0 {
		t.Fatal("go list found none of our packages in the proxy's dependencies")
	}
}

func isStandard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
