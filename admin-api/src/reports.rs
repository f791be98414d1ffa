//! `/admin/v1/suppliers/{code}/report`: the campaign report of a supplier, what proves its
//! migration: how many of its accounts are in each state, the records kept on them, whether
//! each migrated account's ledger holds what the old supplier declared, and the error tail;
//! and `/report/accounts`, one row per account.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A supplier's campaign report, read from counters kept with every change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct CampaignReport {
    pub supplier: String,
    pub accounts: ReportAccounts,
    pub data: ReportData,
    pub reconciliation: ReportReconciliation,
    /// The `ERRORED` accounts by the code of their failure, most frequent first.
    pub errors: Vec<ErrorGroup>,
}

/// How many of the supplier's accounts are in each state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ReportAccounts {
    /// Every account ever staged.
    pub staged: u64,
    pub pending: u64,
    pub in_progress: u64,
    pub migrated: u64,
    pub errored: u64,
    /// Accounts not migrated yet whose last dry run failed.
    pub dry_run_errored: u64,
    pub cancelled: u64,
}

/// How many records are kept on the supplier's migrated accounts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ReportData {
    pub notes: u64,
    pub transactions: u64,
    pub statements: u64,
    pub payment_instructions: u64,
}

/// The reconciliations of the supplier's migrated accounts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ReportReconciliation {
    pub reconciled: u64,
    pub mismatched: u64,
    pub not_declared: u64,
    /// What the accounts that declared their money declared, summed (credit positive).
    #[schema(example = "-1234.50")]
    pub declared_total: String,
    /// What their ledgers hold, summed.
    #[schema(example = "-1234.50")]
    pub held_total: String,
}

/// One group of the error tail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ErrorGroup {
    pub code: String,
    pub count: u64,
}

/// One account of a supplier's report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct AccountReportRow {
    pub external_account_number: String,
    /// Null until the account is migrated.
    #[schema(required = true)]
    pub platform_account_number: Option<String>,
    /// The import process's state (`PENDING`, `PROCESSED`, `ERRORED`, ...).
    pub state: String,
    /// `RECONCILED`, `MISMATCH` or `NOT_DECLARED` for a migrated account; null otherwise.
    #[schema(required = true)]
    pub reconciliation: Option<String>,
    /// What was declared; null when nothing was, or the account is not migrated.
    #[schema(required = true)]
    pub declared: Option<String>,
    /// What the ledger holds; null until the account is migrated.
    #[schema(required = true)]
    pub held: Option<String>,
    /// `held - declared`; null when nothing was declared.
    #[schema(required = true)]
    pub difference: Option<String>,
    /// The code of an `ERRORED` account's failure.
    #[schema(required = true)]
    pub error_code: Option<String>,
    #[schema(required = true)]
    pub error_detail: Option<String>,
}

impl AccountReportRow {
    /// The columns of the report's CSV, in order: the fields' names.
    pub const CSV_HEADER: [&'static str; 9] = [
        "external_account_number",
        "platform_account_number",
        "state",
        "reconciliation",
        "declared",
        "held",
        "difference",
        "error_code",
        "error_detail",
    ];

    /// The row's values in [`Self::CSV_HEADER`]'s order (empty where null).
    pub fn csv_values(&self) -> [&str; 9] {
        fn text(value: &Option<String>) -> &str {
            value.as_deref().unwrap_or("")
        }
        [
            &self.external_account_number,
            text(&self.platform_account_number),
            &self.state,
            text(&self.reconciliation),
            text(&self.declared),
            text(&self.held),
            text(&self.difference),
            text(&self.error_code),
            text(&self.error_detail),
        ]
    }
}

/// One page of a supplier's report rows, ordered by external account number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct AccountReportPage {
    pub accounts: Vec<AccountReportRow>,
    /// Pass as `after` for the next page; null on the last page.
    #[schema(required = true)]
    pub next_after: Option<String>,
}

/// Which rows of a supplier's report to read (the query of `/report/accounts`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccountReportQuery {
    /// Only accounts in this state (`PENDING`, `PROCESSED`, ...).
    pub state: Option<String>,
    /// Only migrated accounts of this reconciliation (`RECONCILED`, `MISMATCH`, `NOT_DECLARED`).
    pub reconciliation: Option<String>,
    /// Only `ERRORED` accounts whose failure has this code.
    pub error_code: Option<String>,
    /// The last external account number of the previous page.
    pub after: Option<String>,
    /// Page size; 0 for the server's default.
    pub limit: u32,
}

impl AccountReportQuery {
    /// The query string's pairs (the format is the caller's).
    pub fn pairs(&self) -> Vec<(&'static str, String)> {
        let mut pairs = Vec::new();
        for (name, value) in [
            ("state", &self.state),
            ("reconciliation", &self.reconciliation),
            ("error_code", &self.error_code),
            ("after", &self.after),
        ] {
            if let Some(value) = value {
                pairs.push((name, value.clone()));
            }
        }
        if self.limit > 0 {
            pairs.push(("limit", self.limit.to_string()));
        }
        pairs
    }
}

/// An account's reconciliation, as the account view shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct AccountReconciliation {
    /// `RECONCILED`, `MISMATCH` or `NOT_DECLARED`.
    pub state: String,
    #[schema(required = true)]
    pub declared: Option<String>,
    pub held: String,
    #[schema(required = true)]
    pub difference: Option<String>,
    /// The first figure that diverges, for a mismatch: `last_statement_balance` (or
    /// `ledgers.N.last_statement_balance`) or `transfer_balance`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_diverging: Option<String>,
}
