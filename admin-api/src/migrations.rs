//! `/admin/v1/suppliers/{code}/migrations`: bulk migrations of a supplier's pending accounts.

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
