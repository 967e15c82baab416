#!/usr/bin/env bash
# Runs each fuzz target "Name:./package" given as an argument for $FUZZTIME.
# A target fails when Go writes a failing input (it is then replayed by
# make test from the package's testdata/fuzz) or reports any other failure.
# Go's fuzz coordinator can end a run that found nothing with "context
# deadline exceeded" when the time runs out while a worker is busy (seen on
# a loaded machine): that alone is reported and not counted as a failure.
set -uo pipefail
fuzztime=${FUZZTIME:-25s}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
for t in "$@"; do
  name=${t%%:*} pkg=${t#*:}
  echo "== $name ($fuzztime)"
  if go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -fuzzminimizetime 5s "$pkg" 2>&1 | tee "$out"; then
    continue
  fi
  if grep -q 'Failing input written to' "$out" || grep -q '^panic:' "$out"; then
    status=1
  elif grep -qx '    context deadline exceeded' "$out" && [ "$(grep -c '^--- FAIL' "$out")" = 1 ]; then
    echo "== $name: the fuzz run ended with 'context deadline exceeded' and no failing input (not a failure)"
  else
    status=1
  fi
done
exit $status
