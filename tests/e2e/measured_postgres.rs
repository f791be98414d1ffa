//! The end-to-end tests that compare latencies again, every server on PostgreSQL: the same
//! files as `e2e-measured` ([`measured.rs`](measured.rs)).

#[path = "measured.rs"]
mod suite;

pub use suite::support;
