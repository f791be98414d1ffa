//! Ferry: the service that carries customer accounts from a retiring energy supplier onto the
//! platform.
//!
//! Data flows one way: [`api`] (HTTP) → [`domain`] (rules and use cases) → [`store`]
//! (sled, or PostgreSQL for many instances). [`auth`] issues and checks tokens, [`config`]
//! resolves settings, [`server`] runs it all ([`lease`]: what one instance at a time does),
//! and [`cli`] is the `ferry` command line.

pub mod api;
pub mod auth;
pub mod bounded_map;
pub mod cli;
pub mod config;
pub mod documents;
pub mod domain;
pub mod events;
pub mod lease;
pub mod plugins;
pub mod server;
pub mod store;
pub mod vendors;
