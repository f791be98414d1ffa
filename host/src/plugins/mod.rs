//! The WebAssembly plugin host: per-supplier validation and mapping rules as sandboxed
//! components of the WIT package `ferry:supplier-rules`, every published version of it
//! ([`wit`]: one module per version, with its bindings and its account record, and the
//! records every version shares, each stated once).
//!
//! [`runtime`] runs components (wasmtime, one engine, a fresh store per call, whose
//! [`sandbox`] holds the deadline, memory cap and captured output), [`prepared`] makes
//! instances ahead of their calls and drops used stores in the machine's idle time,
//! [`registry`] keeps one plugin per supplier and implements the domain's
//! [`SupplierRules`](crate::domain::ports::SupplierRules) behind a per-supplier bulkhead,
//! [`threads`] runs plugins that overran their deadline below the host's CPU priority, and
//! [`watch`] hot-reloads plugins from a directory during development.

mod cache;
pub mod dev;
mod output;
mod prepared;
pub mod registry;
mod running_time;
pub mod runtime;
mod sandbox;
pub mod threads;
mod to_its_end;
pub mod watch;
mod wit;

pub use cache::sha256_hex;
pub use registry::{Bulkhead, PluginFailure, PluginView, Plugins};
pub use runtime::{HookRun, LoadedComponent, PluginConfig, PluginError, PluginLimits, Runtime};
pub use sandbox::LogLine;
pub use wit::WitVersion;
