# Sourced by the bench scripts (bench/latency, bench/partitions,
# bench/vitess): starts a dpproxy for the user "bench" (password "bench",
# a budget that does not run out, ε = 1 by default).
#
#   start_bench_proxy NAME PORT BACKEND TABLES [EXTRA]
#
# writes $work/NAME.yaml with the backend mapping's body BACKEND (e.g.
# 'driver: mysql, dsn: "…", isolation: none'), its own SQLite ledger, the
# top-level YAML lines EXTRA (e.g. a timeouts line) and the YAML lines
# TABLES under tables:, then starts $work/dpproxy on 127.0.0.1:PORT (log in
# $work/NAME.log, no metrics listener) and appends its pid to pids.
start_bench_proxy() {
  local name=$1 port=$2 backend=$3 tables=$4 extra=${5:-}
  [ -n "${bench_hash:-}" ] || bench_hash=$("$work/dpproxy" hash-password bench)
  cat > "$work/$name.yaml" <<YAML
backend: {$backend}
ledger: {driver: sqlite, dsn: "$work/$name-ledger.db"}
privacy: {default_epsilon: 1, max_epsilon: 10}
$extra
users: [{name: bench, password_hash: "$bench_hash", epsilon: 1.0e+9, delta: 1.0e-3}]
tables:
$tables
YAML
  "$work/dpproxy" --config "$work/$name.yaml" --listen "127.0.0.1:$port" --metrics-listen off 2>"$work/$name.log" &
  pids+=($!)
}
