package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

// composeFile is the part of docker-compose.yml this test checks.
type composeFile struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Build       string            `yaml:"build"`
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		DependsOn   map[string]struct {
			Condition string `yaml:"condition"`
		} `yaml:"depends_on"`
	} `yaml:"services"`
}

// TestDockerComposeIsConsistent parses docker-compose.yml (no Docker engine
// runs here, so it is never started in tests): every service builds or names
// an image, dependencies exist with valid conditions, and every proxy's
// configuration file exists, validates with the environment the compose file
// gives it, and asks for no variable the compose file does not set. The same
// configurations run against the native databases in
// TestExampleConfigsOnNativeDatabases. Where docker-compose is installed,
// `docker-compose config -q` must accept the file too.
func TestDockerComposeIsConsistent(t *testing.T) {
	raw, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	dec := yaml.NewDecoder(strings.NewReader(string(raw)))
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	proxies := 0
	for name, s := range c.Services {
		if (s.Image == "") == (s.Build == "") {
			t.Errorf("service %s: want exactly one of image and build", name)
		}
		for dep, d := range s.DependsOn {
			if _, ok := c.Services[dep]; !ok {
				t.Errorf("service %s depends on unknown service %s", name, dep)
			}
			if !slices.Contains([]string{"service_started", "service_healthy", "service_completed_successfully"}, d.Condition) {
				t.Errorf("service %s: bad condition %q", name, d.Condition)
			}
		}
		i := slices.Index(s.Command, "--config")
		if i < 0 {
			continue
		}
		proxies++
		path := filepath.Join("../../examples", filepath.Base(s.Command[i+1]))
		text, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("service %s: %v", name, err)
			continue
		}
		for _, m := range regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`).FindAllStringSubmatch(string(text), -1) {
			if _, ok := s.Environment[m[1]]; !ok {
				t.Errorf("service %s: %s uses ${%s}, which the service's environment does not set", name, path, m[1])
			}
			t.Setenv(m[1], s.Environment[m[1]])
		}
		if _, err := catalog.Load(path); err != nil {
			t.Errorf("service %s: %v", name, err)
		}
	}
	if proxies != 2 {
		t.Errorf("want two dpproxy services (PostgreSQL and MariaDB behind), found %d", proxies)
	}
	if dc, err := exec.LookPath("docker-compose"); err == nil {
		if out, err := exec.Command(dc, "-f", "../../docker-compose.yml", "config", "-q").CombinedOutput(); err != nil {
			t.Errorf("docker-compose config -q: %v\n%s", err, out)
		}
	}
}
