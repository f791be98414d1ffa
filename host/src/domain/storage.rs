//! The storage port: what the domain needs from durable storage, whatever keeps it.
//!
//! The domain asks for records and atomic changes; it never sees the backend (`store`
//! implements this port on sled). Every change that must be atomic (an import process, the
//! platform account it creates and the per-state counts) is one call here, applied in one
//! transaction with the events that describe it (the outbox: `events::outbox` is the relay's
//! side of it). An account's unit of work ([`AccountUnit::commit`]) and an import change are
//! durable when they resolve; the other writes (suppliers, keys, teams, plugins, published
//! events) are durable once [`Store::flush`] resolves, and callers answer 2xx only after it.
//! Errors are the backend-neutral [`StoreError`].

use super::api_key::ApiKeyRecord;
use super::error::DomainError;
use super::events::Event;
use super::import_process::{ImportListing, ImportProcess, ImportState, PlatformAccount};
use super::ledger::{AccountSummary, LedgerEntry, Transaction};
use super::meter_points::MeterPoint;
use super::migrations::MigrationView;
use super::notes::Note;
use super::operations_team::OperationsTeam;
use super::payment_instruction::PaymentInstruction;
use super::plugin::PluginRecord;
use super::schedules::Due;
use super::statements::Statement;
use super::supplier::Supplier;
use chrono::{DateTime, Utc};
use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
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
    /// A record with this key is there already (an insert that must be the first).
    #[error("{what} {key} is there already")]
    Duplicate { what: &'static str, key: String },
    /// A concurrent change met this one and nothing of it was kept: run it again
    /// ([`retrying`]). A backend whose changes cannot meet (sled's, under its per-account
    /// locks) retries its own internal conflicts and never answers this.
    #[error("the change met a concurrent one")]
    Conflict,
    /// Writes are refused until an operator acts: nothing of the change was made, reads go on.
    #[error("{0}")]
    Unwritable(Unwritable),
    /// A server database could not be reached (stopped, restarting, the network to it down):
    /// neither reads nor writes are answered until it is back, and then they are, without an
    /// operator or a restart. Nothing acknowledged was lost.
    #[error(
        "The database could not be reached ({0}): retry the request in a few seconds. Nothing \
         acknowledged was lost."
    )]
    Unavailable(String),
}

/// How long work that runs by itself (a bulk or scheduled migration) waits before it tries
/// again while the storage is away or refuses writes ([`StoreError::is_for_now`]): it goes on
/// where it was once the storage takes it again, rather than failing or stopping.
pub const WHILE_AWAY: std::time::Duration = std::time::Duration::from_secs(1);

impl StoreError {
    /// Whether the storage as a whole is away for now (HTTP 503 `storage_unavailable`), not
    /// failing this request: a database that cannot be reached, or a store that refuses
    /// writes for a reason other than want of space.
    pub fn is_unavailable(&self) -> bool {
        match self {
            Self::Unavailable(_) => true,
            Self::Unwritable(reason) => !reason.is_want_of_space(),
            _ => false,
        }
    }

    /// Whether the storage as a whole cannot take work for now, not this work: it is away
    /// ([`Self::is_unavailable`]), or it refuses writes until space is back or an operator
    /// acts ([`Self::Unwritable`]). The same work, unchanged, may be taken later.
    pub fn is_for_now(&self) -> bool {
        matches!(self, Self::Unavailable(_) | Self::Unwritable(_))
    }
}

/// Why the store refuses writes, worded for the operator who can end it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unwritable {
    /// The data directory's free space is below the watermark: refused before the disk is
    /// full, and taken again once space is back above the mark.
    #[error(
        "The server's data directory has {} free, below its watermark of {}: writes are refused \
         until an operator frees space there or grows the volume, and are taken again by \
         themselves once it is back above the mark. Reads still work.",
        mebibytes(*free_bytes),
        mebibytes(*watermark_bytes)
    )]
    BelowWatermark {
        free_bytes: u64,
        watermark_bytes: u64,
    },
    /// A write found the disk full.
    #[error(
        "The server's disk is full: writes are refused until an operator frees space on the \
         data directory's volume; the server then restarts to take writes again. Nothing \
         acknowledged was lost."
    )]
    DiskFull,
    /// A write failed for another storage reason (an I/O error, a lost database).
    #[error(
        "The server's storage failed to write ({0}): writes are refused until an operator \
         repairs it; the server then restarts to take writes again. Nothing acknowledged \
         was lost."
    )]
    Failed(String),
}

