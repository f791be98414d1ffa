//! The admin API as the console sees it: the shapes of its answers, the errors it can give,
//! and the `AdminApi` trait the screens are written against (the real client is in
//! [`crate::http`], tests use a recording fake).
//!
//! Answers are read leniently: unknown fields are ignored and fields the host may not send yet
//! (such as a supplier's `plugin`) default to empty. Amounts stay the decimal strings the host
//! sent; they are only ever displayed.

use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::collections::BTreeMap;
use std::future::Future;

/// The status an operator can give a supplier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SupplierStatus {
    Ongoing,
    Paused,
    Complete,
}

impl SupplierStatus {
    pub const ALL: [SupplierStatus; 3] = [Self::Ongoing, Self::Paused, Self::Complete];

    /// The spelling the admin API uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ongoing => "ONGOING",
            Self::Paused => "PAUSED",
            Self::Complete => "COMPLETE",
        }
    }

    /// What the status means for the people sending accounts, shown before confirming.
    pub fn consequence(self) -> &'static str {
        match self {
            Self::Ongoing => "Staging and migrating accounts is allowed.",
            Self::Paused => "Staging is refused until the supplier is ONGOING again.",
            Self::Complete => "The migration is finished: staging is refused for good.",
        }
    }
}

/// The state of one account's import process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ImportState {
    Pending,
    InProgress,
    Processed,
    Errored,
    Cancelled,
}

impl ImportState {
    pub const ALL: [ImportState; 5] = [
        Self::Pending,
        Self::InProgress,
        Self::Processed,
        Self::Errored,
        Self::Cancelled,
    ];

    /// The spelling the admin API uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "PENDING",
            Self::InProgress => "IN_PROGRESS",
            Self::Processed => "PROCESSED",
            Self::Errored => "ERRORED",
            Self::Cancelled => "CANCELLED",
        }
    }
}

/// A supplier as listed by `GET /admin/v1/suppliers`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Supplier {
    pub code: String,
    pub name: String,
    #[serde(default)]
    pub document_root: String,
    #[serde(default)]
    pub send_migration_emails: bool,
    pub status: String,
    #[serde(default)]
    pub expiry_window_days: i64,
    #[serde(default)]
    pub created_at: String,
    #[serde(default)]
    pub updated_at: String,
    /// Import processes in each state, keyed by the state's API spelling.
    #[serde(default)]
    pub counts: BTreeMap<String, u64>,
    /// The installed plugin; absent on hosts without plugins.
    #[serde(default)]
    pub plugin: Option<PluginSummary>,
}

impl Supplier {
    pub fn count(&self, state: ImportState) -> u64 {
        self.counts.get(state.as_str()).copied().unwrap_or(0)
    }
}

/// The plugin summary carried on a supplier.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PluginSummary {
    pub sha256: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub installed_at: String,
    #[serde(default)]
    pub size_bytes: Option<u64>,
}

/// Which page of a supplier's imports to read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ImportQuery {
    pub state: Option<ImportState>,
    /// Case-insensitive substring of the external account number; empty for all.
    pub search: String,
    /// The last external account number of the previous page.
    pub after: Option<String>,
    pub limit: u32,
}

/// One page of `GET /admin/v1/suppliers/{code}/imports`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ImportPage {
    #[serde(default)]
    pub items: Vec<ImportRow>,
    #[serde(default)]
    pub next_after: Option<String>,
}

/// One account's import process.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ImportRow {
    pub external_account_number: String,
    pub state: String,
    #[serde(default)]
    pub platform_account_number: Option<String>,
    #[serde(default)]
    pub account_created_at: Option<String>,
    #[serde(default)]
    pub staged_at: String,
    #[serde(default)]
    pub updated_at: String,
    #[serde(default)]
    pub last_failure: Option<ImportFailure>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ImportFailure {
    #[serde(default)]
    pub code: String,
    #[serde(default)]
    pub detail: String,
    #[serde(default)]
    pub at: String,
}

/// A bulk migration of a supplier's pending accounts.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Migration {
    #[serde(deserialize_with = "string_or_number")]
    pub id: String,
    #[serde(default)]
    pub supplier: String,
    /// `RUNNING`, `COMPLETED` or `STOPPED`.
    pub state: String,
    #[serde(default)]
    pub total: u64,
    #[serde(default)]
    pub processed: u64,
    #[serde(default)]
    pub failed: u64,
    #[serde(default)]
    pub started_at: String,
    #[serde(default)]
    pub finished_at: Option<String>,
}

