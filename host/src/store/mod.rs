//! The storage port ([`crate::domain::storage`]) on sled, the embedded default
//! ([`sled`]: the engine with a write-ahead journal of Ferry's own in front of it), and on
//! PostgreSQL ([`postgres`]), for many instances over one database.
//!
//! The port's types are re-exported here for the binary's edge (the server, tests, benches),
//! which picks the backend.

#[cfg(test)]
pub mod contract;
pub mod health;
pub mod postgres;
pub mod sled;

pub use self::sled::{DEFAULT_CACHE_BYTES, SledStore};
pub use crate::domain::storage::*;
pub use health::StorageHealth;
pub use postgres::{
    DEFAULT_DATABASE_TIMEOUT, DEFAULT_DATABASE_WAIT, DatabaseLimits, PgStore, migrate,
};
