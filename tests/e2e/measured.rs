//! The end-to-end tests that compare latencies, in test binaries of their own: `e2e-measured`
//! runs their servers on sled, `e2e-measured-postgres` ([`measured_postgres.rs`]) on
//! PostgreSQL. Cargo runs test binaries one after another, so while these measure, no other
//! test shares the machine's cores with them.

pub mod support;

mod plugin_latency;
