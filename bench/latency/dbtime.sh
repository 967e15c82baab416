#!/usr/bin/env bash
# Database-side time of single statements on MariaDB, without the proxy or
# the client's start: each line of QUERIES is "name|SQL"; every round runs
# each statement 3 times in one session (the rounds interleave the
# statements, so that load from other processes hits them alike) and the
# durations come from SHOW PROFILES. Prints the minimum, the lower quartile
# and the median per statement, in seconds.
#   MYDB=dpbench ROUNDS=5 bash bench/latency/dbtime.sh bench/latency/mariadb-clamp.queries
# The table pums is the one run.sh loads.
set -euo pipefail
MYDB=${MYDB:-dpbench}
ROUNDS=${ROUNDS:-5}
mapfile -t lines < <(grep -v '^#' "$1" | grep .)
declare -A times
for _ in $(seq "$ROUNDS"); do
  for line in "${lines[@]}"; do
    name=${line%%|*}; sql=${line#*|}
    out=$(mariadb -h127.0.0.1 -P3306 -uroot --ssl=0 -N -B "$MYDB" \
      -e "SET profiling=1; $sql; $sql; $sql; SHOW PROFILES;" | awk -F'\t' 'NF==3 && $1 ~ /^[0-9]+$/ {print $2}')
    times[$name]+="$(echo $out) "
  done
done
for line in "${lines[@]}"; do
  name=${line%%|*}
  echo "$name: $(echo ${times[$name]} | tr ' ' '\n' | grep . | sort -n |
    awk '{v[NR]=$1} END {printf "min %.3f  q1 %.3f  median %.3f", v[1], v[int((NR+3)/4)], v[int((NR+1)/2)]}')"
done