impl Migration {
    pub fn is_running(&self) -> bool {
        self.state == "RUNNING"
    }

    /// Accounts dealt with so far, successfully or not.
    pub fn done(&self) -> u64 {
        self.processed.saturating_add(self.failed)
    }
}

/// Everything kept on an imported account (`GET /admin/v1/accounts/{number}`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct AccountDetail {
    pub platform_account_number: String,
    #[serde(default)]
    pub import_supplier: String,
    #[serde(default)]
    pub external_account_number: String,
    #[serde(default)]
    pub created_at: String,
    /// The staged account as the supplier sent it.
    #[serde(default)]
    pub account: Value,
    #[serde(default)]
    pub open_statement_period_start: String,
    #[serde(default)]
    pub balance: String,
    #[serde(default)]
    pub notes: Vec<Note>,
    #[serde(default)]
    pub transactions: Vec<Transaction>,
    #[serde(default)]
    pub statements: Vec<Statement>,
    #[serde(default)]
    pub payment_instructions: Vec<PaymentInstruction>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Note {
    #[serde(deserialize_with = "string_or_number")]
    pub id: String,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub document_paths: Vec<String>,
    #[serde(default)]
    pub created_at: String,
    #[serde(default)]
    pub is_pinned: bool,
    #[serde(default)]
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Transaction {
    #[serde(default)]
    pub transaction_id: String,
    #[serde(default)]
    pub transaction_date: String,
    #[serde(default)]
    pub amount: String,
    #[serde(default, rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub reference: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    /// The text shown to the customer for this transaction.
    #[serde(default)]
    pub display_note: Option<String>,
    #[serde(default)]
    pub status: String,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Statement {
    #[serde(default)]
    pub statement_id: String,
    #[serde(default)]
    pub number: String,
    #[serde(default)]
    pub bill_period_from_date: String,
    #[serde(default)]
    pub bill_period_to_date: String,
    #[serde(default)]
    pub issued_date: String,
    #[serde(default)]
    pub gross_amount: String,
    #[serde(default)]
    pub statement_path: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PaymentInstruction {
    #[serde(default)]
    pub vendor: String,
    #[serde(default)]
    pub reference: String,
    #[serde(default, rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub details: Value,
    #[serde(default)]
    pub added_at: String,
}

/// A supplier's plugin (`GET /admin/v1/suppliers/{code}/plugin`). Hooks are named as the host
/// names them (`validate-account`, `map-notes`, ...).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PluginDetail {
    #[serde(default)]
    pub supplier: String,
    pub sha256: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub size_bytes: Option<u64>,
    #[serde(default)]
    pub installed_at: String,
    #[serde(default)]
    pub config: BTreeMap<String, Value>,
    #[serde(default)]
    pub hooks: Vec<String>,
    #[serde(default)]
    pub recent_failures: Vec<PluginFailure>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PluginFailure {
    #[serde(default)]
    pub at: String,
    #[serde(default)]
    pub hook: String,
    #[serde(default)]
    pub error: String,
}

/// One page of the event log (`GET /admin/v1/events`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct EventPage {
    #[serde(default)]
    pub events: Vec<Event>,
    #[serde(default)]
    pub next_after: Option<String>,
    #[serde(default)]
    pub relay: Option<RelayStatus>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Event {
    #[serde(deserialize_with = "string_or_number")]
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub version: Value,
    #[serde(default)]
    pub time: String,
    #[serde(default)]
    pub subject: Option<String>,
    #[serde(default)]
    pub data: Value,
    #[serde(default)]
    pub published_at: Option<String>,
}

/// How the relay that publishes events is doing.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct RelayStatus {
    pub state: String,
    #[serde(default)]
    pub lag: u64,
    #[serde(default)]
    pub last_error: Option<String>,
}

/// Why an admin call did not give an answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiError {
    /// No HTTP answer at all: the host is down, unreachable or too slow.
    #[error("cannot reach the host: {0}")]
    Unreachable(String),
    /// The host answered with an error body.
    #[error("{detail} ({code})")]
    Refused {
        status: u16,
        code: String,
        detail: String,
    },
    /// The host answered 2xx with something the console cannot read.
    #[error("unreadable answer: {0}")]
    Unreadable(String),
}

impl ApiError {
    /// The error code of a refusal (`""` for the other kinds).
    pub fn code(&self) -> &str {
        match self {
            Self::Refused { code, .. } => code,
            _ => "",
        }
    }

    /// The host does not have this endpoint (yet): a plain 404 rather than a missing record.
    pub fn is_missing_endpoint(&self) -> bool {
        matches!(self, Self::Refused { status: 404, code, .. } if code == "not_found" || code.is_empty())
    }

    /// The operator key was missing or refused.
    pub fn is_unauthorized(&self) -> bool {
        matches!(self, Self::Refused { status: 401, .. })
    }
}

/// The admin calls the console makes. Futures are `Send` so calls can run on a background
/// runtime while the interface keeps drawing.
pub trait AdminApi: Send + Sync + 'static {
    fn suppliers(&self) -> impl Future<Output = Result<Vec<Supplier>, ApiError>> + Send;

    fn set_supplier_status(
        &self,
        code: &str,
        status: SupplierStatus,
    ) -> impl Future<Output = Result<Supplier, ApiError>> + Send;

    fn imports(
        &self,
        code: &str,
        query: &ImportQuery,
    ) -> impl Future<Output = Result<ImportPage, ApiError>> + Send;

    fn account(
        &self,
        platform_account_number: &str,
    ) -> impl Future<Output = Result<AccountDetail, ApiError>> + Send;

    fn start_migration(
        &self,
        code: &str,
    ) -> impl Future<Output = Result<Migration, ApiError>> + Send;

    /// The supplier's migrations, newest first.
    fn migrations(
        &self,
        code: &str,
    ) -> impl Future<Output = Result<Vec<Migration>, ApiError>> + Send;

    fn migration(
        &self,
        code: &str,
        id: &str,
    ) -> impl Future<Output = Result<Migration, ApiError>> + Send;

    fn plugin(&self, code: &str) -> impl Future<Output = Result<PluginDetail, ApiError>> + Send;

    /// Events after the event with id `after` (from the start when `None`).
    fn events(
        &self,
        after: Option<&str>,
        limit: u32,
    ) -> impl Future<Output = Result<EventPage, ApiError>> + Send;
}

