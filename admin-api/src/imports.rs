//! `/admin/v1/suppliers/{code}/imports`: a supplier's import processes, page by page.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The state of one account's import process.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, ToSchema,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ImportState {
    /// Staged, not migrated yet.
    Pending,
    /// Being migrated (by a process call or a bulk migration).
    InProgress,
    /// Migrated: the platform account exists.
    Processed,
    /// The last migration attempt failed.
    Errored,
    /// Staged longer than the supplier's expiry window.
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

    /// The spelling the API uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "PENDING",
            Self::InProgress => "IN_PROGRESS",
            Self::Processed => "PROCESSED",
            Self::Errored => "ERRORED",
            Self::Cancelled => "CANCELLED",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|state| state.as_str() == text)
    }
}

impl std::fmt::Display for ImportState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which page of a supplier's imports to read (the query of the listing).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ImportQuery {
    pub state: Option<ImportState>,
    /// Case-insensitive part of the external account number; empty for all.
    pub search: String,
    /// The last external account number of the previous page.
    pub after: Option<String>,
    /// Page size; 0 for the server's default.
    pub limit: u32,
}

impl ImportQuery {
    /// The query string's pairs, in the order the server documents them.
    pub fn pairs(&self) -> Vec<(&'static str, String)> {
        let mut pairs = Vec::new();
        if let Some(state) = self.state {
            pairs.push(("state", state.as_str().to_owned()));
        }
        if !self.search.is_empty() {
            pairs.push(("q", self.search.clone()));
        }
        if self.limit > 0 {
            pairs.push(("limit", self.limit.to_string()));
        }
        if let Some(after) = &self.after {
            pairs.push(("after", after.clone()));
        }
        pairs
    }
}

/// One page of import processes, ordered by external account number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ImportPage {
    pub items: Vec<ImportItem>,
    /// Pass as `after` for the next page; null on the last page.
    #[schema(required = true)]
    pub next_after: Option<String>,
}

/// One account's import process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ImportItem {
    pub external_account_number: String,
    pub state: ImportState,
    #[schema(required = true)]
    pub platform_account_number: Option<String>,
    #[schema(required = true)]
    pub account_created_at: Option<String>,
    pub staged_at: String,
    pub updated_at: String,
    #[schema(required = true)]
    pub last_failure: Option<ImportFailure>,
}

/// Why the last attempt to migrate failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ImportFailure {
    pub code: String,
    pub detail: String,
    pub at: String,
}