impl Unwritable {
    /// Whether want of space is the reason (HTTP 507), not a failure of the storage (503).
    pub fn is_want_of_space(&self) -> bool {
        matches!(self, Self::BelowWatermark { .. } | Self::DiskFull)
    }
}

/// `bytes` in MiB with one decimal.
fn mebibytes(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// A backend's own error, kept as the source of [`StoreError::Backend`].
pub type BackendError = Box<dyn std::error::Error + Send + Sync>;

/// One unit of work on one imported account's records: what it reads includes what it has
/// written; nothing is kept until [`AccountUnit::commit`], which returns once the whole change
/// is durable; a unit dropped without it keeps nothing. While a unit is open no other unit of
/// the same account runs (its summary is locked), so what it read stays true until it commits.
pub trait AccountUnit: Send {
    /// The account's ledger summary (its default when nothing was posted).
    fn summary(&mut self) -> BoxFuture<'_, Result<AccountSummary, StoreError>>;
    fn set_summary(&mut self, summary: &AccountSummary) -> Result<(), StoreError>;
    /// The transaction with this id, as kept.
    fn transaction<'a>(
        &'a mut self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Transaction>, StoreError>>;
    /// Adds a transaction with its ledger entry; [`StoreError::Duplicate`] when the account
    /// has its id.
    fn add_transaction<'a>(
        &'a mut self,
        transaction: &'a Transaction,
        entry: &'a LedgerEntry,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    /// When the notes with this dedupe key ([`super::notes::note_key`]) were created.
    fn note_dates<'a>(
        &'a mut self,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Vec<DateTime<Utc>>, StoreError>>;
    /// Adds a note, and sets the creation dates of its dedupe key to `dates` (which include
    /// its own). `key` is the note's [`Note::key`], so a store may derive its index from its
    /// notes (sled keeps it in memory, read from them).
    fn add_note(
        &mut self,
        note: &Note,
        key: &str,
        dates: &[DateTime<Utc>],
    ) -> Result<(), StoreError>;
    /// Whether the account has a historical statement with this id.
    fn has_statement<'a>(&'a mut self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>>;
    fn add_statement<'a>(
        &'a mut self,
        statement: &'a Statement,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    /// The payment instruction of `vendor` with this reference.
    fn payment_instruction<'a>(
        &'a mut self,
        vendor: &'a str,
        reference: &'a str,
    ) -> BoxFuture<'a, Result<Option<PaymentInstruction>, StoreError>>;
    fn add_payment_instruction<'a>(
        &'a mut self,
        instruction: &'a PaymentInstruction,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    /// The registration kept for this meter point (none: never moved on).
    fn meter_point<'a>(
        &'a mut self,
        mpxn: &'a str,
    ) -> BoxFuture<'a, Result<Option<MeterPoint>, StoreError>>;
    fn set_meter_point(&mut self, point: &MeterPoint) -> Result<(), StoreError>;
    /// A number never handed out before (ledger entry ids, note ids); within an account, the
    /// ids of a later unit are greater.
    fn next_id(&mut self) -> BoxFuture<'_, Result<u64, StoreError>>;
    /// Puts `event` in the outbox with this change.
    fn enqueue(&mut self, event: Event) -> Result<(), StoreError>;
    /// Keeps the whole change, durably, with its events; the unit ends.
    fn commit(self: Box<Self>) -> BoxFuture<'static, Result<(), StoreError>>;
}

