//! The end-to-end tests again, every server on PostgreSQL (a database of its own each): the
//! same files as `e2e` ([`main.rs`](main.rs)), which ask [`support::backend`] where they run.

#[path = "main.rs"]
mod suite;

pub use suite::support;
