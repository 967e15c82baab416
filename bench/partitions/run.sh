#!/usr/bin/env bash
# dpproxy on a PostgreSQL partitioned table whose partitions are
# postgres_fdw foreign tables in two other databases, with and without the
# table's `partitions` configuration (per-partition aggregates, which
# postgres_fdw pushes to the shards, against fetches over the parent table,
# for which the coordinator pulls every row).
#   bash bench/partitions/run.sh        (from anywhere; appends to bench/RESULTS-partitions.md)
# Needs PostgreSQL 15 on 127.0.0.1:5432 (user postgres, superuser) with
# postgres_fdw, and the psql and mariadb clients. ROWS rows (default 10^6)
# are split evenly over the table pums of the databases SHARD1 and SHARD2
# (default dpbench_shard1, dpbench_shard2, created if missing); the
# coordinator database COORD (default dpbench) gets the partitioned table
# pums_split, whose partitions pums_split_1 and pums_split_2 are foreign
# tables on them. Two proxies serve it, on PORT_SPLIT (with partitions) and
# PORT_PARENT (without), defaults 3396 and 3397. Each statement runs RUNS
# times on each side and as the exact query on the coordinator, alternating.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROWS=${ROWS:-1000000}
RUNS=${RUNS:-5}
COORD=${COORD:-dpbench}
SHARD1=${SHARD1:-dpbench_shard1}
SHARD2=${SHARD2:-dpbench_shard2}
PORT_SPLIT=${PORT_SPLIT:-3396}
PORT_PARENT=${PORT_PARENT:-3397}
OUT=${OUT:-bench/RESULTS-partitions.md}
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
go build -o "$work/dpproxy" ./cmd/dpproxy

pg() { psql -h127.0.0.1 -Upostgres -v ON_ERROR_STOP=1 "$@"; }
for db in "$COORD" "$SHARD1" "$SHARD2"; do
  pg -qtAc "SELECT 1 FROM pg_database WHERE datname = '$db'" postgres | grep -q 1 || pg -qc "CREATE DATABASE $db" postgres
done
half=$((ROWS / 2))
for i in 1 2; do
  db=$SHARD1; [ "$i" = 2 ] && db=$SHARD2
  pg -q "$db" <<SQL
DROP TABLE IF EXISTS pums;
CREATE TABLE pums AS SELECT ($i - 1) * $half + g AS id, (18 + floor(random()*75))::int AS age,
  (random()*100000)::float8 AS income FROM generate_series(1, $half) g;
VACUUM ANALYZE pums;
SQL
done
pg -q "$COORD" <<SQL
CREATE EXTENSION IF NOT EXISTS postgres_fdw;
DROP TABLE IF EXISTS pums_split;
DROP SERVER IF EXISTS dpbench_shard1 CASCADE;
DROP SERVER IF EXISTS dpbench_shard2 CASCADE;
CREATE SERVER dpbench_shard1 FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1', port '5432', dbname '$SHARD1');
CREATE SERVER dpbench_shard2 FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1', port '5432', dbname '$SHARD2');
CREATE USER MAPPING FOR CURRENT_USER SERVER dpbench_shard1 OPTIONS (user 'postgres');
CREATE USER MAPPING FOR CURRENT_USER SERVER dpbench_shard2 OPTIONS (user 'postgres');
CREATE TABLE pums_split (id bigint, age int, income float8) PARTITION BY RANGE (id);
CREATE FOREIGN TABLE pums_split_1 PARTITION OF pums_split FOR VALUES FROM (MINVALUE) TO ($half + 1)
  SERVER dpbench_shard1 OPTIONS (table_name 'pums');
CREATE FOREIGN TABLE pums_split_2 PARTITION OF pums_split FOR VALUES FROM ($half + 1) TO (MAXVALUE)
  SERVER dpbench_shard2 OPTIONS (table_name 'pums');
ANALYZE pums_split;
SQL

