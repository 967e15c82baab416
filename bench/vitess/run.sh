#!/usr/bin/env bash
# Latency of dpproxy in front of Vitess (two shards, vttestserver on the
# machine's mysqld; scripts/vitess.sh) against dpproxy in front of MariaDB
# directly, with each side's exact query beside it.
#   scripts/vitess.sh start && bash bench/vitess/run.sh   (writes bench/RESULTS-vitess.md)
# Needs MariaDB on 127.0.0.1:3306 (user root) and the mariadb client. The
# same ROWS deterministic rows (default 10^5) go into table pums_bench of
# the Vitess keyspace (sharded by a hash vindex on id) and of database
# MYDB (default dpbench) on MariaDB. Each statement runs RUNS times per
# side, the four sides alternating run by run; the table gives medians.
# The proxy in front of Vitess is configured as the README says
# (backend.isolation: none, ?workload=olap).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROWS=${ROWS:-100000}
RUNS=${RUNS:-5}
MYDB=${MYDB:-dpbench}
OUT=${OUT:-bench/RESULTS-vitess.md}
vport=$(scripts/vitess.sh port)
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
go build -o "$work/dpproxy" ./cmd/dpproxy

vt() { mariadb -h127.0.0.1 -P"$vport" -uroot --ssl=0 -N dpproxy "$@"; }
my() { mariadb -h127.0.0.1 -P3306 -uroot --ssl=0 -N "$MYDB" "$@"; }

# Rows id = 1..ROWS: age in [18, 92], income in [0, 100000), both spread
# by multiplicative hashing so every shard holds every kind of row.
awk -v n="$ROWS" 'BEGIN {
  for (i = 1; i <= n; i++) {
    if ((i - 1) % 1000 == 0) printf "%sINSERT INTO pums_bench (id, age, income) VALUES ", (i > 1 ? ";\n" : "")
    else printf ", "
    printf "(%d, %d, %.2f)", i, 18 + (i * 7919) % 75, (i * 104729) % 100000 + 0.25
  }
  print ";"
}' > "$work/rows.sql"
create="CREATE TABLE pums_bench (id BIGINT NOT NULL PRIMARY KEY, age INT, income DOUBLE, KEY pums_bench_income (income))"
vt -e "ALTER VSCHEMA ON pums_bench ADD VINDEX hash(id) USING hash" 2>/dev/null || true
vt -e "DROP TABLE IF EXISTS pums_bench; $create"
vt < "$work/rows.sql"
mariadb -h127.0.0.1 -P3306 -uroot --ssl=0 -e "CREATE DATABASE IF NOT EXISTS $MYDB"
my -e "DROP TABLE IF EXISTS pums_bench; $create"
my < "$work/rows.sql"
vt -e "ANALYZE TABLE pums_bench" >/dev/null
my -e "ANALYZE TABLE pums_bench" >/dev/null

. bench/proxy.sh
start_proxy() { # name dsn isolation port
  start_bench_proxy "$1" "$4" "driver: mysql, dsn: \"$2\", isolation: $3" "  - name: pums
    source: pums_bench
    columns:
      - {name: age, type: integer, lower: 0, upper: 100}
      - {name: income, type: real, lower: 0, upper: 500000}"
}
start_proxy vt "root@tcp(127.0.0.1:$vport)/dpproxy?workload=olap" none 34490
start_proxy my "root@tcp(127.0.0.1:3306)/$MYDB" repeatable_read 34491
for port in 34490 34491; do # until both listen (a loaded machine starts them slowly)
  for _ in $(seq 1 120); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.5; done
done

