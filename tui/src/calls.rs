//! Admin calls as values: what the interface asks for ([`ApiCall`]), what came back
//! ([`Completed`]), and [`perform`], which runs one call against any [`AdminApi`].
//!
//! Keeping calls as data lets key handling stay pure (it returns the call to make) and lets the
//! event loop run calls in the background and feed the answers back into the state.

use crate::api::{
    AccountDetail, AdminApi, ClientError, EventPage, ImportPage, ImportQuery, Migration, Plugin,
    StorageStatus, Supplier, SupplierStatus,
};

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
}

/// A call with its outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct Completed {
    pub call: ApiCall,
    pub result: Result<ApiReply, ClientError>,
}

/// How many events one tail request asks for.
pub const EVENTS_PER_REQUEST: u32 = 200;

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
    };
    Completed { call, result }
}
