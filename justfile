# Conveniences over plain cargo (install just with: cargo install just --locked).

# Run the service on its embedded defaults (./ferry-data, 127.0.0.1:8080).
run:
    cargo run --release -p ferry-host -- serve

# Run it with a demo supplier and API key, printing a ready-to-paste request.
demo:
    cargo run --release -p ferry-host -- serve --demo

# Build the plugins in plugins/ (example and test fixtures) for wasm32-wasip2.
plugins:
    rustup target add wasm32-wasip2
    cargo build --release --target wasm32-wasip2 --manifest-path plugins/Cargo.toml --target-dir target/plugins

# Benchmarks: a plugin hook call on a fresh instance vs native rules; the event relay vs
# redis-benchmark -t xadd; the HTTP API of the real server under load vs a bare axum
# baseline (ferry-bench), whose results replace the latest run in BENCHMARKS.md (criterion
# prints the other two's).
bench: plugins
    cargo bench -p ferry-host --bench plugin_hook
    cargo bench -p ferry-host --bench relay
    cargo run --release -p ferry-bench -- --write BENCHMARKS.md

# A supplier's whole migration (ferry-bench --only campaign): `accounts` staged with their
# ledger, processed and given notes, transactions, statements and a payment instruction, on
# sled and on PostgreSQL with one and three instances; its results replace the latest campaign
# in BENCHMARKS.md (the load run's stay).
campaign accounts="100000": plugins
    cargo run --release -p ferry-bench -- --only campaign --campaign-accounts {{accounts}} --database-url postgres://postgres@127.0.0.1:5432/postgres --instances 1,3 --write BENCHMARKS.md

# The example plugin's validate-account under valgrind, 1200 calls minus 200, over 1000.
# Instructions per plugin hook call (callgrind: steady where times are not).
plugin-instructions: plugins
    #!/usr/bin/env bash
    set -euo pipefail
    cargo build --release -p ferry-host --example plugin_calls
    count() { valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/examples/plugin_calls "$1" 2>&1 | sed -n 's/.*Collected : //p'; }
    echo "instructions per call: $(( ($(count 1200) - $(count 200)) / 1000 ))"

# The operator console against a local server (key from ./ferry-data/operator.key unless set).
console url="http://127.0.0.1:8080":
    cargo run -p ferry-console -- --url {{url}} --operator-key "${FERRY_OPERATOR_KEY:-$(cat ferry-data/operator.key)}"

# The README's test command.
test:
    cargo test

# Schemathesis against the real server and its /v1/openapi.json (as CI runs it; needs
# `python3 -m pip install schemathesis==4.32.5`, curl and jq). Extra arguments go to it.
schemathesis *args:
    .ci/schemathesis {{args}}

# Formatting and lints, as CI-clean as the tests.
lint:
    cargo fmt --all -- --check
    cargo fmt --manifest-path plugins/Cargo.toml --all -- --check
    cargo clippy --all-targets -- -D warnings

fmt:
    cargo fmt --all
    cargo fmt --manifest-path plugins/Cargo.toml --all

# What CI runs on a clean clone.
ci:
    bash .ci/run
