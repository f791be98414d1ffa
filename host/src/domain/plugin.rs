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
    /// The version of the WIT world the component was built against (`0.1.0`, `0.2.0`): the
    /// newest its hooks are exported under. Known once the component is loaded (a record
    /// stored before Ferry kept it gets it when the plugin is loaded at start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wit_version: Option<String>,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_stored_before_wit_versions_were_kept_still_reads() {
        let stored = serde_json::json!({
            "supplier": "OLD_CO", "sha256": "ab", "name": "plugin", "version": "ab",
            "size_bytes": 1, "installed_at": "2025-01-01T00:00:00Z", "hooks": [], "config": {}
        });
        let record: PluginRecord = serde_json::from_value(stored).expect("reads");
        assert_eq!(record.wit_version, None);
    }
}
