#!/usr/bin/env bash
# GROUP BY a partition-selected key with many released values, through the
# proxy on PostgreSQL and MariaDB, against the database's own exact query.
#   bash bench/keys/run.sh        (from anywhere; writes bench/RESULTS-keys.md)
# Needs PostgreSQL on 127.0.0.1:5432 (user postgres) and MariaDB on
# 127.0.0.1:3306 (root, no password), and the psql and mariadb clients.
# The table manykeys of database DB (default dpbench, created if missing)
# gets ROWS rows (default 1.2·10^6): k = i mod KEYS (default 10000, the
# most groups one statement answers: beyond it the proxy answers the first
# 10,000 released keys and the exact query all of them), its
# text twin s = 'key' || k, and v = i mod 97. Each statement runs RUNS
# times (default 3) through the proxy and as the exact query, alternating;
# the table gives the median seconds. An exact query that runs past
# EXACT_TIMEOUT seconds (default 120; MariaDB's window MEDIAN over every
# key is that slow) is stopped and shown as "> EXACT_TIMEOUT".
set -euo pipefail
cd "$(dirname "$0")/../.."
ROWS=${ROWS:-1200000}
KEYS=${KEYS:-10000}
RUNS=${RUNS:-3}
DB=${DB:-dpbench}
PORT_PG=${PORT_PG:-3398}
PORT_MY=${PORT_MY:-3399}
OUT=${OUT:-bench/RESULTS-keys.md}
EXACT_TIMEOUT=${EXACT_TIMEOUT:-120}
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
go build -o "$work/dpproxy" ./cmd/dpproxy

pg() { psql -h127.0.0.1 -Upostgres -v ON_ERROR_STOP=1 -qtA "$@"; }
my() { mariadb --protocol=tcp -h127.0.0.1 -uroot -N "$@"; }
pg -c "SELECT 1 FROM pg_database WHERE datname = '$DB'" postgres | grep -q 1 || pg -c "CREATE DATABASE $DB" postgres
pg "$DB" <<SQL
DROP TABLE IF EXISTS manykeys;
CREATE TABLE manykeys AS SELECT g % $KEYS AS k, 'key' || (g % $KEYS) AS s, g % 97 AS v FROM generate_series(1, $ROWS) g;
VACUUM ANALYZE manykeys;
SQL
my -e "CREATE DATABASE IF NOT EXISTS $DB"
my "$DB" -e "DROP TABLE IF EXISTS manykeys; CREATE TABLE manykeys (k BIGINT, s VARCHAR(16), v BIGINT);
  INSERT INTO manykeys SELECT seq % $KEYS, CONCAT('key', seq % $KEYS), seq % 97 FROM seq_1_to_$ROWS; ANALYZE TABLE manykeys;" >/dev/null

. bench/proxy.sh
tables="  - name: manykeys
    columns:
      - {name: k, type: integer, lower: 0, upper: 1000000, partition_selection: true}
      - {name: s, type: text, partition_selection: true}
      - {name: v, type: integer, lower: 0, upper: 100}"
start_bench_proxy pg "$PORT_PG" "driver: postgres, dsn: \"postgres://postgres@127.0.0.1:5432/$DB?sslmode=disable\"" "$tables"
start_bench_proxy my "$PORT_MY" "driver: mysql, dsn: \"root@tcp(127.0.0.1:3306)/$DB\"" "$tables"
for port in "$PORT_PG" "$PORT_MY"; do
  for _ in $(seq 120); do
    mariadb -h127.0.0.1 -P"$port" -ubench -pbench --ssl=0 -N -e "SELECT 1" >/dev/null 2>&1 && break
    sleep 0.5
  done
done

