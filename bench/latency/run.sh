#!/usr/bin/env bash
# End-to-end latency of dpproxy against the backend's own exact query, on
# PostgreSQL with 10^6 synthetic rows (loopback, 2 cores).
#   bash bench/latency/run.sh        (needs PostgreSQL on 127.0.0.1:5432, the mariadb client)
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'kill "$proxy" 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/dpproxy" ./cmd/dpproxy
psql -h127.0.0.1 -Upostgres -qc "DROP DATABASE IF EXISTS dpbench" -qc "CREATE DATABASE dpbench"
psql -h127.0.0.1 -Upostgres dpbench -qc "CREATE TABLE pums AS SELECT (18 + floor(random()*75))::int AS age,
  (random()*100000)::float8 AS income FROM generate_series(1, 1000000); ANALYZE pums"
hash=$("$work/dpproxy" hash-password bench)
cat > "$work/dpproxy.yaml" <<YAML
backend: {driver: postgres, dsn: "postgres://postgres@127.0.0.1:5432/dpbench?sslmode=disable"}
ledger: {driver: sqlite, dsn: "$work/ledger.db"}
privacy: {default_epsilon: 1, max_epsilon: 10}
users: [{name: bench, password_hash: "$hash", epsilon: 100000, delta: 1.0e-3}]
tables:
  - name: pums
    columns:
      - {name: age, type: integer, lower: 0, upper: 100}
      - {name: income, type: real, lower: 0, upper: 500000}
YAML
"$work/dpproxy" --config "$work/dpproxy.yaml" --listen 127.0.0.1:3398 2>"$work/log" & proxy=$!
sleep 2
where="FROM pums WHERE age BETWEEN 20 AND 60"
private="SELECT COUNT(*), AVG(age), VARIANCE(age), STDDEV(age), SUM(income), MEDIAN(income) $where"
exact="SELECT COUNT(*), AVG(age), VAR_POP(age), STDDEV_POP(age), SUM(income), percentile_cont(0.5) WITHIN GROUP (ORDER BY income) $where"
best() { sort -n | head -1; }
for m in laplace piecewise preprocess; do
  t=$(for _ in 1 2 3 4 5; do /usr/bin/time -f %e mariadb -h127.0.0.1 -P3398 -ubench -pbench --ssl=0 -N \
      -e "SET @dp_mechanism='$m'; $private" 2>&1 >/dev/null; done | best)
  echo "dpproxy ($m for MEDIAN where it applies): best of 5 = ${t} s"
done
t=$(for _ in 1 2 3 4 5; do /usr/bin/time -f %e psql -h127.0.0.1 -Upostgres dpbench -qAtc "$exact" 2>&1 >/dev/null; done | best)
echo "PostgreSQL exact (percentile_cont): best of 5 = ${t} s"
