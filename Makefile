# The README's commands.
.PHONY: demo build test bench

# Start the zero-configuration demo on 127.0.0.1:3307 (user demo, password demo).
demo:
	go run ./cmd/dpproxy

build:
	go build -o bin/dpproxy ./cmd/dpproxy

# Unit, golden, integration and end-to-end tests. Integration tests run
# against PostgreSQL and MariaDB when DPPROXY_TEST_POSTGRES_DSN and
# DPPROXY_TEST_MYSQL_DSN are set (.ci/run sets both), and fail if they are
# set but the database is unreachable.
test:
	go test -count=1 -timeout 40m ./...

# Accuracy benchmarks; results go to bench/RESULTS.md.
bench:
	go run ./bench/cmd/accuracy
