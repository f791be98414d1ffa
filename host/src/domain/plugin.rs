//! A supplier's installed plugin, as the operator sees it and as it is stored.

use super::ports::Hook;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PluginRecord {
    pub supplier: String,
    /// Hex SHA-256 of the component.
    pub sha256: String,
    /// Given at installation (default `plugin`).
    pub name: String,
    /// Given at installation (default: the first 12 digits of the sha256).
    pub version: String,
    pub size_bytes: u64,
    pub installed_at: DateTime<Utc>,
    /// The hooks the component implements.
    pub hooks: Vec<Hook>,
    /// Settings the plugin reads through `host.config`.
    pub config: BTreeMap<String, String>,
}

impl PluginRecord {
    /// How errors name this plugin: `example-plugin 0.1.0 (sha256 3f2a…) of OLD_CO`.
    pub fn label(&self) -> String {
        let short = self.sha256.get(..12).unwrap_or(&self.sha256);
        format!(
            "{} {} (sha256 {short}…) of {}",
            self.name, self.version, self.supplier
        )
    }
}
