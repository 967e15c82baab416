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

// allowed lists, for each package of ours, the packages of ours it may import
// directly. A package missing here may import nothing of ours but dperr.
var allowed = map[string][]string{
	"internal/dperr":         {},
	"internal/catalog":       {},
	"internal/mech":          {},
	"internal/mech/privtest": {"internal/mech"},
	"internal/wire":          {},
	"internal/demo":          {"internal/catalog"},
	"internal/testdb":        {},
	"internal/sqlrewrite":    {"internal/catalog", "internal/dperr"},
	"internal/budget":        {"internal/catalog", "internal/dperr"},
	"internal/backend":       {"internal/sqlrewrite", "internal/dperr"},
	"internal/planner":       {"internal/sqlrewrite", "internal/mech", "internal/catalog", "internal/dperr"},
	"internal/exec": {"internal/planner", "internal/sqlrewrite", "internal/mech", "internal/budget",
		"internal/catalog", "internal/backend", "internal/dperr"},
	"internal/proxy": {"internal/exec", "internal/planner", "internal/sqlrewrite", "internal/mech",
		"internal/budget", "internal/catalog", "internal/dperr"},
}

// thirdParty limits the non-standard imports of the leaf packages.
var thirdParty = map[string][]string{
	"internal/mech":  {"gonum.org/v1/gonum"},
	"internal/dperr": {},
	"internal/wire":  {"github.com/go-mysql-org/go-mysql"},
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
			if limits, leaf := thirdParty[pkg]; leaf && !isStandard(imp) && !hasAnyPrefix(imp, limits) {
				t.Errorf("%s imports %s; it may import only the standard library and %v", pkg, imp, limits)
			}
		}
	}
	if seen == 0 {
		t.Fatal("go list found no packages")
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
