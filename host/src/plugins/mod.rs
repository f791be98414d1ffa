//! The WebAssembly plugin host: per-supplier validation and mapping rules as sandboxed
//! components of the WIT package `ferry:supplier-rules`, every published version of it
//! (`wit/since_v*/`; [`bindings`] has one set of bindings per version, and
//! [`account_v0_1_0`], [`account_v0_2_0`] and [`account_v0_3_0`] give each version's account
//! record its view of the account document, the last two with the records of
//! [`account_document`], each stated once).
//!
//! [`runtime`] runs components (wasmtime, one engine, a fresh store per call with deadline
//! and memory cap), [`prepared`] makes instances ahead of their calls and drops used stores
//! in the machine's idle time, [`registry`] keeps one plugin per supplier and implements the
//! domain's [`SupplierRules`](crate::domain::ports::SupplierRules) behind a per-supplier
//! bulkhead,
//! [`threads`] runs plugins that overran their deadline below the host's CPU priority, and
//! [`watch`] hot-reloads plugins from a directory during development.

mod account_document;
mod account_v0_1_0;
mod account_v0_2_0;
mod account_v0_3_0;
mod bindings;
mod cache;
mod convert;
pub mod dev;
mod output;
mod prepared;
pub mod registry;
mod running_time;
pub mod runtime;
pub mod threads;
mod to_its_end;
pub mod watch;
mod wire;

pub use cache::sha256_hex;
pub use registry::{Bulkhead, PluginFailure, PluginView, Plugins};
pub use runtime::{
    HookRun, LoadedComponent, LogLine, PluginConfig, PluginError, PluginLimits, Runtime, WitVersion,
};
