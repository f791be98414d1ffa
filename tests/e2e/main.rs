//! End-to-end tests: the real `ferry` binary over real HTTP, with real sled files.

mod accounts_v2;
mod admin;
mod auth;
mod cli;
mod crash;
mod errors;
mod events;
mod meter_points;
mod notes;
mod operations;
mod payment_instructions;
mod plugin_load;
mod plugins;
mod reads;
mod real_examples;
mod staging;
mod statements;
mod storage_faults;
mod support;
mod transactions;
