//! Admin calls as values: what the interface asks for ([`ApiCall`]), what came back
//! ([`Completed`]), and [`perform`], which runs one call against any [`AdminApi`].
//!
//! Keeping calls as data lets key handling stay pure (it returns the call to make) and lets the
//! event loop run calls in the background and feed the answers back into the state.

use crate::api::{
    AccountDetail, AccountReportPage, AccountReportQuery, AdminApi, CampaignReport, ClientError,
    EventPage, ImportPage, ImportQuery, Migration, Plugin, StorageStatus, Supplier, SupplierStatus,
};

/// Which accounts of a supplier's campaign report a list shows.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AccountGroup {
    /// The `ERRORED` accounts whose failure has this code.
    Error(String),
    /// The migrated accounts whose ledger does not hold what was declared (`MISMATCH`).
    Mismatched,
}

impl AccountGroup {
    /// The report's query for one page of the group, after the account `after`.
    pub fn query(&self, after: Option<String>) -> AccountReportQuery {
        let (error_code, reconciliation) = match self {
            Self::Error(code) => (Some(code.clone()), None),
            Self::Mismatched => (None, Some("MISMATCH".to_owned())),
        };
        AccountReportQuery {
            state: None,
            reconciliation,
            error_code,
            after,
            limit: REPORT_ACCOUNTS_PER_PAGE,
        }
    }
}

/// One admin call the console wants made.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ApiCall {
    Suppliers,
    SetStatus {
        code: String,
        status: SupplierStatus,
    },
    StartMigration {
        code: String,
    },
    /// The supplier's newest migration, if any.
    LatestMigration {
        code: String,
    },
    Migration {
        code: String,
        id: String,
    },
    Imports {
        code: String,
        query: ImportQuery,
    },
    Account {
        number: String,
    },
    Plugin {
        code: String,
    },
    Events {
        after: Option<String>,
    },
    Storage,
    /// The supplier's campaign report.
    Report {
        code: String,
    },
    /// One page of a group of the report's accounts, after the account `after`.
    ReportAccounts {
        code: String,
        group: AccountGroup,
        after: Option<String>,
    },
}

/// A successful answer.
#[derive(Debug, Clone, PartialEq)]
pub enum ApiReply {
    Suppliers(Vec<Supplier>),
    Supplier(Supplier),
    Migration(Option<Migration>),
    Imports(ImportPage),
    Account(Box<AccountDetail>),
    Plugin(Plugin),
    Events(EventPage),
    Storage(StorageStatus),
    Report(Box<CampaignReport>),
    ReportAccounts(AccountReportPage),
}

/// A call with its outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct Completed {
    pub call: ApiCall,
    pub result: Result<ApiReply, ClientError>,
}

/// How many events one tail request asks for.
pub const EVENTS_PER_REQUEST: u32 = 200;
/// Rows asked for per page of a report's accounts.
pub const REPORT_ACCOUNTS_PER_PAGE: u32 = 50;

/// Makes the call and pairs it with its outcome.
pub async fn perform<A: AdminApi>(api: &A, call: ApiCall) -> Completed {
    let result = match &call {
        ApiCall::Suppliers => api.suppliers().await.map(ApiReply::Suppliers),
        ApiCall::SetStatus { code, status } => api
            .set_supplier_status(code, *status)
            .await
            .map(ApiReply::Supplier),
        ApiCall::StartMigration { code } => api
            .start_migration(code)
            .await
            .map(|migration| ApiReply::Migration(Some(migration))),
        ApiCall::LatestMigration { code } => api
            .migrations(code)
            .await
            .map(|migrations| ApiReply::Migration(migrations.into_iter().next())),
        ApiCall::Migration { code, id } => api
            .migration(code, id)
            .await
            .map(|migration| ApiReply::Migration(Some(migration))),
        ApiCall::Imports { code, query } => api.imports(code, query).await.map(ApiReply::Imports),
        ApiCall::Account { number } => api
            .account(number)
            .await
            .map(|account| ApiReply::Account(Box::new(account))),
        ApiCall::Plugin { code } => api.plugin(code).await.map(ApiReply::Plugin),
        ApiCall::Events { after } => api
            .events(after.as_deref(), EVENTS_PER_REQUEST)
            .await
            .map(ApiReply::Events),
        ApiCall::Storage => api.storage().await.map(ApiReply::Storage),
        ApiCall::Report { code } => api
            .campaign_report(code)
            .await
            .map(|report| ApiReply::Report(Box::new(report))),
        ApiCall::ReportAccounts { code, group, after } => api
            .report_accounts(code, &group.query(after.clone()))
            .await
            .map(ApiReply::ReportAccounts),
    };
    Completed { call, result }
}
