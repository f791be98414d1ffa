//! End-to-end tests: the real `ferry` binary over real HTTP, with real sled files (`e2e`) or
//! a real PostgreSQL database (`e2e-postgres`, the same tests).

mod accounts_v2;
mod admin;
mod auth;
mod cli;
mod connections;
mod crash;
mod database_outage;
mod document_bucket;
mod error_tail;
mod errors;
mod events;
mod instances;
mod meter_points;
mod migration_locks;
mod notes;
mod opening;
mod operations;
mod payment_instructions;
mod plugin_load;
mod plugins;
mod reads;
mod real_examples;
mod reconciliation;
mod reports;
mod staging;
mod statements;
mod storage_faults;
pub mod support;
mod transactions;