# seconds CMD...: wall time of CMD (output discarded), or "timeout" if it
# failed (the exact query stopped at EXACT_TIMEOUT).
seconds() {
  local t0 t1
  t0=$(date +%s.%N)
  if ! "$@" >/dev/null 2>&1; then
    echo timeout
    return
  fi
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
proxy() { mariadb -h127.0.0.1 -P"$1" -ubench -pbench --ssl=0 -N dpproxy -e "$2"; }

# label | proxy statement | PostgreSQL exact | MariaDB exact
statements=(
  "COUNT, AVG by k (every key)|SELECT k, COUNT(*), AVG(v) FROM manykeys GROUP BY k|SELECT k, COUNT(*), AVG(v) FROM manykeys GROUP BY k|SELECT k, COUNT(*), AVG(v) FROM manykeys GROUP BY k"
  "MEDIAN by k, 300 keys|SELECT k, MEDIAN(v) FROM manykeys WHERE k < 300 GROUP BY k|SELECT k, percentile_cont(0.5) WITHIN GROUP (ORDER BY v) FROM manykeys WHERE k < 300 GROUP BY k|SELECT DISTINCT k, MEDIAN(v) OVER (PARTITION BY k) FROM manykeys WHERE k < 300"
  "COUNT, MEDIAN, p90 by k (every key)|SELECT k, COUNT(*), MEDIAN(v), PERCENTILE_CONT(v, 0.9) FROM manykeys GROUP BY k|SELECT k, COUNT(*), percentile_cont(0.5) WITHIN GROUP (ORDER BY v), percentile_cont(0.9) WITHIN GROUP (ORDER BY v) FROM manykeys GROUP BY k|SELECT DISTINCT k, COUNT(*) OVER (PARTITION BY k), MEDIAN(v) OVER (PARTITION BY k), PERCENTILE_CONT(0.9) WITHIN GROUP (ORDER BY v) OVER (PARTITION BY k) FROM manykeys"
  "COUNT by s (text key), 3,000 keys|SELECT s, COUNT(*) FROM manykeys WHERE k < 3000 GROUP BY s|SELECT s, COUNT(*) FROM manykeys WHERE k < 3000 GROUP BY s|SELECT s, COUNT(*) FROM manykeys WHERE k < 3000 GROUP BY s"
  "COUNT, AVG by s (text key, every key)|SELECT s, COUNT(*), AVG(v) FROM manykeys GROUP BY s|SELECT s, COUNT(*), AVG(v) FROM manykeys GROUP BY s|SELECT s, COUNT(*), AVG(v) FROM manykeys GROUP BY s"
)
{
  echo "# GROUP BY a partition-selected key with many released values"
  echo
  echo "\`bash bench/keys/run.sh\` (ROWS=$ROWS KEYS=$KEYS RUNS=$RUNS), $(date -u +%Y-%m-%d), $(nproc) cores."
  echo "Table manykeys: k = i mod $KEYS, s = 'key' || k, v = i mod 97; ε = 1, δ = 10^-7 (nearly every key is released)."
  echo "Median seconds of $RUNS alternating runs; ratio = dpproxy / the database's exact query."
  echo
  echo "| statement | backend | dpproxy s | exact s | ratio | released rows |"
  echo "|---|---|--:|--:|--:|--:|"
} > "$OUT"
for entry in "${statements[@]}"; do
  IFS='|' read -r label stmt pgexact myexact <<<"$entry"
  for backend in PostgreSQL MariaDB; do
    port=$PORT_PG exact=(pg "$DB" -c "SET statement_timeout = '${EXACT_TIMEOUT}s'; $pgexact")
    if [ "$backend" = MariaDB ]; then port=$PORT_MY exact=(my "$DB" -e "SET STATEMENT max_statement_time = $EXACT_TIMEOUT FOR $myexact"); fi
    rows=$(proxy "$port" "SET @dp_delta = 1e-7; $stmt" | wc -l)
    : > "$work/p" && : > "$work/e"
    for _ in $(seq "$RUNS"); do
      seconds proxy "$port" "SET @dp_delta = 1e-7; $stmt" >> "$work/p"
      seconds "${exact[@]}" >> "$work/e"
    done
    p=$(median < "$work/p")
    if grep -q timeout "$work/e"; then
      printf '| %s | %s | %.2f | > %s | < %.3f× | %s |\n' "$label" "$backend" "$p" "$EXACT_TIMEOUT" "$(echo "$p / $EXACT_TIMEOUT" | bc -l)" "$rows" >> "$OUT"
      e=timeout
    else
      e=$(median < "$work/e")
      printf '| %s | %s | %.2f | %.2f | %.2f× | %s |\n' "$label" "$backend" "$p" "$e" "$(echo "$p / $e" | bc -l)" "$rows" >> "$OUT"
    fi
    echo "$label $backend: $p s vs $e s" >&2
  done
done
cat "$OUT"
