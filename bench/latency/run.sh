#!/usr/bin/env bash
# End-to-end latency of dpproxy against the backend's own exact query, on
# PostgreSQL and MariaDB (loopback).
#   bash bench/latency/run.sh            (from anywhere; writes bench/RESULTS-latency.md)
#   DATA=patent bash bench/latency/run.sh
# Needs PostgreSQL on 127.0.0.1:5432 (user postgres) and MariaDB on
# 127.0.0.1:3306 (user root), the psql and mariadb clients. The tables live
# in the databases PGDB and MYDB (default dpbench; the PostgreSQL one is
# created if missing); the proxies listen on PROXY_PG_PORT and PROXY_MY_PORT
# (default 3398 and 3399).
# DATA chooses the table:
#   random (default): pums (age, income, an index on income), ROWS synthetic
#     rows (default 10^6), recreated on every run.
#   patent: the DAWA patent histogram (/work/shared/data/dpcomp-1d/patent.txt,
#     PATENT to override; 4096 bins, 27,948,226 rows) expanded to a table
#     patent (v, income): bin i's count rows of value v = i, each with a
#     uniform random income in [0, 100000), indexes on v and income. Rows are
#     stored interleaved (one row of every bin whose count is >= 1, then >= 2,
#     ...), not sorted by v. Loading takes minutes, so the table is kept and
#     reloaded only when its row count differs from the file's total.
# BACKENDS (default "PostgreSQL MariaDB") chooses the backends measured.
# Each statement runs RUNS times on each side, alternating (proxy, exact,
# proxy, exact, …) so that load from other processes hits both alike; the
# ratio is median(proxy) / median(exact). Both sides pay one client start
# per run (mariadb or psql, about 10 ms). The proxies' statement timeout is
# STATEMENT_TIMEOUT (default 60s; 1200s for patent). ONLY, an extended
# regular expression, keeps the statements whose names match it (e.g.
# ONLY='^(SUM|AVG|VARIANCE)'; MariaDB's own exact mixed statement runs for
# over 1,000 s on the patent table).
set -euo pipefail
cd "$(dirname "$0")/../.."
DATA=${DATA:-random}
ROWS=${ROWS:-1000000}
RUNS=${RUNS:-5}
PGDB=${PGDB:-dpbench}
MYDB=${MYDB:-dpbench}
OUT=${OUT:-bench/RESULTS-latency.md}
PROXY_PG_PORT=${PROXY_PG_PORT:-3398} # the proxies' ports
PROXY_MY_PORT=${PROXY_MY_PORT:-3399}
BACKENDS=${BACKENDS:-PostgreSQL MariaDB}
PATENT=${PATENT:-/work/shared/data/dpcomp-1d/patent.txt}
case $DATA in
  random) STATEMENT_TIMEOUT=${STATEMENT_TIMEOUT:-60s} ;;
  patent) STATEMENT_TIMEOUT=${STATEMENT_TIMEOUT:-1200s}
    ROWS=$(awk '{s += $1} END {print s}' "$PATENT")
    maxcount=$(sort -n "$PATENT" | tail -1)
    # The bins as (v, c) tuples for one INSERT (4096 of them).
    tuples=$(awk '{printf "%s(%d, %d)", (NR > 1 ? ", " : ""), NR - 1, $1}' "$PATENT") ;;
  *) echo "DATA must be random or patent" >&2; exit 2 ;;
esac
has() { [[ " $BACKENDS " == *" $1 "* ]]; }
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
trap 'exit 1' INT TERM # so that EXIT's cleanup (the proxies) runs on a kill too
go build -o "$work/dpproxy" ./cmd/dpproxy
pg() { psql -h127.0.0.1 -Upostgres "$PGDB" -qAt "$@"; }
my() { mariadb -h127.0.0.1 -P3306 -uroot --ssl=0 -N "$MYDB" "$@"; }

