//! The storage port on sled, the embedded default: one tree per kind of record, every change
//! made through a write-ahead journal of Ferry's own ([`journal`]), which makes it atomic and
//! durable and lets concurrent requests share one sync.
//!
//! [`SledStore`] opens the data directory and holds the trees; each role of the port is
//! implemented in a module of its own: [`suppliers`], [`imports`] (with the import
//! [`listing`]s and each supplier's counters, [`supplier_counts`]), [`accounts`] (with the notes' and transactions'
//! indexes kept in memory, [`note_index`] and [`transaction_index`]), [`plugins`],
//! [`event_log`] (its records in [`event_records`], their id index in [`event_ids`], the
//! relay's cursor in [`outbox`], retention in [`event_retention`]) and [`leases`]. The bytes
//! of records are [`codec`]'s; records read on every request are kept decoded ([`decoded`],
//! [`generations`]). The data directory records its [`format`] version, and a directory of an
//! earlier one is upgraded as it opens. `docs/STORAGE.md` describes the files, the journal
//! and the invariants.

mod account_unit;
mod accounts;
mod blocking;
mod codec;
mod decoded;
mod event_ids;
mod event_log;
mod event_records;
mod event_retention;
mod format;
mod generations;
mod imports;
mod journal;
mod kept_indexes;
mod leases;
mod listing;
mod note_index;
mod outbox;
mod plugins;
mod supplier_counts;
mod suppliers;
mod transaction_index;

use super::health::{StorageHealth, unwritable};
use crate::domain::api_key::ApiKeyRecord;
use crate::domain::import_process::{ImportListing, ImportProcess};
use crate::domain::storage::{Durability, StoreError, StoreFuture};
use crate::domain::supplier::Supplier;
use account_unit::AccountLocks;
use accounts::AccountTable;
use codec::{be_u64, decode};
use decoded::DecodedRecords;
use journal::{Changes, Journal, ROTATE_BYTES};
use note_index::NoteIndexes;
use outbox::RelayCursor;
use serde::de::DeserializeOwned;
use std::path::Path;
use std::sync::Arc;
use supplier_counts::SupplierCounters;
use transaction_index::TransactionIndexes;

/// How many import processes are kept decoded: enough for every request in flight to find the
/// process its account's staging wrote a moment before.
const IMPORTS_KEPT_DECODED: usize = 256;

/// How many import listings are kept decoded: those of the accounts data is being added to.
const LISTINGS_KEPT_DECODED: usize = 4096;

#[derive(Clone)]
pub struct SledStore {
    suppliers: sled::Tree,
    /// The suppliers as last decoded (every request reads its own).
    decoded_suppliers: Arc<DecodedRecords<Supplier>>,
    api_keys: sled::Tree,
    /// The API keys as last decoded (every request reads its own).
    decoded_api_keys: Arc<DecodedRecords<ApiKeyRecord>>,
    api_key_digests: sled::Tree,
    /// Import processes, by supplier and external account number.
    imports: sled::Tree,
    /// The import processes written or read lately, as decoded (a migration reads the process
    /// its staging wrote: before it revalidates, and again to change it).
    decoded_imports: Arc<DecodedRecords<ImportProcess>>,
    /// What the lists show of each import process, by the same key, written with the
    /// process ([`listing`]).
    import_listings: sled::Tree,
    /// The listings read lately, as decoded (every data-adding request reads its account's).
    decoded_listings: Arc<DecodedRecords<ImportListing>>,
    /// Each supplier's counters (its campaign report's figures), moved by every change.
    supplier_counts: Arc<SupplierCounters>,
    accounts: sled::Tree,
    secrets: sled::Tree,
    plugins: sled::Tree,
    plugin_components: sled::Tree,
    /// Operations teams, by name.
    teams: sled::Tree,
    /// Bulk migrations, by supplier and id.
    migrations: sled::Tree,
    /// The event log: every event, by `seq`, several to a record ([`event_log`]);
    /// what is not published yet is read from it from the relay's cursor on
    /// ([`outbox`]).
    events: sled::Tree,
    /// The relay's cursor as last recorded.
    outbox_cursor: sled::Tree,
    /// The relay's cursor: the one it reads, ahead of what sled may hold meanwhile.
    relay_cursor: Arc<std::sync::Mutex<RelayCursor>>,
    /// Event ids → `seq`s, by the millisecond the id was made in, a record per change and
    /// millisecond ([`event_ids`]).
    event_ids_by_millisecond: sled::Tree,
    /// Event id → `seq`, for an id that is not a canonical UUID (none Ferry makes).
    event_ids: sled::Tree,
    /// When the relay published each run of consecutive `seq`s: the run's last `seq` →
    /// its first `seq` (8 bytes) and the time (RFC 3339). One write per run, not per event.
    published_runs: sled::Tree,
    /// One tree per [`AccountTable`], in `AccountTable::ALL` order.
    account_trees: Vec<sled::Tree>,
    /// One lock per stripe of accounts, held by a unit of work from open to commit.
    account_locks: std::sync::Arc<AccountLocks>,
    /// The notes' dedupe index of the accounts used lately, derived from their notes.
    note_indexes: Arc<NoteIndexes>,
    /// Each account's transaction ids, where they are stored ([`transaction_index`]).
    transaction_indexes: Arc<TransactionIndexes>,
    /// Whether writes are taken (the data directory's free space, a failed write).
    health: Arc<StorageHealth>,
    /// What every change goes through ([`Journal::commit`]: durable and readable once
    /// [`Durability::flush`] returns), and what makes it durable.
    journal: Arc<Journal>,
    /// Event `seq`s and record ids, handed out from blocks reserved in the journal.
    ids: Arc<std::sync::Mutex<IdBlock>>,
    /// The end of the last id block reserved (key [`IDS_RESERVED`]).
    id_blocks: sled::Tree,
}

