package demo

import (
	"strings"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

// User and Password are the demo's analyst account; SHA2User logs in with
// caching_sha2_password and the same password.
const (
	User     = "demo"
	SHA2User = "demo_sha2"
	Password = "demo"
	// passwordHash is the mysql_native_password hash of Password.
	passwordHash = "*C142FB215B6E05B7C134B1A653AD4B455157FD79"
)

// MetricsListen is where the demo serves /metrics and /healthz.
const MetricsListen = "127.0.0.1:9307"

// Config is the zero-configuration demo: the embedded SQLite database
// backendDSN holding table pums, users demo/demo and demo_sha2/demo (who
// logs in with caching_sha2_password), each with a budget of ε = 100 and
// δ = 1e-3, ε = 0.1 per statement by default, and the ledger in ledgerPath.
// Columns age and income declare histogram domains (one bin per year; 4096
// bins of income), so range counts and histograms on them are answered
// from synopses that cost ε = 1 once each. The table declares an
// interactive domain, age in 10-year buckets × sex × married × race (240
// cells), so COUNT(*) with any AND/OR/NOT of conditions on those columns
// is answered by one instance that costs ε = 1 once (α = 0.1). Columns
// sex, educ, race and married declare their domains (values), so GROUP BY
// them answers every declared group and SELECT DISTINCT lists them.
//
// The demo serves /metrics and /healthz on MetricsListen.
func Config(backendDSN, ledgerPath string) (*catalog.Config, error) {
	yaml := `
backend: {driver: sqlite, dsn: "` + backendDSN + `"}
metrics: {listen: "` + MetricsListen + `"}
ledger: {driver: sqlite, dsn: "` + ledgerPath + `"}
privacy: {default_epsilon: 0.1, max_epsilon: 10, default_delta: 1.0e-7, max_delta: 1.0e-4}
users:
  - {name: ` + User + `, password_hash: "` + passwordHash + `", epsilon: 100, delta: 1.0e-3}
  - {name: ` + SHA2User + `, password_hash: "` + passwordHash + `", auth_plugin: caching_sha2_password, epsilon: 100, delta: 1.0e-3}
tables:
  - name: pums
    epsilon: 100
    delta: 1.0e-3
    columns:
      - {name: age, type: integer, lower: 0, upper: 100, histogram: {epsilon: 1}}
      - {name: sex, type: integer, lower: 0, upper: 1, values: [0, 1]}
      - {name: educ, type: integer, lower: 1, upper: 16, values: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]}
      - {name: race, type: integer, lower: 1, upper: 6, values: [1, 2, 3, 4, 5, 6]}
      - {name: income, type: real, lower: 0, upper: 500000, histogram: {epsilon: 1}}
      - {name: married, type: integer, lower: 0, upper: 1, values: [0, 1]}
    interactive:
      columns:
        - {name: age, edges: [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100]}
        - {name: sex, values: [0, 1]}
        - {name: married, values: [0, 1]}
        - {name: race, values: [1, 2, 3, 4, 5, 6]}
      epsilon: 1
      alpha: 0.1
`
	return catalog.ParseConfig(strings.NewReader(yaml))
}