seconds() { # wall seconds of a command or shell function (its output discarded)
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null
  end=$(date +%s.%N)
  awk -v s="$start" -v e="$end" 'BEGIN {printf "%.3f\n", e - s}'
}
median() { sort -n | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
proxy() { mariadb -h127.0.0.1 -P"$1" -ubench -pbench --ssl=0 -N -e "$2"; }

# name | private statement | exact on MariaDB | exact via vtgate (empty: none).
# vtgate refuses VAR_POP and MEDIAN on a sharded table; its variance is
# written with sums, which it pushes to the shards.
statements=(
  "COUNT(*) WHERE|SELECT COUNT(*) FROM pums WHERE age BETWEEN 20 AND 60|SELECT COUNT(*) FROM pums_bench WHERE age BETWEEN 20 AND 60|SELECT COUNT(*) FROM pums_bench WHERE age BETWEEN 20 AND 60"
  "SUM(income)|SELECT SUM(income) FROM pums|SELECT SUM(income) FROM pums_bench|SELECT SUM(income) FROM pums_bench"
  "AVG(age)|SELECT AVG(age) FROM pums|SELECT AVG(age) FROM pums_bench|SELECT AVG(age) FROM pums_bench"
  "VARIANCE(age)|SELECT VARIANCE(age) FROM pums|SELECT VAR_POP(age) FROM pums_bench|SELECT SUM(age * age) / COUNT(age) - POW(SUM(age) / COUNT(age), 2) FROM pums_bench"
  "MEDIAN(income)|SELECT MEDIAN(income) FROM pums|SELECT MEDIAN(income) OVER () FROM pums_bench LIMIT 1|"
  "FLOOR histogram|SELECT FLOOR(age / 10) * 10 AS b, COUNT(*) FROM pums GROUP BY b|SELECT FLOOR(age / 10) * 10 AS b, COUNT(*) FROM pums_bench GROUP BY b|SELECT FLOOR(age / 10) * 10 AS b, COUNT(*) FROM pums_bench GROUP BY b"
)

{
  echo "## dpproxy on Vitess (two shards) against dpproxy on MariaDB"
  echo
  echo "\`scripts/vitess.sh start && bash bench/vitess/run.sh\` ($(date -u '+%Y-%m-%d %H:%M UTC'); ROWS=$ROWS, RUNS=$RUNS, ε = 1, mechanism auto;"
  echo "vttestserver ${VITESS_VERSION:-v0.24.4}, keyspace dpproxy with shards -80 and 80- in one MariaDB 10.11 mysqld, so the shards share"
  echo "the machine; load average at start $(cut -d' ' -f1-3 /proc/loadavg) on 2 cores shared with other work: compare within a row)."
  echo
  echo "| statement | dpproxy → Vitess s | dpproxy → MariaDB s | exact via vtgate s | exact on MariaDB s | Vitess / MariaDB (dpproxy) |"
  echo "|---|--:|--:|--:|--:|--:|"
} > "$work/report.md"

for st in "${statements[@]}"; do
  IFS='|' read -r name private myexact vtexact <<<"$st"
  : > "$work/pv"; : > "$work/pm"; : > "$work/ev"; : > "$work/em"
  # A warm-up of every side, which also stops the script if one fails.
  proxy 34490 "$private" >/dev/null
  proxy 34491 "$private" >/dev/null
  my -e "$myexact" >/dev/null
  if [ -n "$vtexact" ]; then vt -e "$vtexact" >/dev/null; fi
  for _ in $(seq "$RUNS"); do
    seconds proxy 34490 "$private" >> "$work/pv"
    seconds proxy 34491 "$private" >> "$work/pm"
    if [ -n "$vtexact" ]; then seconds vt -e "$vtexact" >> "$work/ev"; fi
    seconds my -e "$myexact" >> "$work/em"
  done
  pv=$(median < "$work/pv"); pm=$(median < "$work/pm"); em=$(median < "$work/em")
  ev=n/a
  if [ -n "$vtexact" ]; then ev=$(median < "$work/ev"); fi
  ratio=$(awk -v a="$pv" -v b="$pm" 'BEGIN {printf "%.2f", a / b}')
  echo "| $name | $pv | $pm | $ev | $em | ${ratio}× |" | tee -a "$work/report.md"
done
vt -e "DROP TABLE pums_bench; ALTER VSCHEMA DROP TABLE pums_bench" || true
cp "$work/report.md" "$OUT"
echo "wrote $OUT"
