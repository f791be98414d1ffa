//! `/admin/v1/suppliers/{code}/migrations`: bulk migrations of a supplier's pending accounts,
//! of its error tail, or of the accounts an operator names ([`MigrationSelection`]).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum MigrationState {
    Running,
    Completed,
    /// The supplier was paused or completed while the job ran.
    Stopped,
}

impl MigrationState {
    /// The spelling the API uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "RUNNING",
            Self::Completed => "COMPLETED",
            Self::Stopped => "STOPPED",
        }
    }
}

impl std::fmt::Display for MigrationState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A bulk migration, as last seen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Migration {
    pub id: String,
    pub supplier: String,
    pub state: MigrationState,
    /// Accounts claimed by the job.
    pub total: u64,
    /// Accounts migrated.
    pub processed: u64,
    /// Accounts whose migration failed: now `ERRORED`, or `PENDING` again where the failure
    /// could not be recorded.
    pub failed: u64,
    pub started_at: String,
    #[schema(required = true)]
    pub finished_at: Option<String>,
    /// The accounts the job was started over, as its start named them (`{}`: every account
    /// awaiting migration).
    #[serde(default)]
    #[schema(required = true)]
    pub selection: MigrationSelection,
}

/// Which accounts a bulk migration is started over: the body of its start, optional. Nothing
/// (no body, or `{}`): every account awaiting migration, `PENDING` or `ERRORED`. `only` and
/// `accounts` do not go together.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MigrationSelection {
    /// `errored`: the error tail, the accounts awaiting migration (`PENDING` or `ERRORED`)
    /// whose last migration attempt failed, re-staged since or not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only: Option<MigrationTail>,
    /// With `only`: the accounts of the tail whose attempt failed with this error code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 100)]
    pub error_code: Option<String>,
    /// Exactly these accounts (external account numbers of the supplier), those of them
    /// awaiting migration; one that the supplier never staged is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_items = 1, max_items = 10000)]
    pub accounts: Option<Vec<String>>,
}

impl MigrationSelection {
    /// Every account awaiting migration: what a start with no body migrates.
    pub fn is_everything(&self) -> bool {
        self == &Self::default()
    }
}

/// A part of the accounts a bulk migration can be started over.
///
/// Mismatched accounts (their reconciliation `MISMATCH`) are not one: they are migrated
/// already, and a mismatch is worked by correcting the account's ledger
/// (`transactions/create/`), not by migrating it again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum MigrationTail {
    /// The accounts whose last migration attempt failed.
    Errored,
}

impl MigrationTail {
    /// The spelling the API uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Errored => "errored",
        }
    }
}

impl Migration {
    pub fn is_running(&self) -> bool {
        self.state == MigrationState::Running
    }

    /// Accounts dealt with so far, successfully or not.
    pub fn done(&self) -> u64 {
        self.processed.saturating_add(self.failed)
    }
}