/// The ids not yet handed out of the block reserved last: `next` up to `end`.
#[derive(Debug)]
struct IdBlock {
    next: u64,
    end: u64,
}

/// The size of a segment of sled's log (sled's default, which the store keeps).
const SLED_SEGMENT_BYTES: u64 = 512 * 1024;

/// The most the store writes to disk at once beyond a change's own records, outside the
/// checks of the free-space watermark: the journal's next file (a spare it prepares, or the
/// file it appends to while it has none) and a segment of sled's log. The watermark is never
/// below it ([`crate::store::health::MIN_WATERMARK_BYTES`]), so that a disk filling up is met
/// by the watermark, not by a write.
pub(crate) const WRITE_STEP_BYTES: u64 = ROTATE_BYTES + SLED_SEGMENT_BYTES;

/// How many ids one reservation takes.
const ID_BLOCK: u64 = 1_000_000;
/// The tree of the id reservation.
const ID_BLOCKS_TREE: &str = "id_blocks";
/// The key of [`ID_BLOCKS_TREE`] that holds the end of the last block reserved.
const IDS_RESERVED: &[u8] = b"reserved";

impl std::fmt::Debug for SledStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SledStore").finish_non_exhaustive()
    }
}

/// How much memory sled's page cache may hold by default (`--store-cache-mb`): 32 MiB, where
/// sled's own default is a gigabyte, which a server fills with what it wrote and keeps. The
/// cost: a store that holds more than the cache reads leaves back from sled's file (through
/// the operating system's page cache) more often. The kept indexes have a bound of their own,
/// so they do not shrink with it.
pub const DEFAULT_CACHE_BYTES: u64 = 32 << 20;

impl SledStore {
    /// Opens (or creates) the store in `dir` with the default cache and no free-space
    /// watermark.
    pub fn open(dir: &Path) -> Result<Self, StoreError> {
        Self::open_with(
            dir,
            DEFAULT_CACHE_BYTES,
            Arc::new(StorageHealth::unwatched()),
        )
    }