. bench/proxy.sh
start_proxy() { # name port partitions-line
  start_bench_proxy "$1" "$2" "driver: postgres, dsn: \"postgres://postgres@127.0.0.1:5432/$COORD?sslmode=disable\"" "  - name: pums
    source: pums_split
    $3
    columns:
      - {name: age, type: integer, lower: 0, upper: 100}
      - {name: income, type: real, lower: 0, upper: 500000}"
}
start_proxy split "$PORT_SPLIT" "partitions: [pums_split_1, pums_split_2]"
start_proxy parent "$PORT_PARENT" ""
for port in "$PORT_SPLIT" "$PORT_PARENT"; do
  for _ in $(seq 120); do
    mariadb -h127.0.0.1 -P"$port" -ubench -pbench --ssl=0 -N -e "SELECT 1" >/dev/null 2>&1 && break
    sleep 0.5
  done
done

seconds() { /usr/bin/time -f %e "$@" 2>&1 >/dev/null | tail -1; }
median() { sort -n | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
# name | private statement | exact statement on the coordinator
statements=(
  "COUNT(*)|SELECT COUNT(*) FROM pums WHERE age BETWEEN 20 AND 60|SELECT COUNT(*) FROM pums_split WHERE age BETWEEN 20 AND 60"
  "SUM(income)|SELECT SUM(income) FROM pums|SELECT SUM(income) FROM pums_split"
  "AVG(age)|SELECT AVG(age) FROM pums|SELECT AVG(age) FROM pums_split"
  "VARIANCE(age)|SELECT VARIANCE(age) FROM pums|SELECT VAR_POP(age) FROM pums_split"
  "histogram: FLOOR(age / 10), COUNT(*) GROUP BY|SELECT FLOOR(age / 10) AS b, COUNT(*) FROM pums GROUP BY b|SELECT FLOOR(age / 10) AS b, COUNT(*) FROM pums_split GROUP BY b"
  "MEDIAN(income)|SELECT MEDIAN(income) FROM pums|SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY income) FROM pums_split"
)
{
  echo
  echo "## dpproxy on a partitioned table over postgres_fdw, with and without \`partitions\`"
  echo
  echo "\`bash bench/partitions/run.sh\` ($(date -u '+%Y-%m-%d %H:%M UTC'); ROWS=$ROWS over 2 foreign partitions in two databases of the same server, RUNS=$RUNS, ε = 1, mechanism auto;"
  echo "load average at start $(cut -d' ' -f1-3 /proc/loadavg) on 2 cores shared with other work: compare the ratios, which alternate the sides run by run)."
  echo
  echo "| statement | with partitions s | without s | without / with | exact on the coordinator s |"
  echo "|---|--:|--:|--:|--:|"
} > "$work/report.md"
for s in "${statements[@]}"; do
  IFS='|' read -r name private exact <<<"$s"
  : > "$work/s"; : > "$work/p"; : > "$work/e"
  mariadb -h127.0.0.1 -P"$PORT_SPLIT" -ubench -pbench --ssl=0 -N -e "$private" >/dev/null
  mariadb -h127.0.0.1 -P"$PORT_PARENT" -ubench -pbench --ssl=0 -N -e "$private" >/dev/null
  pg "$COORD" -qAtc "$exact" >/dev/null
  for _ in $(seq "$RUNS"); do
    seconds mariadb -h127.0.0.1 -P"$PORT_SPLIT" -ubench -pbench --ssl=0 -N -e "$private" >> "$work/s"
    seconds mariadb -h127.0.0.1 -P"$PORT_PARENT" -ubench -pbench --ssl=0 -N -e "$private" >> "$work/p"
    seconds psql -h127.0.0.1 -Upostgres "$COORD" -qAtc "$exact" >> "$work/e"
  done
  s=$(median < "$work/s"); p=$(median < "$work/p"); e=$(median < "$work/e")
  ratio=$(awk -v s="$s" -v p="$p" 'BEGIN {printf "%.1f", p / s}')
  echo "| $name | $s | $p | ${ratio}× | $e |" | tee -a "$work/report.md"
done
cat "$work/report.md" >> "$OUT"
echo "appended to $OUT"