if has PostgreSQL; then
psql -h127.0.0.1 -Upostgres -qtAc "SELECT 1 FROM pg_database WHERE datname = '$PGDB'" | grep -q 1 ||
  psql -h127.0.0.1 -Upostgres -qc "CREATE DATABASE $PGDB"
if [ "$DATA" = random ]; then
pg <<SQL
DROP TABLE IF EXISTS pums;
CREATE TABLE pums AS SELECT (18 + floor(random()*75))::int AS age, (random()*100000)::float8 AS income
  FROM generate_series(1, $ROWS);
CREATE INDEX pums_income ON pums (income);
VACUUM ANALYZE pums; -- the visibility map too, as autovacuum keeps it: index-only window scans
SQL
elif [ "$(pg -c "SELECT COUNT(*) FROM patent" 2>/dev/null)" != "$ROWS" ]; then
  echo "loading patent into PostgreSQL $PGDB ($ROWS rows)"
  # The outer generate_series (kept outer by OFFSET 0) interleaves the bins.
  time pg <<SQL
DROP TABLE IF EXISTS patent, patent_bins;
CREATE TABLE patent_bins (v int PRIMARY KEY, c int NOT NULL);
INSERT INTO patent_bins VALUES $tuples;
CREATE TABLE patent (v int, income float8);
INSERT INTO patent SELECT b.v, random()*100000
  FROM generate_series(1, $maxcount) AS g(i)
  CROSS JOIN LATERAL (SELECT v FROM patent_bins WHERE c >= g.i ORDER BY v OFFSET 0) AS b;
CREATE INDEX patent_v ON patent (v);
CREATE INDEX patent_income ON patent (income);
VACUUM ANALYZE patent; -- the visibility map too, as autovacuum keeps it: index-only scans
SQL
fi
fi
if has MariaDB; then
mariadb -h127.0.0.1 -P3306 -uroot --ssl=0 -e "CREATE DATABASE IF NOT EXISTS $MYDB"
if [ "$DATA" = random ]; then
my <<SQL
DROP TABLE IF EXISTS pums;
CREATE TABLE pums (age INT, income DOUBLE) ENGINE=InnoDB;
INSERT INTO pums SELECT 18 + FLOOR(RAND()*75), RAND()*100000 FROM seq_1_to_$ROWS;
CREATE INDEX pums_income ON pums (income);
ANALYZE TABLE pums;
SQL
elif [ "$(my -e "SELECT COUNT(*) FROM patent" 2>/dev/null)" != "$ROWS" ]; then
  echo "loading patent into MariaDB $MYDB ($ROWS rows)"
  # STRAIGHT_JOIN keeps the sequence outer and join_cache_level = 0 a plain
  # nested loop (a join buffer would emit the rows grouped by bin).
  time my <<SQL
DROP TABLE IF EXISTS patent, patent_bins;
CREATE TABLE patent_bins (v INT PRIMARY KEY, c INT NOT NULL) ENGINE=InnoDB;
INSERT INTO patent_bins VALUES $tuples;
CREATE TABLE patent (v INT, income DOUBLE) ENGINE=InnoDB;
SET SESSION join_cache_level = 0;
INSERT INTO patent SELECT STRAIGHT_JOIN b.v, RAND()*100000
  FROM seq_1_to_$maxcount AS s JOIN patent_bins AS b ON b.c >= s.seq;
CREATE INDEX patent_v ON patent (v);
CREATE INDEX patent_income ON patent (income);
ANALYZE TABLE patent;
SQL
fi
fi

. bench/proxy.sh
if [ "$DATA" = random ]; then
  columns='  - name: pums
    columns:
      - {name: age, type: integer, lower: 0, upper: 100}
      - {name: income, type: real, lower: 0, upper: 500000}'
else
  columns='  - name: patent
    columns:
      - {name: v, type: integer, lower: 0, upper: 4095}
      - {name: income, type: real, lower: 0, upper: 100000}'