    /// Opens (or creates) the store in `dir`, its page cache bounded to `cache_bytes`, its
    /// writes taken while `health` allows them.
    pub fn open_with(
        dir: &Path,
        cache_bytes: u64,
        health: Arc<StorageHealth>,
    ) -> Result<Self, StoreError> {
        // A directory of a later format is refused before anything is written to it.
        let recorded = format::recorded(dir)?;
        let db = sled::Config::new()
            .path(dir)
            .cache_capacity(cache_bytes)
            .open()?;
        // What the journal holds is in the format of the version that wrote it: applied
        // first, then the directory upgraded, and only then are changes taken.
        let replayed = journal::replay(&db, dir)?;
        format::bring_up_to_date(&db, dir, recorded)?;
        let room = health.clone();
        let journal = Arc::new(Journal::start(
            &db,
            dir,
            &replayed,
            ROTATE_BYTES,
            Box::new(move |bytes| room.leaves_room_for(bytes)),
        )?);
        let generations = journal.generations().clone();
        let id_blocks = db.open_tree(ID_BLOCKS_TREE)?;
        // Past every id reserved (the journal has been replayed).
        let next = id_blocks
            .get(IDS_RESERVED)?
            .map_or(0, |bytes| be_u64(&bytes));
        let mut store = Self {
            ids: Arc::new(std::sync::Mutex::new(IdBlock { next, end: next })),
            id_blocks,
            suppliers: db.open_tree("suppliers")?,
            decoded_suppliers: Arc::new(DecodedRecords::new(generations.clone())),
            api_keys: db.open_tree("api_keys")?,
            decoded_api_keys: Arc::new(DecodedRecords::new(generations.clone())),
            api_key_digests: db.open_tree("api_key_digests")?,
            imports: db.open_tree("imports")?,
            decoded_imports: Arc::new(DecodedRecords::keeping(
                IMPORTS_KEPT_DECODED,
                generations.clone(),
                decode,
            )),
            import_listings: db.open_tree("import_listings")?,
            decoded_listings: Arc::new(DecodedRecords::keeping(
                LISTINGS_KEPT_DECODED,
                generations,
                listing::decode,
            )),
            supplier_counts: Arc::new(SupplierCounters::read(
                db.open_tree(supplier_counts::TREE)?,
            )?),
            accounts: db.open_tree("accounts")?,
            secrets: db.open_tree("secrets")?,
            plugins: db.open_tree("plugins")?,
            plugin_components: db.open_tree("plugin_components")?,
            teams: db.open_tree("operations_teams")?,
            migrations: db.open_tree("migrations")?,
            events: db.open_tree("events")?,
            outbox_cursor: db.open_tree("outbox_cursor")?,
            relay_cursor: Arc::default(),
            event_ids_by_millisecond: db.open_tree("event_ids_by_millisecond")?,
            event_ids: db.open_tree("event_ids")?,
            published_runs: db.open_tree("published_runs")?,
            account_trees: AccountTable::ALL
                .iter()
                .map(|table| db.open_tree(table.tree_name()))
                .collect::<Result<_, _>>()?,
            account_locks: std::sync::Arc::default(),
            note_indexes: Arc::new(NoteIndexes::for_store_memory(cache_bytes)),
            transaction_indexes: Arc::new(TransactionIndexes::for_store_memory(cache_bytes)),
            health,
            journal,
        };
        store.relay_cursor = Arc::new(std::sync::Mutex::new(store.open_relay_cursor()?));
        Ok(store)
    }

    /// `work`, a write, done once it is durable (and readable), with a failure for storage
    /// reasons noted in the health (writes stop).
    fn noting_failures<'a, T: Send + 'a>(
        &'a self,
        work: impl std::future::Future<Output = Result<T, StoreError>> + Send + 'a,
    ) -> StoreFuture<'a, T> {
        let health = self.health.clone();
        Box::pin(async move {
            let done = async {
                let value = work.await?;
                Durability::flush(self).await?;
                Ok(value)
            };
            done.await.map_err(|error| health.noted(error))
        })
    }

    /// A new id (for an event's `seq`, a note, a ledger entry): ids come from blocks, each
    /// reserved by a journal record that precedes every change using them, so that after
    /// a crash the ids go on past every one a kept change used. (sled's own `generate_id`
    /// starts again from 0 in a directory sled had not flushed yet.)
    fn next_id(&self) -> u64 {
        self.next_ids(1)
    }

    /// The first of `count` consecutive new ids ([`Self::next_id`]).
    fn next_ids(&self, count: u64) -> u64 {
        let mut ids = self
            .ids
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if ids.end - ids.next < count {
            ids.end = ids.next + ID_BLOCK.max(count);
            let mut reservation = Changes::default();
            reservation.insert(&self.id_blocks, IDS_RESERVED, &ids.end.to_be_bytes());
            self.journal.append_now(reservation);
        }
        let first = ids.next;
        ids.next += count;
        first
    }

    /// The record at `key` of `tree`, read as `T` by a change ([`Journal::commit`]): the changes
    /// committed before it included.
    fn read<T: DeserializeOwned>(
        &self,
        tree: &sled::Tree,
        key: &[u8],
    ) -> Result<Option<T>, StoreError> {
        self.journal
            .get(tree, key)?
            .map(|bytes| decode(key, &bytes))
            .transpose()
    }

    /// Whether a record is at `key` of `tree`, for a change ([`Self::read`]).
    fn exists(&self, tree: &sled::Tree, key: &[u8]) -> Result<bool, StoreError> {
        Ok(self.journal.get(tree, key)?.is_some())
    }
}

impl From<sled::Error> for StoreError {
    /// An I/O error is for good: sled keeps the first one and answers it to every later
    /// write.
    fn from(error: sled::Error) -> Self {
        match error {
            sled::Error::Io(io) => StoreError::Unwritable(unwritable(&io)),
            other => StoreError::Backend(Box::new(other)),
        }
    }
}

