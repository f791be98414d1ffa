//! The admin API as the console uses it. Its shapes and its client come from
//! `ferry-admin-api`, the one definition the server and the operator CLI use too; this module
//! adds the [`AdminApi`] trait the screens are written against (the real client implements it
//! in [`crate::http`], tests use a recording fake) and what the console tells an operator about
//! a status before changing it.

pub use ferry_admin_api::{
    AccountDetail, AccountReconciliation, AccountReportPage, AccountReportQuery, AccountReportRow,
    CampaignReport, ClientError, ClosedStatement, ErrorGroup, Event, EventPage, ImportFailure,
    ImportItem, ImportPage, ImportQuery, ImportState, LedgerEntry, Migration, MigrationState, Note,
    PaymentInstruction, Plugin, PluginFailure, PluginRecord, RelayStatus, ReportAccounts,
    ReportData, ReportReconciliation, Statement, StorageState, StorageStatus, Supplier,
    SupplierPlugin, SupplierStatus, Transaction,
};
use std::future::Future;

/// What a status means for the people sending accounts, shown before confirming.
pub fn consequence(status: SupplierStatus) -> &'static str {
    match status {
        SupplierStatus::Ongoing => "Staging and migrating accounts is allowed.",
        SupplierStatus::Paused => "Staging is refused until the supplier is ONGOING again.",
        SupplierStatus::Complete => "The migration is finished: staging is refused for good.",
    }
}

/// The admin calls the console makes. Futures are `Send` so calls can run on a background
/// runtime while the interface keeps drawing.
pub trait AdminApi: Send + Sync + 'static {
    fn suppliers(&self) -> impl Future<Output = Result<Vec<Supplier>, ClientError>> + Send;

    fn set_supplier_status(
        &self,
        code: &str,
        status: SupplierStatus,
    ) -> impl Future<Output = Result<Supplier, ClientError>> + Send;

    fn imports(
        &self,
        code: &str,
        query: &ImportQuery,
    ) -> impl Future<Output = Result<ImportPage, ClientError>> + Send;

    fn account(
        &self,
        platform_account_number: &str,
    ) -> impl Future<Output = Result<AccountDetail, ClientError>> + Send;

    fn start_migration(
        &self,
        code: &str,
    ) -> impl Future<Output = Result<Migration, ClientError>> + Send;

    /// The supplier's migrations, newest first.
    fn migrations(
        &self,
        code: &str,
    ) -> impl Future<Output = Result<Vec<Migration>, ClientError>> + Send;

    fn migration(
        &self,
        code: &str,
        id: &str,
    ) -> impl Future<Output = Result<Migration, ClientError>> + Send;

    fn plugin(&self, code: &str) -> impl Future<Output = Result<Plugin, ClientError>> + Send;

    /// Events after the event with id `after` (from the start when `None`).
    fn events(
        &self,
        after: Option<&str>,
        limit: u32,
    ) -> impl Future<Output = Result<EventPage, ClientError>> + Send;

    /// Whether the host's store takes writes, and why not.
    fn storage(&self) -> impl Future<Output = Result<StorageStatus, ClientError>> + Send;

    /// The supplier's campaign report: its accounts by state, the records kept, the
    /// reconciliation totals and the error groups.
    fn campaign_report(
        &self,
        code: &str,
    ) -> impl Future<Output = Result<CampaignReport, ClientError>> + Send;

    /// One page of the rows of the supplier's report that `query` selects.
    fn report_accounts(
        &self,
        code: &str,
        query: &AccountReportQuery,
    ) -> impl Future<Output = Result<AccountReportPage, ClientError>> + Send;
}