fi
start_proxy() { # name driver dsn port
  start_bench_proxy "$1" "$4" "driver: $2, dsn: \"$3\"" "$columns" "timeouts: {statement: $STATEMENT_TIMEOUT}"
}
has PostgreSQL && start_proxy pg postgres "postgres://postgres@127.0.0.1:5432/$PGDB?sslmode=disable" "$PROXY_PG_PORT"
has MariaDB && start_proxy my mysql "root@tcp(127.0.0.1:3306)/$MYDB" "$PROXY_MY_PORT"
# Wait for both proxies to answer (up to 60 s: the machine may be loaded).
for port in $(has PostgreSQL && echo "$PROXY_PG_PORT") $(has MariaDB && echo "$PROXY_MY_PORT"); do
  for _ in $(seq 120); do
    mariadb -h127.0.0.1 -P"$port" -ubench -pbench --ssl=0 -N -e "SELECT 1" >/dev/null 2>&1 && break
    sleep 0.5
  done
done

seconds() { /usr/bin/time -f %e "$@" 2>&1 >/dev/null | tail -1; }
median() { sort -n | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }

if [ "$DATA" = random ]; then
where="FROM pums WHERE age BETWEEN 20 AND 60"
# name | private statement | PostgreSQL exact | MariaDB exact
statements=(
  "COUNT(*)|SELECT COUNT(*) $where|SELECT COUNT(*) $where|SELECT COUNT(*) $where"
  "SUM(income)|SELECT SUM(income) FROM pums|SELECT SUM(income) FROM pums|SELECT SUM(income) FROM pums"
  "AVG(age)|SELECT AVG(age) FROM pums|SELECT AVG(age) FROM pums|SELECT AVG(age) FROM pums"
  "VARIANCE(age)|SELECT VARIANCE(age) FROM pums|SELECT VAR_POP(age) FROM pums|SELECT VAR_POP(age) FROM pums"
  "AVG(income)|SELECT AVG(income) FROM pums|SELECT AVG(income) FROM pums|SELECT AVG(income) FROM pums"
  "VARIANCE(income)|SELECT VARIANCE(income) FROM pums|SELECT VAR_POP(income) FROM pums|SELECT VAR_POP(income) FROM pums"
  "MEDIAN(income)|SELECT MEDIAN(income) FROM pums|SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY income) FROM pums|SELECT MEDIAN(income) OVER () FROM pums LIMIT 1"
  "mixed (README)|SELECT COUNT(*), AVG(age), VARIANCE(age), STDDEV(age), SUM(income), MEDIAN(income) $where|SELECT COUNT(*), AVG(age), VAR_POP(age), STDDEV_POP(age), SUM(income), percentile_cont(0.5) WITHIN GROUP (ORDER BY income) $where|SELECT COUNT(*), AVG(age), VAR_POP(age), STDDEV_POP(age), SUM(income), (SELECT MEDIAN(income) OVER () $where LIMIT 1) $where"
)
targets=("1.2" "1.2" "1.2" "1.2" "1.2" "1.2" "1.0" "1.5")
indexes="index on income"
else
# The README's statements on the patent table: v (the patent bin, an integer
# in [0, 4095]) where they read age, and a condition on income (40% of the
# rows) where they filter on age; MEDIAN of both columns (v: the grid
# exponential mechanism; income, a real column: a window of order
# statistics). On MariaDB with its default 128 MB buffer pool the mixed
# statement runs for many minutes on both sides (index plans with a row
# lookup per row; bench/RESULTS-latency.md): BACKENDS=PostgreSQL, or expect it.
where="FROM patent WHERE income BETWEEN 20000 AND 60000"
statements=(
  "COUNT(*)|SELECT COUNT(*) $where|SELECT COUNT(*) $where|SELECT COUNT(*) $where"
  "SUM(v)|SELECT SUM(v) FROM patent|SELECT SUM(v) FROM patent|SELECT SUM(v) FROM patent"
  "AVG(v)|SELECT AVG(v) FROM patent|SELECT AVG(v) FROM patent|SELECT AVG(v) FROM patent"
  "VARIANCE(v)|SELECT VARIANCE(v) FROM patent|SELECT VAR_POP(v) FROM patent|SELECT VAR_POP(v) FROM patent"
  "MEDIAN(v)|SELECT MEDIAN(v) FROM patent|SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY v) FROM patent|SELECT MEDIAN(v) OVER () FROM patent LIMIT 1"
  "MEDIAN(income)|SELECT MEDIAN(income) FROM patent|SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY income) FROM patent|SELECT MEDIAN(income) OVER () FROM patent LIMIT 1"
  "mixed (README)|SELECT COUNT(*), AVG(v), VARIANCE(v), STDDEV(v), SUM(income), MEDIAN(v) $where|SELECT COUNT(*), AVG(v), VAR_POP(v), STDDEV_POP(v), SUM(income), percentile_cont(0.5) WITHIN GROUP (ORDER BY v) $where|SELECT COUNT(*), AVG(v), VAR_POP(v), STDDEV_POP(v), SUM(income), (SELECT MEDIAN(v) OVER () $where LIMIT 1) $where"
)
targets=("1.2" "1.2" "1.2" "1.2" "1.0" "1.0" "1.5")
indexes="indexes on v and income"
fi

