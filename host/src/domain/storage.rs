//! The storage port: what the domain needs from durable storage, whatever keeps it.
//!
//! The domain asks for records and atomic changes; it never sees the backend (`store`
//! implements this port on sled). Every change that must be atomic (an import process, the
//! platform account it creates and the per-state counts) is one call here, applied in one
//! transaction with the events that describe it (the outbox: `events::outbox` is the relay's
//! side of it). Nothing is durable until [`Store::flush`] resolves: callers answer 2xx only
//! after it. Errors are the backend-neutral [`StoreError`].

use super::api_key::ApiKeyRecord;
use super::error::DomainError;
use super::events::Event;
use super::import_process::{ImportListing, ImportProcess, ImportState, PlatformAccount};
use super::operations_team::OperationsTeam;
use super::plugin::PluginRecord;
use super::supplier::Supplier;
use chrono::{DateTime, Utc};
use futures_util::future::BoxFuture;
use serde::Serialize;
use std::collections::BTreeMap;

/// Why the store could not do what was asked, whatever the backend.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The backend failed (an I/O error, a full disk, a lost connection): nothing of the
    /// change was made.
    #[error("storage failure: {0}")]
    Backend(#[source] BackendError),
    #[error("stored record {key} could not be read: {source}")]
    Corrupt {
        key: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("outbox record {seq} could not be read: {source}")]
    Outbox {
        seq: u64,
        #[source]
        source: BackendError,
    },
    #[error("could not find a free platform account number")]
    NumbersExhausted,
    /// A concurrent change met this one inside an atomic change: the store runs the change
    /// again (the closures it takes may run more than once); never seen outside the store.
    #[error("the change met a concurrent one and is tried again")]
    Conflict,
}

/// A backend's own error, kept as the source of [`StoreError::Backend`].
pub type BackendError = Box<dyn std::error::Error + Send + Sync>;

/// The kinds of per-account records. Keys are scoped to one platform account.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AccountTable {
    /// Notes, keyed by a zero-padded sequence number (so they list in order).
    Notes,
    /// Note bodies already on the account, for the dedupe rule.
    NoteIndex,
    /// Imported transactions, keyed by the supplier's transaction id.
    Transactions,
    /// Ledger entries, keyed by a zero-padded entry id.
    LedgerEntries,
    /// Historical statements, keyed by statement id.
    Statements,
    /// Payment instructions, keyed by vendor and reference.
    PaymentInstructions,
    /// One summary record per account (balance, latest statement), key `""`.
    Summary,
    /// The registration state of each meter point, keyed by MPAN / MPRN.
    MeterPoints,
}

impl AccountTable {
    pub const ALL: [AccountTable; 8] = [
        Self::Notes,
        Self::NoteIndex,
        Self::Transactions,
        Self::LedgerEntries,
        Self::Statements,
        Self::PaymentInstructions,
        Self::Summary,
        Self::MeterPoints,
    ];
}

/// Reads and writes of one account's records inside one atomic change.
pub trait AccountTx {
    fn get(&self, table: AccountTable, key: &str) -> Result<Option<serde_json::Value>, StoreError>;
    fn put(
        &self,
        table: AccountTable,
        key: &str,
        value: &serde_json::Value,
    ) -> Result<(), StoreError>;
    /// A number never handed out before (ledger entry ids, note ids).
    fn next_id(&self) -> Result<u64, StoreError>;
    /// Writes `event` to the outbox with this change.
    fn publish(&self, event: &Event) -> Result<(), StoreError>;
}

/// Makes an atomic change to one account's records; may run more than once.
pub type ChangeAccount<'a> = dyn FnMut(&dyn AccountTx) -> Result<(), DomainError> + 'a;

/// The result of an atomic change to one import process.
#[derive(Debug, Clone)]
pub struct ImportChange {
    pub process: ImportProcess,
    /// A platform account created by this change.
    pub account: Option<PlatformAccount>,
    /// Events describing the change, written to the outbox in the same transaction.
    pub events: Vec<Event>,
}

impl ImportChange {
    /// A change of the process alone.
    pub fn process(process: ImportProcess) -> Self {
        Self {
            process,
            account: None,
            events: Vec::new(),
        }
    }
}

/// How many import processes of a supplier are in each state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct ImportCounts(pub BTreeMap<ImportState, u64>);

impl ImportCounts {
    pub fn get(&self, state: ImportState) -> u64 {
        self.0.get(&state).copied().unwrap_or(0)
    }
}

pub type ImportIter = Box<dyn Iterator<Item = Result<ImportProcess, StoreError>> + Send>;
pub type ListingIter = Box<dyn Iterator<Item = Result<ImportListing, StoreError>> + Send>;

