# Conveniences over plain cargo (install just with: cargo install just --locked).

# Run the service on its embedded defaults (./ferry-data, 127.0.0.1:8080).
run:
    cargo run --release -p ferry-host -- serve

# Run it with a demo supplier and API key, printing a ready-to-paste request.
demo:
    cargo run --release -p ferry-host -- serve --demo

# The README's test command.
test:
    cargo test

# Formatting and lints, as CI-clean as the tests.
lint:
    cargo fmt --all -- --check
    cargo clippy --all-targets -- -D warnings

fmt:
    cargo fmt --all

# What CI runs on a clean clone.
ci:
    bash .ci/run