{
  echo "## End-to-end latency: dpproxy against the backend's exact query"
  echo
  echo "\`bash bench/latency/run.sh\` ($(date -u '+%Y-%m-%d %H:%M UTC'); DATA=$DATA, ROWS=$ROWS, RUNS=$RUNS, ε = 1, mechanism auto, $indexes;"
  echo "load average at start $(cut -d' ' -f1-3 /proc/loadavg) on 2 cores shared with other work: compare the ratios, which alternate the sides run by run, not the seconds)."
  echo
  echo "| backend | statement | dpproxy s (median) | exact s (median) | ratio | target |"
  echo "|---|---|--:|--:|--:|--:|"
} > "$work/report.md"

for i in "${!statements[@]}"; do
  IFS='|' read -r name private pgexact myexact <<<"${statements[$i]}"
  [[ -z "${ONLY:-}" ]] || grep -Eq -- "$ONLY" <<<"$name" || continue
  for backend in $BACKENDS; do
    : > "$work/p"; : > "$work/e"
    # A warm-up of both sides, which also stops the script if either fails.
    if [ "$backend" = PostgreSQL ]; then
      mariadb -h127.0.0.1 -P"$PROXY_PG_PORT" -ubench -pbench --ssl=0 -N -e "$private" >/dev/null
      psql -h127.0.0.1 -Upostgres "$PGDB" -qAtc "$pgexact" >/dev/null
    else
      mariadb -h127.0.0.1 -P"$PROXY_MY_PORT" -ubench -pbench --ssl=0 -N -e "$private" >/dev/null
      mariadb -h127.0.0.1 -P3306 -uroot --ssl=0 -N "$MYDB" -e "$myexact" >/dev/null
    fi
    for _ in $(seq "$RUNS"); do
      if [ "$backend" = PostgreSQL ]; then
        seconds mariadb -h127.0.0.1 -P"$PROXY_PG_PORT" -ubench -pbench --ssl=0 -N -e "$private" >> "$work/p"
        seconds psql -h127.0.0.1 -Upostgres "$PGDB" -qAtc "$pgexact" >> "$work/e"
      else
        seconds mariadb -h127.0.0.1 -P"$PROXY_MY_PORT" -ubench -pbench --ssl=0 -N -e "$private" >> "$work/p"
        seconds mariadb -h127.0.0.1 -P3306 -uroot --ssl=0 -N "$MYDB" -e "$myexact" >> "$work/e"
      fi
    done
    p=$(median < "$work/p"); e=$(median < "$work/e")
    ratio=$(awk -v p="$p" -v e="$e" 'BEGIN {printf "%.2f", p / e}')
    echo "| $backend | $name | $p | $e | ${ratio}× | ≤ ${targets[$i]}× |" | tee -a "$work/report.md"
  done
done
cp "$work/report.md" "$OUT"
echo "wrote $OUT"