/// Reads an identifier the host may send as a string or as a number.
fn string_or_number<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    match Value::deserialize(deserializer)? {
        Value::String(text) => Ok(text),
        Value::Number(number) => Ok(number.to_string()),
        other => Err(serde::de::Error::custom(format!(
            "expected a string or a number, found {other}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_supplier_without_plugin_reads_with_unknown_fields_ignored() {
        let supplier: Supplier = serde_json::from_value(json!({
            "code": "OLD_CO", "name": "Old Co", "document_root": "old_co/",
            "send_migration_emails": false, "status": "ONGOING", "expiry_window_days": 30,
            "created_at": "2025-03-01T09:00:00Z", "updated_at": "2025-03-01T09:00:00Z",
            "counts": {"PENDING": 3, "ERRORED": 1}, "something_new": [1, 2]
        }))
        .expect("reads");
        assert_eq!(supplier.plugin, None);
        assert_eq!(supplier.count(ImportState::Pending), 3);
        assert_eq!(supplier.count(ImportState::Processed), 0);
    }

    #[test]
    fn a_null_plugin_reads_as_none_and_a_present_one_as_its_summary() {
        let base = json!({"code": "A", "name": "A", "status": "PAUSED", "plugin": null});
        let supplier: Supplier = serde_json::from_value(base).expect("reads");
        assert_eq!(supplier.plugin, None);
        let with = json!({"code": "A", "name": "A", "status": "PAUSED",
            "plugin": {"sha256": "ab12", "installed_at": "2025-03-01T09:00:00Z", "size_bytes": 1024}});
        let supplier: Supplier = serde_json::from_value(with).expect("reads");
        assert_eq!(supplier.plugin.map(|p| p.sha256), Some("ab12".to_owned()));
    }

    #[test]
    fn identifiers_read_from_numbers_and_strings() {
        let event: Event = serde_json::from_value(
            json!({"id": 42, "type": "account.migrated", "time": "t", "data": {}}),
        )
        .expect("reads");
        assert_eq!(event.id, "42");
        let event: Event = serde_json::from_value(json!({"id": "0193-a", "type": "x", "data": {}}))
            .expect("reads");
        assert_eq!(event.id, "0193-a");
    }

    #[test]
    fn only_a_plain_404_counts_as_a_missing_endpoint() {
        let refused = |status, code: &str| ApiError::Refused {
            status,
            code: code.to_owned(),
            detail: String::new(),
        };
        assert!(refused(404, "not_found").is_missing_endpoint());
        assert!(!refused(404, "plugin_not_found").is_missing_endpoint());
        assert!(!refused(400, "not_found").is_missing_endpoint());
        assert!(!ApiError::Unreachable("refused".into()).is_missing_endpoint());
    }
}
