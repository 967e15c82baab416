# The README's commands.
.PHONY: demo build test fuzz bench soak soak-oom

# Start the zero-configuration demo on 127.0.0.1:3307 (user demo, password demo).
demo:
	go run ./cmd/dpproxy

build:
	go build -o bin/dpproxy ./cmd/dpproxy

# Unit, golden, integration and end-to-end tests. Integration tests run
# against PostgreSQL and MariaDB when DPPROXY_TEST_POSTGRES_DSN and
# DPPROXY_TEST_MYSQL_DSN are set (.ci/run sets both), and fail if they are
# set but the database is unreachable; TestVitess runs against a two-shard
# Vitess when DPPROXY_TEST_VITESS_DSN is set (.ci/run starts one with
# scripts/vitess.sh).
test:
	go test -count=1 -timeout 40m ./...

# Every fuzz target for FUZZTIME each (default 25s; CI runs this). A crasher
# is saved under the package's testdata/fuzz and then replayed by make test.
FUZZTIME ?= 25s
FUZZ_TARGETS = FuzzFrontEnd:./internal/planner FuzzPackets:./internal/wire \
	FuzzParseConfig:./internal/catalog FuzzSynopsisDecoder:./internal/mech/histogram \
	FuzzStateDecoder:./internal/mech/mm
fuzz:
	FUZZTIME=$(FUZZTIME) bash scripts/fuzz.sh $(FUZZ_TARGETS)

# Accuracy benchmarks; results go to bench/RESULTS.md.
bench:
	go run ./bench/cmd/accuracy

# Soak and fault test (minutes; not part of make test): SOAK_CLIENTS clients
# for SOAK_SECONDS per backend against a private PostgreSQL and MariaDB
# (started in a temporary directory on ports 55432 and 53306), with the proxy
# killed (SIGKILL) and the backend crashed at random; fails on overspent
# budget, an uncharged answer or no recovery. soak-oom holds the proxy to a
# memory limit under hostile connections.
SOAK_CLIENTS ?= 8
SOAK_SECONDS ?= 120
soak:
	go run ./bench/cmd/soak -clients $(SOAK_CLIENTS) -seconds $(SOAK_SECONDS)

soak-oom:
	go run ./bench/cmd/soak -oom -seconds $(SOAK_SECONDS)