impl Durability for SledStore {
    /// Waits for every change made so far to be on disk and in sled (one synced write shared by
    /// every change that joined it).
    fn flush(&self) -> StoreFuture<'static, ()> {
        let journal = self.journal.clone();
        let health = self.health.clone();
        // Every change made before this call, whenever the future is first polled.
        let appended = journal.appended();
        Box::pin(async move {
            journal
                .durable(appended)
                .await
                .map_err(|error| health.noted(error))
        })
    }

    fn writable(&self) -> Result<(), StoreError> {
        self.health.check()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::events::Event;
    use crate::domain::storage::{EventLog, Outbox, Store};
    use serde_json::json;
    use std::collections::HashSet;

    /// A temporary directory for one test.
    struct SledBackend {
        dir: tempfile::TempDir,
    }

    impl SledBackend {
        fn new() -> Self {
            Self {
                dir: tempfile::tempdir().expect("temp dir"),
            }
        }
    }

    impl crate::store::contract::Backend for SledBackend {
        fn open_with_health(
            &self,
            health: Arc<StorageHealth>,
        ) -> (
            std::sync::Arc<dyn Store>,
            std::sync::Arc<dyn crate::domain::storage::Outbox>,
        ) {
            let store = std::sync::Arc::new(
                SledStore::open_with(self.dir.path(), DEFAULT_CACHE_BYTES, health).expect("store"),
            );
            (store.clone(), store)
        }

        fn shared(&self) -> bool {
            false
        }
    }

    crate::store::contract::contract_tests!(SledBackend::new);

    /// A catalogued event about account `number`.
    pub(in crate::store) fn event(number: usize) -> Event {
        let account = format!("A-{number:08X}");
        Event::new(
            "account.occupied",
            "v1",
            Some(&account),
            json!({"account_number": account}),
        )
        .expect("a catalogued event")
    }

    /// Copies the files under `from` to `to`, but for the entries named in `leaving_out`.
    fn copy_dir(from: &Path, to: &Path, leaving_out: &[&str]) {
        std::fs::create_dir_all(to).expect("dir");
        for entry in std::fs::read_dir(from).expect("dir") {
            let entry = entry.expect("entry");
            let name = entry.file_name();
            if leaving_out.iter().any(|left| name == *left) {
                continue;
            }
            if entry.file_type().expect("type").is_dir() {
                copy_dir(&entry.path(), &to.join(&name), &[]);
            } else {
                std::fs::copy(entry.path(), to.join(&name)).expect("copy");
            }
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_crash_before_sled_flushes_what_the_journal_holds_loses_nothing_and_reuses_no_id() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SledStore::open(dir.path()).expect("store");
        // The journal's first file checkpointed (sled flushed), and the writer on a spare: sled
        // stays as flushed while nothing is written, and the journal's files stay put.
        super::journal::wait_until_over_zeros(dir.path(), ROTATE_BYTES);
        let crashed = tempfile::tempdir().expect("temp dir");
        copy_dir(dir.path(), crashed.path(), &["journal"]);
        store
            .publish_events(&[event(1), event(2)])
            .await
            .expect("publish");
        let before = store.events_after(None, 10).await.expect("log");
        // What a SIGKILL leaves when sled had flushed nothing since: sled as it was, and the
        // journal.
        copy_dir(
            &dir.path().join("journal"),
            &crashed.path().join("journal"),
            &[],
        );
        drop(store);

        let store = SledStore::open(crashed.path()).expect("reopened");
        let after = store.events_after(None, 10).await.expect("log");
        let ids = |events: &[Event]| -> Vec<(u64, String)> {
            events
                .iter()
                .map(|event| (event.seq, event.id.clone()))
                .collect()
        };
        assert_eq!(ids(&after), ids(&before), "replayed from the journal");
        let pending: Vec<u64> = store
            .pending_events(10, &HashSet::new())
            .await
            .expect("pending")
            .iter()
            .map(|event| event.seq)
            .collect();
        let logged: Vec<u64> = before.iter().map(|event| event.seq).collect();
        assert_eq!(
            pending, logged,
            "still to be published: the relay's cursor was journaled"
        );
        store.publish_events(&[event(3)]).await.expect("publish");
        let log = store.events_after(None, 10).await.expect("log");
        assert_eq!(log.len(), 3, "nothing overwritten");
        assert!(
            log[2].seq > before[1].seq,
            "a new seq after the replayed ones: {} after {}",
            log[2].seq,
            before[1].seq
        );
    }
}
