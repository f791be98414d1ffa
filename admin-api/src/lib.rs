//! Ferry's admin API (`/admin/v1/...`) as one set of shapes and one typed client.
//!
//! The server serializes these shapes as its answers (and documents them in its OpenAPI
//! document); the operator CLI (`ferry supplier ...`) and the console (`ferry-console`) read
//! them through [`AdminClient`]. A field added to the admin API is added here, once.
//!
//! One module per resource, as the server's routes are laid out: [`suppliers`],
//! [`api_keys`], [`operations_teams`], [`imports`], [`accounts`], [`migrations`],
//! [`plugins`], [`reports`], [`events`], [`storage`]; the
//! error body every route answers with is in [`error`], the client in [`client`]. Times are
//! RFC 3339 strings, dates `YYYY-MM-DD`, amounts decimal strings with two places, exactly as
//! the server writes them: this API is for people and their tools, which show them as they
//! are.

pub mod accounts;
pub mod api_keys;
pub mod client;
pub mod error;
pub mod events;
pub mod imports;
pub mod migrations;
pub mod operations_teams;
pub mod plugins;
pub mod reports;
pub mod storage;
pub mod suppliers;

pub use accounts::{
    AccountDetail, ClosedStatement, LedgerEntry, MeterPoint, MeterPointChange, Note,
    PaymentInstruction, Statement, Transaction,
};
pub use api_keys::{ApiKey, IssuedApiKey, NewApiKey};
pub use client::{AdminClient, ClientError};
pub use error::{ErrorBody, FieldErrorBody};
pub use events::{Event, EventPage, PublishEvent, RelayStatus};
pub use imports::{ImportFailure, ImportItem, ImportPage, ImportQuery, ImportState};
pub use migrations::{Migration, MigrationState};
pub use operations_teams::{NewOperationsTeam, OperationsTeam};
pub use plugins::{Plugin, PluginFailure, PluginRecord};
pub use reports::{
    AccountReconciliation, AccountReportPage, AccountReportQuery, AccountReportRow, CampaignReport,
    ErrorGroup, ReportAccounts, ReportData, ReportReconciliation,
};
pub use storage::{StorageState, StorageStatus};
pub use suppliers::{NewSupplier, Supplier, SupplierChange, SupplierPlugin, SupplierStatus};