/// Decides a change to an import process from its current version (`None`: not staged yet).
pub type DecideImport<'a> =
    dyn FnMut(Option<&ImportProcess>) -> Result<ImportChange, DomainError> + 'a;

pub trait Store: Send + Sync + 'static {
    /// Inserts a new supplier; `false` when the code is taken.
    fn create_supplier(&self, supplier: &Supplier) -> Result<bool, StoreError>;
    fn supplier(&self, code: &str) -> Result<Option<Supplier>, StoreError>;
    fn suppliers(&self) -> Result<Vec<Supplier>, StoreError>;
    /// Applies `change` to the supplier atomically; `None` when it does not exist.
    fn update_supplier(
        &self,
        code: &str,
        change: &mut dyn FnMut(&mut Supplier),
    ) -> Result<Option<Supplier>, StoreError>;
    fn import_counts(&self, code: &str) -> Result<ImportCounts, StoreError>;

    /// Inserts a new operations team; `false` when the name is taken.
    fn create_team(&self, team: &OperationsTeam) -> Result<bool, StoreError>;
    fn team(&self, name: &str) -> Result<Option<OperationsTeam>, StoreError>;
    /// Every team, by name.
    fn teams(&self) -> Result<Vec<OperationsTeam>, StoreError>;
    /// Removes the team; `None` when it did not exist.
    fn delete_team(&self, name: &str) -> Result<Option<OperationsTeam>, StoreError>;

    fn insert_api_key(&self, key: &ApiKeyRecord) -> Result<(), StoreError>;
    fn api_key(&self, id: &str) -> Result<Option<ApiKeyRecord>, StoreError>;
    fn api_key_by_digest(&self, digest: &str) -> Result<Option<ApiKeyRecord>, StoreError>;
    /// Marks the key revoked; `None` when it never existed.
    fn revoke_api_key(
        &self,
        id: &str,
        at: DateTime<Utc>,
    ) -> Result<Option<ApiKeyRecord>, StoreError>;

    fn import_process(
        &self,
        supplier: &str,
        external: &str,
    ) -> Result<Option<ImportProcess>, StoreError>;
    /// Reads the process, lets `decide` make the change and writes it (with any new account and
    /// the state counts) in one transaction. `decide` may run more than once.
    fn change_import(
        &self,
        supplier: &str,
        external: &str,
        decide: &mut DecideImport<'_>,
    ) -> Result<ImportChange, DomainError>;
    /// The supplier's processes in external-account-number order, starting after `after`.
    fn import_processes(&self, supplier: &str, after: Option<&str>) -> ImportIter;
    /// What the lists show of the supplier's processes, in external-account-number order.
    fn import_listings(&self, supplier: &str) -> ListingIter;
    fn account(&self, number: &str) -> Result<Option<PlatformAccount>, StoreError>;

    /// Applies `change` to the records of account `number` in one transaction.
    fn change_account_records(
        &self,
        number: &str,
        change: &mut ChangeAccount<'_>,
    ) -> Result<(), DomainError>;
    /// Every record of one table of an account, in key order.
    fn account_records(
        &self,
        number: &str,
        table: AccountTable,
    ) -> Result<Vec<serde_json::Value>, StoreError>;

    /// Installs (or replaces) a supplier's plugin: its record and its component bytes.
    fn put_plugin(&self, record: &PluginRecord, component: &[u8]) -> Result<(), StoreError>;
    fn plugin(&self, supplier: &str) -> Result<Option<PluginRecord>, StoreError>;
    fn plugins(&self) -> Result<Vec<PluginRecord>, StoreError>;
    fn plugin_component(&self, sha256: &str) -> Result<Option<Vec<u8>>, StoreError>;
    /// Removes the supplier's plugin; `None` when it had none.
    fn remove_plugin(&self, supplier: &str) -> Result<Option<PluginRecord>, StoreError>;

    /// Writes events to the outbox on their own (operator-published events, dry runs).
    fn publish_events(&self, events: &[Event]) -> Result<(), StoreError>;
    /// The event log after `after` (a `seq`), oldest first.
    fn events_after(&self, after: Option<u64>, limit: usize) -> Result<Vec<Event>, StoreError>;
    /// The `seq` of the event with this id.
    fn event_seq(&self, id: &str) -> Result<Option<u64>, StoreError>;
    /// How many events wait in the outbox.
    fn outbox_len(&self) -> Result<usize, StoreError>;

    /// A named secret, created by `make` on first use.
    fn secret(&self, name: &str, make: &mut dyn FnMut() -> Vec<u8>) -> Result<Vec<u8>, StoreError>;

    /// Resolves once everything written so far is on disk.
    fn flush(&self) -> BoxFuture<'static, Result<(), StoreError>>;
}
