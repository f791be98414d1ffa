//! `/admin/v1/suppliers`: the import suppliers, their status and settings, with the number of
//! import processes in each state and the plugin each one has.

use crate::imports::ImportState;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// The status the operator team sets on a supplier.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, ToSchema,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SupplierStatus {
    /// In use and accepting new accounts for migration.
    Ongoing,
    /// Migrations paused; more accounts are expected later.
    Paused,
    /// Migrations finished; no more accounts are expected.
    Complete,
}

impl SupplierStatus {
    pub const ALL: [SupplierStatus; 3] = [Self::Ongoing, Self::Paused, Self::Complete];

    /// The spelling the API uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ongoing => "ONGOING",
            Self::Paused => "PAUSED",
            Self::Complete => "COMPLETE",
        }
    }

    /// Reads the API's spelling (exactly; see [`SupplierStatus::parse_loose`] for people).
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|status| status.as_str() == text)
    }

    /// Reads what a person types: any case, `-` for `_`.
    pub fn parse_loose(text: &str) -> Option<Self> {
        Self::parse(&text.trim().to_uppercase().replace('-', "_"))
    }
}

impl std::fmt::Display for SupplierStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A supplier as the admin API answers it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Supplier {
    pub code: String,
    pub name: String,
    pub document_root: String,
    pub send_migration_emails: bool,
    pub status: SupplierStatus,
    pub expiry_window_days: i64,
    /// Unknown request fields are refused (`unknown_field`) rather than ignored and named.
    #[serde(default)]
    pub strict_unknown_fields: bool,
    pub created_at: String,
    pub updated_at: String,
    /// Number of import processes in each state (`PENDING`, `IN_PROGRESS`, `PROCESSED`,
    /// `ERRORED`, `CANCELLED`).
    pub counts: BTreeMap<ImportState, u64>,
    /// The supplier's plugin; null when it has none.
    #[schema(required = true)]
    pub plugin: Option<SupplierPlugin>,
}

impl Supplier {
    /// Import processes in `state` (0 when the answer has none).
    pub fn count(&self, state: ImportState) -> u64 {
        self.counts.get(&state).copied().unwrap_or(0)
    }
}

/// What the supplier list shows of a plugin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SupplierPlugin {
    pub sha256: String,
    pub name: String,
    pub version: String,
    pub size_bytes: u64,
    pub installed_at: String,
}

/// Body of `POST /admin/v1/suppliers`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewSupplier {
    #[schema(pattern = "^[A-Z][A-Z0-9_]*$", max_length = 32, example = "OLD_ENERGY")]
    pub code: String,
    #[schema(min_length = 1, max_length = 255)]
    pub name: String,
    /// Root of the supplier's documents in the bucket (may be empty): no scheme, no `..`.
    #[schema(max_length = 512)]
    pub document_root: String,
    #[serde(default)]
    pub send_migration_emails: bool,
    /// Default `ONGOING`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub status: Option<SupplierStatus>,
    /// Staged accounts older than this are cancelled (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, minimum = 1, maximum = 3650)]
    pub expiry_window_days: Option<i64>,
    /// Refuse unknown request fields (`unknown_field`) instead of ignoring and naming them
    /// (default false, as the real platform).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub strict_unknown_fields: Option<bool>,
}

/// Body of `PATCH /admin/v1/suppliers/{code}`: only the fields to change.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SupplierChange {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, min_length = 1, max_length = 255)]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, max_length = 512)]
    pub document_root: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub send_migration_emails: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub status: Option<SupplierStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, minimum = 1, maximum = 3650)]
    pub expiry_window_days: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub strict_unknown_fields: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_supplier_reads_with_counts_by_state_and_unknown_fields_ignored() {
        let supplier: Supplier = serde_json::from_value(json!({
            "code": "OLD_CO", "name": "Old Co", "document_root": "old_co/",
            "send_migration_emails": false, "status": "ONGOING", "expiry_window_days": 30,
            "created_at": "2025-03-01T09:00:00Z", "updated_at": "2025-03-01T09:00:00Z",
            "counts": {"PENDING": 3, "ERRORED": 1}, "plugin": null, "something_new": [1, 2]
        }))
        .expect("reads");
        assert_eq!(supplier.plugin, None);
        assert_eq!(supplier.count(ImportState::Pending), 3);
        assert_eq!(supplier.count(ImportState::Processed), 0);
    }

    #[test]
    fn a_change_carries_only_the_fields_given() {
        let change = SupplierChange {
            status: Some(SupplierStatus::Paused),
            ..SupplierChange::default()
        };
        assert_eq!(
            serde_json::to_value(change).expect("serializes"),
            json!({"status": "PAUSED"})
        );
    }

    #[test]
    fn statuses_read_as_people_type_them() {
        assert_eq!(
            SupplierStatus::parse_loose(" paused"),
            Some(SupplierStatus::Paused)
        );
        assert_eq!(SupplierStatus::parse("paused"), None);
        assert_eq!(SupplierStatus::parse_loose("done"), None);
    }
}
