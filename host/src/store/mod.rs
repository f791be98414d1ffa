//! The storage port ([`crate::domain::storage`]) on sled, the embedded default, and on
//! PostgreSQL, for many instances over one database.
//!
//! The port's types are re-exported here for the binary's edge (the server, tests, benches),
//! which picks the backend.

mod blocking;
#[cfg(test)]
pub mod contract;
mod direct_file;
pub mod health;
mod journal;
mod postgres_account;
mod postgres_store;
mod sled_account;
mod sled_decoded;
mod sled_event_ids;
mod sled_event_log;
mod sled_event_retention;
mod sled_generations;
mod sled_import_counts;
mod sled_kept_indexes;
mod sled_listing;
mod sled_note_index;
mod sled_outbox;
mod sled_store;
mod sled_transaction_index;

pub use crate::domain::storage::*;
pub use health::StorageHealth;
pub use postgres_store::{
    DEFAULT_DATABASE_TIMEOUT, DEFAULT_DATABASE_WAIT, DatabaseLimits, PgStore, migrate,
};
pub use sled_store::{DEFAULT_CACHE_BYTES, SledStore};
