#!/usr/bin/env bash
# A two-shard Vitess cluster (vttestserver) on the machine's MariaDB mysqld,
# for the end-to-end test TestVitess (cmd/dpproxy) and bench/RESULTS-vitess.md.
#
#   scripts/vitess.sh build   build vttestserver, vtcombo and mysqlctl from the
#                             Go module proxy into the cache (reused if present)
#   scripts/vitess.sh start   start the cluster (keyspace dpproxy, shards -80
#                             and 80-) and wait until vtgate answers
#   scripts/vitess.sh stop    stop it and remove its data
#   scripts/vitess.sh port    print vtgate's MySQL port
#   scripts/vitess.sh dsn     print a go-sql-driver DSN for the keyspace
#   scripts/vitess.sh http    print vtgate's HTTP address (its plan cache:
#                             /debug/query_plans)
#
# Nothing of Vitess is committed: `go install vitess.io/vitess/...@v` is
# refused (its go.mod has exclude directives), so the module is downloaded
# with `go mod download` and built in place. Its vttest configuration is for
# MySQL 8; a copy under the cache is edited to run on MariaDB 10.11: the
# super-read-only line of test-suite.cnf and the super_read_only statements
# of init_db.sql are removed (MariaDB has no such variable).
#
# Environment: DPPROXY_VITESS_CACHE (default ~/.cache/dpproxy-vitess),
# DPPROXY_VITESS_STATE (default $DPPROXY_VITESS_CACHE/run),
# DPPROXY_VITESS_PORT (base port, default 34400; vtgate's MySQL port is
# base+3, mysqld's base+2), VT_MYSQL_ROOT (default /usr: /usr/sbin/mysqld).
set -euo pipefail
export GOFLAGS=-buildvcs=false GOTOOLCHAIN=local

version=v0.24.4
cache=${DPPROXY_VITESS_CACHE:-$HOME/.cache/dpproxy-vitess}
vtroot=$cache/$version
state=${DPPROXY_VITESS_STATE:-$cache/run}
base=${DPPROXY_VITESS_PORT:-34400}
keyspace=dpproxy
export VT_MYSQL_ROOT=${VT_MYSQL_ROOT:-/usr}

log() { printf '== vitess: %s\n' "$*" >&2; }

build() {
  if [ -x "$vtroot/bin/vttestserver" ] && [ -x "$vtroot/bin/vtcombo" ] && [ -x "$vtroot/bin/mysqlctl" ] &&
    [ -f "$vtroot/config/init_db.sql" ]; then
    log "using the build in $vtroot"
    return
  fi
  local start=$SECONDS dir
  dir=$(go mod download -json "vitess.io/vitess@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -d "$dir" ] || { log "go mod download vitess.io/vitess@$version gave no directory"; exit 1; }
  mkdir -p "$vtroot/bin"
  log "building vttestserver, vtcombo and mysqlctl from $dir"
  (cd "$dir" && go build -trimpath -o "$vtroot/bin/" ./go/cmd/vttestserver ./go/cmd/vtcombo ./go/cmd/mysqlctl)
  rm -rf "$vtroot/config"
  cp -r "$dir/config" "$vtroot/config"
  chmod -R u+w "$vtroot/config"
  sed -i '/super-read-only/d' "$vtroot/config/mycnf/test-suite.cnf"
  sed -i '/super_read_only/d' "$vtroot/config/init_db.sql"
  log "build took $((SECONDS - start)) s"
}

port() { echo $((base + 3)); }

running() { [ -f "$state/vttestserver.pid" ] && kill -0 "$(cat "$state/vttestserver.pid")" 2>/dev/null; }

start() {
  build
  if running; then
    log "already running (pid $(cat "$state/vttestserver.pid")), vtgate on port $(port)"
    return
  fi
  rm -rf "$state"
  mkdir -p "$state/schema/$keyspace" "$state/tmp" "$state/data"
  # The keyspace is sharded with a hash vindex; tables and their vindexes
  # are created by the tests (CREATE TABLE, ALTER VSCHEMA ... ADD VINDEX).
  cat >"$state/schema/$keyspace/vschema.json" <<'EOF'
{"sharded": true, "vindexes": {"hash": {"type": "hash"}}, "tables": {}}
EOF
  # mysqlctl refuses to run as root: as root, the cluster runs in a user
  # namespace where this user is uid 1000 (files stay root's on the host).
  local asuser=()
  if [ "$(id -u)" = 0 ]; then asuser=(unshare --user --map-user=1000 --map-group=1000); fi
  log "starting vttestserver (keyspace $keyspace, shards -80 and 80-) on base port $base"
  VTROOT=$vtroot VTDATAROOT=$state/tmp setsid "${asuser[@]}" "$vtroot/bin/vttestserver" \
    --port "$base" --mysql-bind-host 127.0.0.1 --vtcombo-bind-host 127.0.0.1 \
    --keyspaces "$keyspace" --num-shards 2 --replica-count 0 --rdonly-count 0 \
    --schema-dir "$state/schema" --vschema-ddl-authorized-users '%' \
    --data-dir "$state/data" >"$state/vttestserver.log" 2>&1 </dev/null &
  echo $! >"$state/vttestserver.pid"
  for _ in $(seq 1 240); do
    if ! running; then
      log "vttestserver exited; its log:"
      tail -n 50 "$state/vttestserver.log" >&2
      exit 1
    fi
    if mariadb --protocol=tcp -h127.0.0.1 -P"$(port)" -uroot --ssl=0 -e "SHOW VITESS_SHARDS" 2>/dev/null | grep -q -- "$keyspace/80-"; then
      log "vtgate answers on port $(port)"
      return
    fi
    sleep 1
  done
  log "vtgate did not answer within 240 s; the log:"
  tail -n 50 "$state/vttestserver.log" >&2
  exit 1
}

stop() {
  if running; then
    local pid
    pid=$(cat "$state/vttestserver.pid")
    log "stopping vttestserver (pid $pid)"
    kill -TERM "$pid"
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    # vttestserver runs in its own session: whatever it left (vtcombo,
    # mysqld) goes with its process group.
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -rf "$state"
}

case "${1:-}" in
build) build ;;
start) start ;;
stop) stop ;;
port) port ;;
dsn) echo "root@tcp(127.0.0.1:$(port))/$keyspace" ;;
http) echo "127.0.0.1:$base" ;;
*)
  echo "usage: $0 build|start|stop|port|dsn|http" >&2
  exit 2
  ;;
esac