/// Everything kept on an imported account, each kind in its order (notes and ledger entries
/// as added, transactions by ledger entry, statements by id, payment instructions by vendor
/// and reference, meter points by number).
#[derive(Debug, Clone, Default)]
pub struct AccountRecords {
    pub summary: AccountSummary,
    pub notes: Vec<Note>,
    pub transactions: Vec<Transaction>,
    pub ledger_entries: Vec<LedgerEntry>,
    pub statements: Vec<Statement>,
    pub payment_instructions: Vec<PaymentInstruction>,
    pub meter_points: Vec<MeterPoint>,
}

/// Runs `attempt` until it does not meet a concurrent change ([`StoreError::Conflict`]), a few
/// times at most: the use cases' one answer to conflicts, whatever the backend.
pub async fn retrying<T, F, Fut>(mut attempt: F) -> Result<T, DomainError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, DomainError>>,
{
    const ATTEMPTS: usize = 5;
    let mut tries = 1;
    loop {
        match attempt().await {
            Err(DomainError::Store(StoreError::Conflict)) if tries < ATTEMPTS => tries += 1,
            other => return other,
        }
    }
}

/// Runs `attempt` until the storage takes it ([`StoreError::is_for_now`]), waiting
/// [`WHILE_AWAY`] between tries: for work that runs by itself and must not be given up for an
/// outage or a disk short of space. Any other answer is returned.
pub async fn retrying_while_away<T, F, Fut>(mut attempt: F) -> Result<T, DomainError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, DomainError>>,
{
    loop {
        match attempt().await {
            Err(error) if error.is_store_for_now() => tokio::time::sleep(WHILE_AWAY).await,
            other => return other,
        }
    }
}

/// The result of an atomic change to one import process.
#[derive(Debug, Clone)]
pub struct ImportChange {
    pub process: ImportProcess,
    /// A platform account created by this change.
    pub account: Option<PlatformAccount>,
    /// The records the new account opens with, kept in the same transaction as the account.
    pub opening: Option<Box<AccountOpening>>,
    /// Events describing the change, written to the outbox in the same transaction.
    pub events: Vec<Event>,
}

impl ImportChange {
    /// A change of the process alone.
    pub fn process(process: ImportProcess) -> Self {
        Self::with_events(process, Vec::new())
    }

    /// A change of the process alone, described by `events`.
    pub fn with_events(process: ImportProcess, events: Vec<Event>) -> Self {
        Self {
            process,
            account: None,
            opening: None,
            events,
        }
    }
}

/// The records a migration opens a new account with: what its document carries (the ledger,
/// statements, notes, payment instructions), kept by the change that creates the account
/// ([`ImportChange::opening`]), as its units of work would keep them, with no unit of the
/// account before it. Ids come from [`Store::new_ids`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AccountOpening {
    pub summary: AccountSummary,
    /// The transactions posted, in order, each with its `ledger_entry_id`.
    pub transactions: Vec<Transaction>,
    /// Their ledger entries, one per transaction, in the same order.
    pub ledger_entries: Vec<LedgerEntry>,
    pub notes: Vec<Note>,
    /// The creation dates of the notes of each dedupe key ([`Note::key`]).
    pub note_keys: BTreeMap<String, Vec<DateTime<Utc>>>,
    pub statements: Vec<Statement>,
    pub payment_instructions: Vec<PaymentInstruction>,
}

/// How many import processes of a supplier are in each state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct ImportCounts(pub BTreeMap<ImportState, u64>);

impl ImportCounts {
    pub fn get(&self, state: ImportState) -> u64 {
        self.0.get(&state).copied().unwrap_or(0)
    }
}

/// What a store's read or write resolves to.
pub type StoreFuture<'a, T> = BoxFuture<'a, Result<T, StoreError>>;
/// Streams of import processes own what they read from (a response streams them out).
pub type ImportStream = BoxStream<'static, Result<ImportProcess, StoreError>>;
pub type ListingStream = BoxStream<'static, Result<ImportListing, StoreError>>;

