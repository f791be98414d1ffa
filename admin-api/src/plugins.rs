//! `/admin/v1/suppliers/{code}/plugin`: a supplier's WebAssembly plugin — what is installed,
//! its configuration, and its recent failures.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// An installed plugin (the answer to installing, configuring or removing it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PluginRecord {
    pub supplier: String,
    /// Hex SHA-256 of the component.
    pub sha256: String,
    /// Given at installation (default `plugin`).
    pub name: String,
    /// Given at installation (default: the first 12 digits of the sha256).
    pub version: String,
    pub size_bytes: u64,
    pub installed_at: String,
    /// The hooks the component implements (`validate-account`, `map-notes`, ...).
    pub hooks: Vec<String>,
    /// Settings the plugin reads through `host.config`.
    pub config: BTreeMap<String, String>,
    /// The version of the WIT world `ferry:supplier-rules` the component was built against
    /// (`0.1.0`, `0.2.0`; see PLUGINS.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wit_version: Option<String>,
}

/// A plugin as operators see it: the record and how it has been doing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Plugin {
    #[serde(flatten)]
    pub record: PluginRecord,
    /// The latest failed calls, newest last.
    pub recent_failures: Vec<PluginFailure>,
    /// Its calls run below the host's CPU priority: it overran its deadline within the last
    /// minute (a new version starts at the normal priority).
    pub low_priority: bool,
}

/// One failed hook call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PluginFailure {
    pub at: String,
    pub hook: String,
    pub error: String,
}