/// Decides a change to an import process from its current version (`None`: not staged yet).
pub type DecideImport<'a> =
    dyn FnMut(Option<&ImportProcess>) -> Result<ImportChange, DomainError> + Send + 'a;

pub trait Store: Send + Sync + 'static {
    /// Inserts a new supplier; `false` when the code is taken.
    fn create_supplier<'a>(&'a self, supplier: &'a Supplier) -> StoreFuture<'a, bool>;
    fn supplier<'a>(&'a self, code: &'a str) -> StoreFuture<'a, Option<Supplier>>;
    fn suppliers(&self) -> StoreFuture<'_, Vec<Supplier>>;
    /// Applies `change` to the supplier atomically; `None` when it does not exist.
    fn update_supplier<'a>(
        &'a self,
        code: &'a str,
        change: &'a mut (dyn FnMut(&mut Supplier) + Send),
    ) -> StoreFuture<'a, Option<Supplier>>;
    fn import_counts<'a>(&'a self, code: &'a str) -> StoreFuture<'a, ImportCounts>;

    /// Inserts a new operations team; `false` when the name is taken.
    fn create_team<'a>(&'a self, team: &'a OperationsTeam) -> StoreFuture<'a, bool>;
    fn team<'a>(&'a self, name: &'a str) -> StoreFuture<'a, Option<OperationsTeam>>;
    /// Every team, by name.
    fn teams(&self) -> StoreFuture<'_, Vec<OperationsTeam>>;
    /// Removes the team; `None` when it did not exist.
    fn delete_team<'a>(&'a self, name: &'a str) -> StoreFuture<'a, Option<OperationsTeam>>;

    fn insert_api_key<'a>(&'a self, key: &'a ApiKeyRecord) -> StoreFuture<'a, ()>;
    fn api_key<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<ApiKeyRecord>>;
    fn api_key_by_digest<'a>(&'a self, digest: &'a str) -> StoreFuture<'a, Option<ApiKeyRecord>>;
    /// Marks the key revoked; `None` when it never existed.
    fn revoke_api_key<'a>(
        &'a self,
        id: &'a str,
        at: DateTime<Utc>,
    ) -> StoreFuture<'a, Option<ApiKeyRecord>>;

    fn import_process<'a>(
        &'a self,
        supplier: &'a str,
        external: &'a str,
    ) -> StoreFuture<'a, Option<ImportProcess>>;
    /// Reads the process, lets `decide` make the change and keeps it, with any new account,
    /// the state counts and its events, in one atomic change; resolves once it is durable.
    /// `decide` may run more than once.
    fn change_import<'a>(
        &'a self,
        supplier: &'a str,
        external: &'a str,
        decide: &'a mut DecideImport<'a>,
    ) -> BoxFuture<'a, Result<ImportChange, DomainError>>;
    /// [`Store::change_import`] for several processes of one supplier (a bulk migration's
    /// claims): each its own atomic change, all durable when it resolves; each one's outcome,
    /// in order.
    fn change_imports<'a>(
        &'a self,
        supplier: &'a str,
        externals: &'a [String],
        decide: &'a mut DecideImport<'a>,
    ) -> BoxFuture<'a, Result<Vec<Result<ImportChange, DomainError>>, StoreError>>;
    /// The supplier's processes in external-account-number order, starting after `after`.
    fn import_processes(&self, supplier: &str, after: Option<&str>) -> ImportStream;
    /// What the lists show of the supplier's processes, in external-account-number order.
    fn import_listings(&self, supplier: &str) -> ListingStream;
    /// What the lists show of one process (its state and account), without reading its
    /// account document: what a request adding data to the account needs of it.
    fn import_listing<'a>(
        &'a self,
        supplier: &'a str,
        external: &'a str,
    ) -> StoreFuture<'a, Option<ImportListing>>;
    /// The supplier `code` and, when it exists, [`Store::import_listing`] of its process
    /// `external`: what a request adding data to an account reads before its unit of work. A
    /// backend whose reads are round trips answers both in one.
    fn supplier_and_listing<'a>(
        &'a self,
        code: &'a str,
        external: &'a str,
    ) -> StoreFuture<'a, Option<(Supplier, Option<ImportListing>)>> {
        Box::pin(async move {
            let Some(supplier) = self.supplier(code).await? else {
                return Ok(None);
            };
            let listing = self.import_listing(code, external).await?;
            Ok(Some((supplier, listing)))
        })
    }
    /// Every process whose scheduled migration has not run yet, with when it is due. This
    /// reads every process of every supplier; a backend with an index of schedules answers
    /// from it instead.
    fn scheduled_migrations(&self) -> StoreFuture<'_, Vec<Due>> {
        Box::pin(async move {
            let mut due = Vec::new();
            for supplier in self.suppliers().await? {
                let mut processes = self.import_processes(&supplier.code, None);
                while let Some(process) = processes.next().await {
                    let process = process?;
                    if let Some(schedule) = &process.schedule
                        && process.awaits_migration()
                    {
                        due.push(Due {
                            at: schedule.window_start,
                            supplier: process.supplier_code,
                            external: process.external_account_number,
                        });
                    }
                }
            }
            Ok(due)
        })
    }
    fn account<'a>(&'a self, number: &'a str) -> StoreFuture<'a, Option<PlatformAccount>>;
    /// `count` numbers never handed out before ([`AccountUnit::next_id`]'s), in increasing
    /// order: the ids of an account's opening records, made before the change that keeps them.
    fn new_ids(&self, count: usize) -> StoreFuture<'_, Vec<u64>>;

    /// Opens a unit of work on account `number`'s records, waiting for the one open on it.
    fn account_unit<'a>(
        &'a self,
        number: &'a str,
    ) -> BoxFuture<'a, Result<Box<dyn AccountUnit>, StoreError>>;
    /// Everything kept on account `number`.
    fn account_records<'a>(
        &'a self,
        number: &'a str,
    ) -> BoxFuture<'a, Result<AccountRecords, StoreError>>;
    /// The registrations kept for account `number`'s meter points.
    fn meter_points<'a>(
        &'a self,
        number: &'a str,
    ) -> BoxFuture<'a, Result<Vec<MeterPoint>, StoreError>>;

    /// Installs (or replaces) a supplier's plugin: its record and its component bytes. A
    /// component no plugin runs any more goes with the change.
    fn put_plugin<'a>(
        &'a self,
        record: &'a PluginRecord,
        component: &'a [u8],
    ) -> StoreFuture<'a, ()>;
    /// Gives the supplier's plugin the settings `config`, if it still runs the component
    /// `sha256`: the plugin as changed; `None` when the supplier has no plugin;
    /// [`StoreError::Conflict`] when its plugin was replaced meanwhile.
    fn configure_plugin<'a>(
        &'a self,
        supplier: &'a str,
        sha256: &'a str,
        config: &'a BTreeMap<String, String>,
    ) -> StoreFuture<'a, Option<PluginRecord>>;
    fn plugin<'a>(&'a self, supplier: &'a str) -> StoreFuture<'a, Option<PluginRecord>>;
    fn plugins(&self) -> StoreFuture<'_, Vec<PluginRecord>>;
    fn plugin_component<'a>(&'a self, sha256: &'a str) -> StoreFuture<'a, Option<Vec<u8>>>;
    /// Removes the supplier's plugin; `None` when it had none.
    fn remove_plugin<'a>(&'a self, supplier: &'a str) -> StoreFuture<'a, Option<PluginRecord>>;

    /// Writes events to the outbox on their own (operator-published events, dry runs).
    fn publish_events<'a>(&'a self, events: &'a [Event]) -> StoreFuture<'a, ()>;
    /// The event log after `after` (a `seq`), oldest first.
    fn events_after(&self, after: Option<u64>, limit: usize) -> StoreFuture<'_, Vec<Event>>;
    /// The `seq` of the event with this id.
    fn event_seq<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<u64>>;
    /// How many events wait in the outbox.
    fn outbox_len(&self) -> StoreFuture<'_, usize>;
    /// Takes the oldest events out of the log, in log order, about `limit` at a time, while
    /// each was published and made before `made_before`: an event the relay has not published
    /// is never taken, nor any after it. How many were taken (a backend that keeps events in
    /// groups takes whole groups, so it may take a few more than `limit`, or none where a
    /// group is not wholly due). What is left is the log after them, as it was.
    fn prune_events(&self, made_before: DateTime<Utc>, limit: usize) -> StoreFuture<'_, usize>;

    /// A named secret, created by `make` on first use.
    fn secret<'a>(
        &'a self,
        name: &'a str,
        make: &'a mut (dyn FnMut() -> Vec<u8> + Send),
    ) -> StoreFuture<'a, Vec<u8>>;

    /// Resolves once everything written so far is on disk.
    fn flush(&self) -> StoreFuture<'static, ()>;

    /// Records a bulk migration as it stands (a new one, or its progress).
    fn put_migration<'a>(&'a self, migration: &'a MigrationView) -> StoreFuture<'a, ()>;
    /// The supplier's bulk migrations as last recorded.
    fn migrations<'a>(&'a self, supplier: &'a str) -> StoreFuture<'a, Vec<MigrationView>>;

    /// Takes the lease `name` for `holder`, or keeps it, until `ttl` from now; whether
    /// `holder` holds it. Only one holder at a time does the work a lease names (the relay, the
    /// expiry sweep), whichever instance it runs on.
    fn hold_lease<'a>(
        &'a self,
        name: &'a str,
        holder: &'a str,
        ttl: std::time::Duration,
    ) -> StoreFuture<'a, bool>;
    /// Gives the lease up, if `holder` holds it.
    fn release_lease<'a>(&'a self, name: &'a str, holder: &'a str) -> StoreFuture<'a, ()>;

    /// Whether writes would be taken now: a use case with a side effect outside the store (a
    /// payment vendor's registration, compiling a plugin) asks before it.
    fn writable(&self) -> Result<(), StoreError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn conflicts_are_retried_a_few_times_and_nothing_else_is() {
        let mut runs = 0;
        let kept = retrying(|| {
            runs += 1;
            let run = runs;
            async move {
                if run < 3 {
                    Err(DomainError::Store(StoreError::Conflict))
                } else {
                    Ok(run)
                }
            }
        })
        .await;
        assert_eq!(kept.ok(), Some(3));

        let mut runs = 0;
        let always = retrying(|| {
            runs += 1;
            async { Err::<(), _>(DomainError::Store(StoreError::Conflict)) }
        })
        .await;
        assert!(matches!(
            always,
            Err(DomainError::Store(StoreError::Conflict))
        ));
        assert_eq!(runs, 5);

        let mut runs = 0;
        let refused = retrying(|| {
            runs += 1;
            async { Err::<(), _>(DomainError::AccountNotFound) }
        })
        .await;
        assert!(matches!(refused, Err(DomainError::AccountNotFound)));
        assert_eq!(runs, 1);
    }

    #[tokio::test]
    async fn work_is_tried_again_while_the_storage_is_away_and_not_for_anything_else() {
        let mut runs = 0;
        let kept = retrying_while_away(|| {
            runs += 1;
            let run = runs;
            async move {
                match run {
                    1 => Err(DomainError::Store(StoreError::Unavailable("away".into()))),
                    2 => Err(DomainError::Store(StoreError::Unwritable(
                        Unwritable::BelowWatermark {
                            free_bytes: 1,
                            watermark_bytes: 2,
                        },
                    ))),
                    _ => Ok(run),
                }
            }
        })
        .await;
        assert_eq!(kept.ok(), Some(3));

        let mut runs = 0;
        let refused = retrying_while_away(|| {
            runs += 1;
            async { Err::<(), _>(DomainError::Store(StoreError::Conflict)) }
        })
        .await;
        assert!(matches!(
            refused,
            Err(DomainError::Store(StoreError::Conflict))
        ));
        assert_eq!(runs, 1);
    }
}
