//! The sled implementation of [`Store`]: one tree per kind of record, JSON values, every
//! change made through the journal ([`super::journal`]), which makes it atomic and durable.

mod account;
mod blocking;
mod decoded;
mod event_ids;
mod event_log;
mod event_retention;
mod generations;
mod import_counts;
mod journal;
mod kept_indexes;
mod listing;
mod note_index;
mod outbox;
mod transaction_index;

use super::health::{StorageHealth, unwritable};
use super::{
    AccountRecords, AccountUnit, DecideImport, ImportChange, ImportCounts, ImportStream,
    ListingStream, Store, StoreError, StoreFuture,
};
use crate::domain::api_key::ApiKeyRecord;
use crate::domain::error::DomainError;
use crate::domain::events::Event;
use crate::domain::import_process::{ImportListing, ImportProcess, PlatformAccount};
use crate::domain::meter_points::MeterPoint;
use crate::domain::migrations::MigrationView;
use crate::domain::operations_team::OperationsTeam;
use crate::domain::plugin::PluginRecord;
use crate::domain::supplier::Supplier;
use account::{AccountLocks, AccountTable};
use chrono::{DateTime, Utc};
use decoded::{DecodedRecords, RecordReader};
use event_log::{EVENT_GROUP_MAX, LogRecord, LoggedEvents, corrupt, logged_event};
use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use import_counts::ImportCountsByState;
use journal::{Changes, Journal, ROTATE_BYTES};
use note_index::NoteIndexes;
use outbox::RelayCursor;
use serde::Serialize;
use serde::de::DeserializeOwned;
use sled::IVec;
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;
use transaction_index::TransactionIndexes;

const SEPARATOR: u8 = 0;
const NUMBER_ATTEMPTS: usize = 16;
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
    /// Each supplier's count of import processes by state, counted from the listings on open.
    import_counts: Arc<ImportCountsByState>,
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
    /// Events not yet published, by `seq`, as versions before the relay's cursor kept them.
    outbox: sled::Tree,
    /// The relay's cursor as last recorded.
    outbox_cursor: sled::Tree,
    /// The relay's cursor: the one it reads, ahead of what sled may hold meanwhile.
    relay_cursor: Arc<std::sync::Mutex<RelayCursor>>,
    /// Event ids → `seq`s, by the millisecond the id was made in, a record per change and
    /// millisecond ([`event_ids`]).
    event_ids_by_millisecond: sled::Tree,
    /// Event id → `seq`, as versions before kept every id; now only an id that is not a
    /// canonical UUID.
    event_ids: sled::Tree,
    /// `seq` → when the relay published it (RFC 3339), as written before `published_runs`.
    published: sled::Tree,
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
    /// [`Store::flush`] returns), and what makes it durable.
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

/// How many ids one reservation takes.
const ID_BLOCK: u64 = 1_000_000;
const IDS_RESERVED: &[u8] = b"reserved";

impl std::fmt::Debug for SledStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SledStore").finish_non_exhaustive()
    }
}

/// How much memory sled's page cache may hold by default (`--store-cache-mb`): 32 MiB. With
/// sled's own default gigabyte, a server held 237 MiB after staging 100 000 accounts and
/// 428 MiB when it had served the benchmark's other scenarios first; with 32 MiB, 117 and
/// 195 MiB (issue 15 asks for at most 256). The cost: a store that holds more than the cache
/// reads leaves back from sled's file, which showed as 2-8 % fewer migrations a second at 32
/// connections, none at 8 (BENCHMARKS.md, thirty-fourth session). The kept indexes have a
/// floor of their own, so they do not shrink with it.
pub const DEFAULT_CACHE_BYTES: u64 = 32 << 20;

/// The tree in which versions before kept the notes' dedupe index (`account_NoteIndex`).
const OLD_NOTE_INDEX_TREE: &str = "account_NoteIndex";

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
        let db = sled::Config::new()
            .path(dir)
            .cache_capacity(cache_bytes)
            .open()?;
        let journal = Arc::new(Journal::open(&db, dir, ROTATE_BYTES)?);
        let generations = journal.generations().clone();
        let id_blocks = db.open_tree("id_blocks")?;
        // Past every id reserved (the journal has been replayed), and past every id sled handed
        // out when it made them (data directories of earlier versions).
        let reserved = id_blocks
            .get(IDS_RESERVED)?
            .map_or(0, |bytes| be_u64(&bytes));
        let next = reserved.max(db.generate_id()?);
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
            import_counts: Arc::default(),
            accounts: db.open_tree("accounts")?,
            secrets: db.open_tree("secrets")?,
            plugins: db.open_tree("plugins")?,
            plugin_components: db.open_tree("plugin_components")?,
            teams: db.open_tree("operations_teams")?,
            migrations: db.open_tree("migrations")?,
            events: db.open_tree("events")?,
            outbox: db.open_tree("outbox")?,
            outbox_cursor: db.open_tree("outbox_cursor")?,
            relay_cursor: Arc::default(),
            event_ids_by_millisecond: db.open_tree("event_ids_by_millisecond")?,
            event_ids: db.open_tree("event_ids")?,
            published: db.open_tree("published")?,
            published_runs: db.open_tree("published_runs")?,
            account_trees: AccountTable::ALL
                .iter()
                .map(|table| db.open_tree(format!("account_{table:?}")))
                .collect::<Result<_, _>>()?,
            account_locks: std::sync::Arc::default(),
            note_indexes: Arc::new(NoteIndexes::for_store_memory(cache_bytes)),
            transaction_indexes: Arc::new(TransactionIndexes::for_store_memory(cache_bytes)),
            health,
            journal,
        };
        // The notes' dedupe index is kept in memory now (`note_index`); the tree that
        // versions before kept it in (written again by the replay of their journal) goes.
        db.drop_tree(OLD_NOTE_INDEX_TREE)?;
        listing::build_listings(
            &store.imports,
            &store.import_listings,
            &db.open_tree("layout")?,
        )?;
        store.import_counts = Arc::new(ImportCountsByState::counted(&store.import_listings)?);
        db.drop_tree(import_counts::OLD_COUNTS_TREE)?;
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
                Store::flush(self).await?;
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

    /// Lists the writes of a change's events, under consecutive new `seq`s in their order: the
    /// event log's records ([`event_log`]; the relay reads them too) and the id
    /// index.
    fn write_events(&self, changes: &mut Changes, events: LoggedEvents) {
        if events.len() == 0 {
            return;
        }
        let first = self.next_ids(events.len() as u64);
        events.index.write(
            changes,
            &self.event_ids_by_millisecond,
            &self.event_ids,
            first,
        );
        let keys = (first..).step_by(EVENT_GROUP_MAX);
        for (key, record) in keys.zip(events.records) {
            changes.insert(&self.events, &key.to_be_bytes(), record);
        }
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

    /// When the relay published event `seq`, if it has.
    fn published_at(&self, seq: u64) -> Result<Option<DateTime<Utc>>, StoreError> {
        let run = self
            .published_runs
            .range(seq.to_be_bytes()..)
            .next()
            .transpose()?;
        let at = match run {
            Some((_, value)) if value.len() >= 8 && be_u64(&value[..8]) <= seq => {
                Some(value[8..].to_vec())
            }
            // Published by a version that recorded every event on its own.
            _ => self.published.get(seq.to_be_bytes())?.map(|at| at.to_vec()),
        };
        Ok(at
            .and_then(|at| DateTime::parse_from_rfc3339(&String::from_utf8_lossy(&at)).ok())
            .map(|at| at.with_timezone(&Utc)))
    }
}

impl SledStore {
    /// Calls `visit` with each logged event's `seq` and stored bytes from `start` on, in
    /// order, until it breaks.
    fn for_each_logged(
        &self,
        start: u64,
        mut visit: impl FnMut(u64, &[u8]) -> Result<ControlFlow<()>, StoreError>,
    ) -> Result<(), StoreError> {
        // The record holding `start` may begin before it (a group), then every one after.
        let holding = self.events.range(..start.to_be_bytes()).next_back();
        let records = holding
            .into_iter()
            .chain(self.events.range(start.to_be_bytes()..));
        for entry in records {
            let (key, value) = entry?;
            let first = be_u64(&key);
            let record = LogRecord::read(first, &value)?;
            for (seq, bytes) in (first..).zip(record.events()) {
                if seq < start {
                    continue;
                }
                let bytes = bytes.ok_or_else(|| corrupt(first, "a group of events cut short"))?;
                if visit(seq, bytes)?.is_break() {
                    return Ok(());
                }
            }
        }
        Ok(())
    }
}

fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    // Records are plain structs of strings, numbers and dates: serialising cannot fail.
    serde_json::to_vec(value).unwrap_or_default()
}

fn decode<T: DeserializeOwned>(key: &[u8], bytes: &[u8]) -> Result<T, StoreError> {
    serde_json::from_slice(bytes).map_err(|source| StoreError::Corrupt {
        key: String::from_utf8_lossy(key).into_owned(),
        source,
    })
}

/// The record at `key` is not what Ferry wrote, for the reason `problem` gives.
fn corrupt_record(key: &[u8], problem: &'static str) -> StoreError {
    StoreError::Corrupt {
        key: String::from_utf8_lossy(key).into_owned(),
        source: serde::de::Error::custom(problem),
    }
}

/// A record compressed as one LZ4 block behind a one-byte `tag` saying so: the tag, then the
/// size of `body` (u32, little endian), then the block. sled rewrites a leaf whole when it
/// splits or consolidates it, so large records cost in proportion to their bytes on every
/// write near them; records of many similar items (groups of events, batches of
/// transactions) shrink several times over.
fn compressed(tag: u8, body: &[u8]) -> Vec<u8> {
    let block = lz4_flex::block::compress_prepend_size(body);
    let mut record = Vec::with_capacity(1 + block.len());
    record.push(tag);
    record.extend_from_slice(&block);
    record
}

/// No compressed record decompresses to more than this: one claiming more is corrupt, and is
/// not given the memory it claims.
const MAX_DECOMPRESSED_BYTES: usize = 1 << 30;

/// The body of a record [`compressed`] wrote, given what follows its tag; `None` if it does
/// not decompress to the size it states.
fn decompressed(block: &[u8]) -> Option<Vec<u8>> {
    let (size, block) = block.split_first_chunk::<4>()?;
    let size = u32::from_le_bytes(*size) as usize;
    if size > MAX_DECOMPRESSED_BYTES {
        return None;
    }
    lz4_flex::block::decompress(block, size)
        .ok()
        .filter(|body| body.len() == size)
}

fn pair_key(first: &str, second: &str) -> Vec<u8> {
    let mut key = Vec::with_capacity(first.len() + second.len() + 1);
    key.extend_from_slice(first.as_bytes());
    key.push(SEPARATOR);
    key.extend_from_slice(second.as_bytes());
    key
}

/// The two parts of a [`pair_key`] (none: `key` is not one).
fn split_pair_key(key: &[u8]) -> Option<(&[u8], &[u8])> {
    let separator = key.iter().position(|&byte| byte == SEPARATOR)?;
    Some((&key[..separator], &key[separator + 1..]))
}

/// The runs of consecutive numbers in sorted, distinct `seqs`, as (first, last).
fn consecutive_runs(seqs: &[u64]) -> Vec<(u64, u64)> {
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for &seq in seqs {
        match runs.last_mut() {
            Some((_, last)) if last.checked_add(1) == Some(seq) => *last = seq,
            _ => runs.push((seq, seq)),
        }
    }
    runs
}

/// A number stored as 8 big-endian bytes (a `seq` key, a count, an id reservation); 0 for
/// anything else.
fn be_u64(key: &[u8]) -> u64 {
    <[u8; 8]>::try_from(key)
        .map(u64::from_be_bytes)
        .unwrap_or(0)
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

impl Store for SledStore {
    fn create_team<'a>(&'a self, team: &'a OperationsTeam) -> StoreFuture<'a, bool> {
        self.noting_failures(async move {
            self.health.check()?;
            self.journal.commit(|changes| {
                if self.exists(&self.teams, team.name.as_bytes())? {
                    return Ok(false);
                }
                changes.insert(&self.teams, team.name.as_bytes(), encode(team));
                Ok(true)
            })
        })
    }

    fn team<'a>(&'a self, name: &'a str) -> StoreFuture<'a, Option<OperationsTeam>> {
        Box::pin(async move {
            self.teams
                .get(name.as_bytes())?
                .map(|bytes| decode(name.as_bytes(), &bytes))
                .transpose()
        })
    }

    fn teams(&self) -> StoreFuture<'_, Vec<OperationsTeam>> {
        Box::pin(async move {
            self.teams
                .iter()
                .map(|entry| {
                    let (key, value) = entry?;
                    decode(&key, &value)
                })
                .collect()
        })
    }

    fn delete_team<'a>(&'a self, name: &'a str) -> StoreFuture<'a, Option<OperationsTeam>> {
        self.noting_failures(async move {
            self.health.check()?;
            self.journal.commit(|changes| {
                let team = self.read(&self.teams, name.as_bytes())?;
                if team.is_some() {
                    changes.remove(&self.teams, name.as_bytes());
                }
                Ok(team)
            })
        })
    }

    fn create_supplier<'a>(&'a self, supplier: &'a Supplier) -> StoreFuture<'a, bool> {
        self.noting_failures(async move {
            self.health.check()?;
            self.journal.commit(|changes| {
                if self.exists(&self.suppliers, supplier.code.as_bytes())? {
                    return Ok(false);
                }
                changes.insert(&self.suppliers, supplier.code.as_bytes(), encode(supplier));
                Ok(true)
            })
        })
    }

    fn supplier<'a>(&'a self, code: &'a str) -> StoreFuture<'a, Option<Supplier>> {
        Box::pin(std::future::ready(
            self.decoded_suppliers.get(&self.suppliers, code.as_bytes()),
        ))
    }

    fn suppliers(&self) -> StoreFuture<'_, Vec<Supplier>> {
        Box::pin(async move {
            self.suppliers
                .iter()
                .map(|entry| {
                    let (key, value) = entry?;
                    decode(&key, &value)
                })
                .collect()
        })
    }

    fn update_supplier<'a>(
        &'a self,
        code: &'a str,
        change: &'a mut (dyn FnMut(&mut Supplier) + Send),
    ) -> StoreFuture<'a, Option<Supplier>> {
        self.noting_failures(async move {
            self.health.check()?;
            self.journal.commit(|changes| {
                let Some(mut supplier) = self.read::<Supplier>(&self.suppliers, code.as_bytes())?
                else {
                    return Ok(None);
                };
                change(&mut supplier);
                changes.insert(&self.suppliers, code.as_bytes(), encode(&supplier));
                Ok(Some(supplier))
            })
        })
    }

    fn import_counts<'a>(&'a self, code: &'a str) -> StoreFuture<'a, ImportCounts> {
        Box::pin(std::future::ready(Ok(self.import_counts.of(code))))
    }

    fn insert_api_key<'a>(&'a self, key: &'a ApiKeyRecord) -> StoreFuture<'a, ()> {
        self.noting_failures(async move {
            self.health.check()?;
            self.journal.commit(|changes| {
                changes.insert(&self.api_keys, key.id.as_bytes(), encode(key));
                changes.insert(
                    &self.api_key_digests,
                    key.key_digest.as_bytes(),
                    key.id.as_bytes(),
                );
                Ok(())
            })
        })
    }

    fn api_key<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<ApiKeyRecord>> {
        Box::pin(std::future::ready(
            self.decoded_api_keys.get(&self.api_keys, id.as_bytes()),
        ))
    }

    fn api_key_by_digest<'a>(&'a self, digest: &'a str) -> StoreFuture<'a, Option<ApiKeyRecord>> {
        Box::pin(async move {
            let Some(id) = self.api_key_digests.get(digest.as_bytes())? else {
                return Ok(None);
            };
            let id = String::from_utf8_lossy(&id).into_owned();
            self.api_key(&id).await
        })
    }

    fn revoke_api_key<'a>(
        &'a self,
        id: &'a str,
        at: DateTime<Utc>,
    ) -> StoreFuture<'a, Option<ApiKeyRecord>> {
        self.noting_failures(async move {
            self.health.check()?;
            self.journal.commit(|changes| {
                let Some(mut key) = self.read::<ApiKeyRecord>(&self.api_keys, id.as_bytes())?
                else {
                    return Ok(None);
                };
                if key.revoked_at.is_none() {
                    key.revoked_at = Some(at);
                }
                changes.insert(&self.api_keys, id.as_bytes(), encode(&key));
                changes.remove(&self.api_key_digests, key.key_digest.as_bytes());
                Ok(Some(key))
            })
        })
    }

    fn import_process<'a>(
        &'a self,
        supplier: &'a str,
        external: &'a str,
    ) -> StoreFuture<'a, Option<ImportProcess>> {
        Box::pin(std::future::ready(
            self.decoded_imports
                .get(&self.imports, &pair_key(supplier, external)),
        ))
    }

    fn change_import<'a>(
        &'a self,
        supplier: &'a str,
        external: &'a str,
        decide: &'a mut DecideImport<'a>,
    ) -> BoxFuture<'a, Result<ImportChange, DomainError>> {
        Box::pin(async move {
            self.health.check()?;
            let change = self
                .apply_import_change(supplier, external, decide)
                .map_err(|error| self.health.noted_domain(error))?;
            Store::flush(self).await?;
            Ok(change)
        })
    }

    fn change_imports<'a>(
        &'a self,
        supplier: &'a str,
        externals: &'a [String],
        decide: &'a mut DecideImport<'a>,
    ) -> BoxFuture<'a, Result<Vec<Result<ImportChange, DomainError>>, StoreError>> {
        Box::pin(async move {
            self.health.check()?;
            let outcomes = externals
                .iter()
                .map(|external| {
                    self.apply_import_change(supplier, external, &mut *decide)
                        .map_err(|error| self.health.noted_domain(error))
                })
                .collect();
            Store::flush(self).await?;
            Ok(outcomes)
        })
    }

    fn import_processes(&self, supplier: &str, after: Option<&str>) -> ImportStream {
        futures_util::stream::iter(Self::import_range(&self.imports, supplier, after, decode))
            .boxed()
    }

    fn import_listing<'a>(
        &'a self,
        supplier: &'a str,
        external: &'a str,
    ) -> StoreFuture<'a, Option<ImportListing>> {
        Box::pin(std::future::ready(
            self.decoded_listings
                .get(&self.import_listings, &pair_key(supplier, external)),
        ))
    }

    fn import_listings(&self, supplier: &str) -> ListingStream {
        futures_util::stream::iter(Self::import_range(
            &self.import_listings,
            supplier,
            None,
            listing::decode,
        ))
        .boxed()
    }

    fn account<'a>(&'a self, number: &'a str) -> StoreFuture<'a, Option<PlatformAccount>> {
        Box::pin(async move {
            self.accounts
                .get(number.as_bytes())?
                .map(|bytes| decode(number.as_bytes(), &bytes))
                .transpose()
        })
    }

    fn new_ids(&self, count: usize) -> StoreFuture<'_, Vec<u64>> {
        let first = self.next_ids(count as u64);
        Box::pin(std::future::ready(Ok(
            (first..first + count as u64).collect()
        )))
    }

    fn account_unit<'a>(
        &'a self,
        number: &'a str,
    ) -> BoxFuture<'a, Result<Box<dyn AccountUnit>, StoreError>> {
        self.open_account_unit(number)
    }

    fn account_records<'a>(
        &'a self,
        number: &'a str,
    ) -> BoxFuture<'a, Result<AccountRecords, StoreError>> {
        Box::pin(std::future::ready(self.read_account_records(number)))
    }

    fn meter_points<'a>(
        &'a self,
        number: &'a str,
    ) -> BoxFuture<'a, Result<Vec<MeterPoint>, StoreError>> {
        Box::pin(std::future::ready(self.read_meter_points(number)))
    }

    fn put_plugin<'a>(
        &'a self,
        record: &'a PluginRecord,
        component: &'a [u8],
    ) -> StoreFuture<'a, ()> {
        self.noting_failures(async move {
            self.health.check()?;
            self.journal.commit(|changes| {
                let previous: Option<PluginRecord> =
                    self.read(&self.plugins, record.supplier.as_bytes())?;
                changes.insert(&self.plugin_components, record.sha256.as_bytes(), component);
                changes.insert(&self.plugins, record.supplier.as_bytes(), encode(record));
                match previous {
                    Some(previous) if previous.sha256 != record.sha256 => {
                        self.remove_component_unless_used(changes, &previous)
                    }
                    _ => Ok(()),
                }
            })
        })
    }

    fn configure_plugin<'a>(
        &'a self,
        supplier: &'a str,
        sha256: &'a str,
        config: &'a std::collections::BTreeMap<String, String>,
    ) -> StoreFuture<'a, Option<PluginRecord>> {
        self.noting_failures(async move {
            self.health.check()?;
            self.journal.commit(|changes| {
                let Some(mut plugin) =
                    self.read::<PluginRecord>(&self.plugins, supplier.as_bytes())?
                else {
                    return Ok(None);
                };
                if plugin.sha256 != sha256 {
                    return Err(StoreError::Conflict);
                }
                plugin.config = config.clone();
                changes.insert(&self.plugins, supplier.as_bytes(), encode(&plugin));
                Ok(Some(plugin))
            })
        })
    }

    fn plugin<'a>(&'a self, supplier: &'a str) -> StoreFuture<'a, Option<PluginRecord>> {
        Box::pin(async move {
            self.plugins
                .get(supplier.as_bytes())?
                .map(|bytes| decode(supplier.as_bytes(), &bytes))
                .transpose()
        })
    }

    fn plugins(&self) -> StoreFuture<'_, Vec<PluginRecord>> {
        Box::pin(async move {
            self.plugins
                .iter()
                .map(|entry| {
                    let (key, value) = entry?;
                    decode(&key, &value)
                })
                .collect()
        })
    }

    fn plugin_component<'a>(&'a self, sha256: &'a str) -> StoreFuture<'a, Option<Vec<u8>>> {
        Box::pin(async move {
            Ok(self
                .plugin_components
                .get(sha256.as_bytes())?
                .map(|bytes| bytes.to_vec()))
        })
    }

    fn remove_plugin<'a>(&'a self, supplier: &'a str) -> StoreFuture<'a, Option<PluginRecord>> {
        self.noting_failures(async move {
            self.health.check()?;
            self.journal.commit(|changes| {
                let plugin = self.read(&self.plugins, supplier.as_bytes())?;
                if let Some(plugin) = &plugin {
                    changes.remove(&self.plugins, supplier.as_bytes());
                    self.remove_component_unless_used(changes, plugin)?;
                }
                Ok(plugin)
            })
        })
    }

    fn publish_events<'a>(&'a self, events: &'a [Event]) -> StoreFuture<'a, ()> {
        self.noting_failures(async move {
            self.health.check()?;
            let logged = LoggedEvents::new(events);
            self.journal.commit(|changes| {
                self.write_events(changes, logged);
                Ok(())
            })
        })
    }

    fn events_after(&self, after: Option<u64>, limit: usize) -> StoreFuture<'_, Vec<Event>> {
        Box::pin(async move {
            let start = after.map_or(0, |seq| seq.saturating_add(1));
            let mut events = Vec::with_capacity(limit.min(4096));
            self.for_each_logged(start, |seq, bytes| {
                if events.len() >= limit {
                    return Ok(ControlFlow::Break(()));
                }
                let mut event = logged_event(seq, bytes)?;
                event.published_at = self.published_at(seq)?;
                events.push(event);
                Ok(ControlFlow::Continue(()))
            })?;
            Ok(events)
        })
    }

    fn event_seq<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<u64>> {
        Box::pin(async move {
            Ok(event_ids::seq_of(
                &self.event_ids_by_millisecond,
                &self.event_ids,
                id,
            )?)
        })
    }

    fn outbox_len(&self) -> StoreFuture<'_, usize> {
        Box::pin(std::future::ready(self.unpublished_len()))
    }

    fn prune_events(&self, made_before: DateTime<Utc>, limit: usize) -> StoreFuture<'_, usize> {
        self.noting_failures(async move {
            self.health.check()?;
            if !self.log_start_is_due(made_before)? {
                return Ok(0);
            }
            // A walk over thousands of records: off the worker's queue meanwhile.
            blocking::blocking(|| self.prune_logged(made_before, limit))
        })
    }

    fn secret<'a>(
        &'a self,
        name: &'a str,
        make: &'a mut (dyn FnMut() -> Vec<u8> + Send),
    ) -> StoreFuture<'a, Vec<u8>> {
        self.noting_failures(async move {
            if let Some(existing) = self.secrets.get(name.as_bytes())? {
                return Ok(existing.to_vec());
            }
            self.health.check()?;
            self.journal.commit(|changes| {
                if let Some(raced) = self.journal.get(&self.secrets, name.as_bytes())? {
                    return Ok(raced.to_vec());
                }
                let fresh = make();
                changes.insert(&self.secrets, name.as_bytes(), fresh.clone());
                Ok(fresh)
            })
        })
    }

    /// Waits for every change made so far to be on disk and in sled (one synced write shared by
    /// every change that joined it).
    fn flush(&self) -> BoxFuture<'static, Result<(), StoreError>> {
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

    fn put_migration<'a>(&'a self, migration: &'a MigrationView) -> StoreFuture<'a, ()> {
        self.noting_failures(async move {
            self.journal.commit(|changes| {
                changes.insert(
                    &self.migrations,
                    pair_key(&migration.supplier, &migration.id),
                    encode(migration),
                );
                Ok(())
            })
        })
    }

    fn migrations<'a>(&'a self, supplier: &'a str) -> StoreFuture<'a, Vec<MigrationView>> {
        Box::pin(async move {
            self.migrations
                .scan_prefix(pair_key(supplier, ""))
                .map(|entry| {
                    let (key, value) = entry?;
                    decode(&key, &value)
                })
                .collect()
        })
    }

    /// One process holds a sled directory: it holds every lease.
    fn hold_lease<'a>(
        &'a self,
        _name: &'a str,
        _holder: &'a str,
        _ttl: std::time::Duration,
    ) -> StoreFuture<'a, bool> {
        Box::pin(std::future::ready(Ok(true)))
    }

    fn release_lease<'a>(&'a self, _name: &'a str, _holder: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(std::future::ready(Ok(())))
    }
}

impl SledStore {
    /// Adds the removal of the component `replaced` (a supplier's plugin being replaced or
    /// removed) ran, unless another supplier's plugin runs it too. Under the commit lock.
    fn remove_component_unless_used(
        &self,
        changes: &mut Changes,
        replaced: &PluginRecord,
    ) -> Result<(), StoreError> {
        for supplier in self.journal.keys(&self.plugins)? {
            if supplier.as_ref() == replaced.supplier.as_bytes() {
                continue;
            }
            let other: Option<PluginRecord> = self.read(&self.plugins, &supplier)?;
            if other.is_some_and(|other| other.sha256 == replaced.sha256) {
                return Ok(());
            }
        }
        changes.remove(&self.plugin_components, replaced.sha256.as_bytes());
        Ok(())
    }

    /// One import change, committed (not yet durable).
    fn apply_import_change(
        &self,
        supplier: &str,
        external: &str,
        decide: &mut DecideImport<'_>,
    ) -> Result<ImportChange, DomainError> {
        let key = pair_key(supplier, external);
        self.journal.commit(|changes| {
            for _ in 0..NUMBER_ATTEMPTS {
                let current = self
                    .journal
                    .get(&self.imports, &key)?
                    .map(|bytes| self.decoded_imports.decoded(&key, bytes))
                    .transpose()?;
                let change = decide(current.as_ref())?;
                if let Some(account) = &change.account {
                    if self.exists(&self.accounts, account.number.as_bytes())? {
                        continue;
                    }
                    // The account's records before the account and its listing: sled makes a
                    // change's writes in order, so whoever finds the account finds them.
                    if let Some(opening) = &change.opening {
                        self.write_opening(changes, &account.number, opening);
                    }
                    changes.insert(&self.accounts, account.number.as_bytes(), encode(account));
                }
                changes.insert(
                    &self.import_listings,
                    key.as_slice(),
                    listing::encode(&ImportListing::of(&change.process)),
                );
                let record = IVec::from(encode(&change.process));
                changes.insert(&self.imports, key.as_slice(), record.clone());
                self.decoded_imports
                    .written(&key, record, change.process.clone());
                self.write_events(changes, LoggedEvents::new(&change.events));
                self.import_counts.moved(
                    supplier,
                    current.as_ref().map(|process| process.state),
                    change.process.state,
                );
                return Ok(change);
            }
            Err(StoreError::NumbersExhausted.into())
        })
    }
}

impl SledStore {
    /// The records in `tree` of the supplier's import processes from after `after` on
    /// ([`Self::imports`] or [`Self::import_listings`]), each read by `read`.
    fn import_range<T: 'static>(
        tree: &sled::Tree,
        supplier: &str,
        after: Option<&str>,
        read: RecordReader<T>,
    ) -> Box<dyn Iterator<Item = Result<T, StoreError>> + Send> {
        let start = match after {
            // The first key greater than `supplier\0after` and every key beginning with it.
            Some(after) => {
                let mut key = pair_key(supplier, after);
                key.push(SEPARATOR);
                key
            }
            None => pair_key(supplier, ""),
        };
        let mut end = supplier.as_bytes().to_vec();
        end.push(SEPARATOR + 1);
        Box::new(tree.range(start..end).map(move |entry| {
            let (key, value) = entry?;
            read(&key, &value)
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::outbox::Outbox;
    use crate::events::stream_record::StreamRecord;
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
            std::sync::Arc<dyn crate::events::outbox::Outbox>,
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

    #[tokio::test]
    async fn the_outbox_hands_out_stream_records_and_publication_is_recorded_per_run() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SledStore::open(dir.path()).expect("store");
        let events: Vec<Event> = (0..10).map(event).collect();
        store.publish_events(&events).await.expect("outbox");

        let pending = store
            .pending_events(100, &HashSet::new())
            .await
            .expect("pending");
        assert_eq!(pending.len(), 10);
        let ids: Vec<&str> = pending
            .iter()
            .map(|event| event.record.id().expect("id"))
            .collect();
        let expected: Vec<&str> = events.iter().map(|event| event.id.as_str()).collect();
        assert_eq!(ids, expected, "in log order, with their ids");

        // Events the relay already holds are left out.
        let seqs: Vec<u64> = pending.iter().map(|event| event.seq).collect();
        let skip: HashSet<u64> = seqs[..4].iter().copied().collect();
        let rest = store.pending_events(3, &skip).await.expect("pending");
        assert_eq!(
            rest.iter().map(|event| event.seq).collect::<Vec<_>>(),
            seqs[4..7]
        );

        // Two runs with a gap: 0,1,2 and 5,6.
        let at = DateTime::parse_from_rfc3339("2026-11-22T10:00:00.123Z")
            .expect("time")
            .with_timezone(&Utc);
        let published = [seqs[6], seqs[0], seqs[2], seqs[1], seqs[5]];
        store.mark_published(&published, at).await.expect("mark");
        assert_eq!(store.published_runs.len(), 2, "one record per run");
        assert_eq!(store.outbox_len().await.expect("len"), 5);

        let log = store.events_after(None, 100).await.expect("log");
        let published_at: Vec<bool> = log
            .iter()
            .map(|event| event.published_at == Some(at))
            .collect();
        assert_eq!(
            published_at,
            [
                true, true, true, false, false, true, true, false, false, false
            ]
        );
        assert!(
            log.iter()
                .all(|e| e.published_at.is_none() || e.published_at == Some(at))
        );
    }

    #[tokio::test]
    async fn an_event_is_found_by_its_id_from_a_few_records_per_change() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SledStore::open(dir.path()).expect("store");
        // Two changes whose events were made in the same millisecond, and one that spans
        // two milliseconds: the records of a millisecond hold several changes' events.
        let made_at = |millisecond: u64, number: usize| {
            let mut event = event(number);
            let random = [number as u8; 10];
            event.id = uuid::Builder::from_unix_timestamp_millis(millisecond, &random)
                .into_uuid()
                .to_string();
            event
        };
        let first: Vec<Event> = (0..3).map(|n| made_at(1_700_000_000_000, n)).collect();
        let second: Vec<Event> = vec![
            made_at(1_700_000_000_000, 3),
            made_at(1_700_000_000_001, 4),
            made_at(1_700_000_000_001, 5),
        ];
        // Ids Ferry does not make: on their own, in the tree versions before kept every id in.
        let mut unusual = event(6);
        unusual.id = "not-a-uuid".to_owned();
        let mut upper = event(7);
        upper.id = uuid::Uuid::now_v7().to_string().to_uppercase();
        let batch: Vec<Event> = (8..208).map(event).collect();
        for change in [&first[..], &second[..], &[unusual, upper][..], &batch[..]] {
            store.publish_events(change).await.expect("stored");
        }
        // What a version before wrote for an event of its own.
        store
            .event_ids
            .insert("0190aaaa-0000-7000-8000-000000000000", &7_u64.to_be_bytes())
            .expect("insert");

        let log = store.events_after(None, 1000).await.expect("log");
        assert_eq!(log.len(), 208);
        for logged in &log {
            assert_eq!(
                store.event_seq(&logged.id).await.expect("seq"),
                Some(logged.seq),
                "{}",
                logged.id
            );
        }
        assert_eq!(
            store
                .event_seq("0190aaaa-0000-7000-8000-000000000000")
                .await
                .expect("seq"),
            Some(7)
        );
        // An id is its exact text; an id never stored is not found.
        let shouted = log[0].id.to_uppercase();
        assert_eq!(store.event_seq(&shouted).await.expect("seq"), None);
        let unknown = uuid::Builder::from_unix_timestamp_millis(1_700_000_000_000, &[9; 10])
            .into_uuid()
            .to_string();
        assert_eq!(store.event_seq(&unknown).await.expect("seq"), None);
        assert_eq!(store.event_seq("").await.expect("seq"), None);

        // Writes: one record per change and millisecond, not one per event.
        assert_eq!(
            store.event_ids.len(),
            2 + 1,
            "the two unusual ids and the old one"
        );
        let batch_milliseconds: HashSet<[u8; 6]> = batch
            .iter()
            .map(|event| {
                let uuid = uuid::Uuid::parse_str(&event.id).expect("a UUID");
                <[u8; 6]>::try_from(&uuid.as_bytes()[..6]).expect("six bytes")
            })
            .collect();
        assert_eq!(
            store.event_ids_by_millisecond.len(),
            1 + 2 + batch_milliseconds.len(),
            "the first change's millisecond, the second's two, the batch's"
        );
    }

    #[tokio::test]
    async fn the_log_keeps_a_changes_events_in_groups_and_reads_from_inside_one() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SledStore::open(dir.path()).expect("store");
        let single = event(0);
        store
            .publish_events(std::slice::from_ref(&single))
            .await
            .expect("one");
        let events: Vec<Event> = (1..=150).map(event).collect();
        store.publish_events(&events).await.expect("a batch");
        // What an earlier version wrote: one event's JSON per record.
        let mut old = event(151);
        old.seq = 5_000_000;
        store
            .events
            .insert(old.seq.to_be_bytes(), encode(&old))
            .expect("insert");
        // What the version before compressed groups wrote: a group of stream records.
        let uncompressed: Vec<Event> = (152..=154).map(event).collect();
        let stored: Vec<StreamRecord> = uncompressed.iter().map(StreamRecord::encode).collect();
        store
            .events
            .insert(
                6_000_000u64.to_be_bytes(),
                crate::store::sled::event_log::tests::uncompressed_group(&stored),
            )
            .expect("insert");
        assert_eq!(
            store.events.len(),
            1 + 3 + 1 + 1,
            "the single event, 150 in groups of 64, 64 and 22, the old records"
        );

        let log = store.events_after(None, 1000).await.expect("log");
        let ids: Vec<&str> = log.iter().map(|event| event.id.as_str()).collect();
        let expected: Vec<&str> = std::iter::once(single.id.as_str())
            .chain(events.iter().map(|event| event.id.as_str()))
            .chain(std::iter::once(old.id.as_str()))
            .chain(uncompressed.iter().map(|event| event.id.as_str()))
            .collect();
        assert_eq!(ids, expected);
        assert_eq!(
            log[152..].iter().map(|event| event.seq).collect::<Vec<_>>(),
            [6_000_000, 6_000_001, 6_000_002]
        );
        let seqs: Vec<u64> = log.iter().map(|event| event.seq).collect();
        assert!(
            seqs[1..=150].windows(2).all(|pair| pair[1] == pair[0] + 1),
            "a change's events have consecutive seqs: {seqs:?}"
        );
        assert_eq!(seqs[151], 5_000_000);
        for (seq, event) in seqs.iter().zip(&log).skip(60).take(10) {
            assert_eq!(store.event_seq(&event.id).await.expect("seq"), Some(*seq));
        }

        // From inside a group, across into the next.
        let page = store.events_after(Some(seqs[60]), 8).await.expect("page");
        assert_eq!(
            page.iter().map(|event| event.seq).collect::<Vec<_>>(),
            seqs[61..69]
        );
        assert_eq!(page[0].id, log[61].id);
        let last = store.events_after(Some(seqs[150]), 8).await.expect("page");
        assert_eq!(last.len(), 4);
        assert_eq!(last[0].id, old.id);
        // From inside an uncompressed group.
        let inside = store.events_after(Some(6_000_000), 8).await.expect("page");
        assert_eq!(
            inside
                .iter()
                .map(|event| event.id.as_str())
                .collect::<Vec<_>>(),
            [uncompressed[1].id.as_str(), uncompressed[2].id.as_str()]
        );
    }

    #[tokio::test]
    async fn records_of_earlier_layouts_leave_the_log_and_an_earlier_outbox_holds_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SledStore::open(dir.path()).expect("store");
        let made = Utc::now() - chrono::Duration::hours(2);
        let old = |number| Event {
            time: made,
            ..event(number)
        };
        // What earlier versions wrote: an event's JSON alone (10), an uncompressed group
        // (11-13), each one's publication on its own, and an event waiting in the outbox (14).
        store
            .events
            .insert(10u64.to_be_bytes(), encode(&old(10)))
            .expect("insert");
        let group: Vec<StreamRecord> = (11..=13).map(|n| StreamRecord::encode(&old(n))).collect();
        store
            .events
            .insert(
                11u64.to_be_bytes(),
                crate::store::sled::event_log::tests::uncompressed_group(&group),
            )
            .expect("insert");
        for seq in 10u64..=13 {
            store
                .published
                .insert(seq.to_be_bytes(), made.to_rfc3339().as_bytes())
                .expect("insert");
        }
        let waiting = old(14);
        for tree in [&store.events, &store.outbox] {
            tree.insert(14u64.to_be_bytes(), encode(&waiting))
                .expect("insert");
        }
        store
            .mark_published(&[10, 11, 12, 13], made)
            .await
            .expect("marked");

        let now = Utc::now();
        assert_eq!(store.prune_events(now, 100).await.expect("pruned"), 4);
        let log = store.events_after(None, 100).await.expect("log");
        assert_eq!(log.len(), 1);
        assert_eq!(log[0].id, waiting.id, "the outbox's event holds the log");
        assert_eq!(
            store.published.len(),
            0,
            "their publication times went with them"
        );
        assert_eq!(store.prune_events(now, 100).await.expect("pruned"), 0);

        store.mark_published(&[14], now).await.expect("marked");
        assert!(store.outbox.is_empty());
        assert_eq!(store.prune_events(now, 100).await.expect("pruned"), 1);
        assert!(store.events.is_empty());
        assert!(store.published_runs.is_empty());
    }

    #[tokio::test]
    async fn outbox_records_of_the_json_layout_are_still_published() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SledStore::open(dir.path()).expect("store");
        let mut old = event(1);
        old.seq = 7;
        // What an earlier version wrote: the event's JSON in the outbox.
        store
            .outbox
            .insert(7u64.to_be_bytes(), encode(&old))
            .expect("insert");
        let pending = store
            .pending_events(10, &HashSet::new())
            .await
            .expect("pending");
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0].seq, 7);
        assert_eq!(pending[0].record, StreamRecord::encode(&old));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn imports_of_a_directory_without_listings_are_listed_after_the_upgrade() {
        use crate::domain::account::{AccountLimits, read_account};
        use futures_util::TryStreamExt;
        let dir = tempfile::tempdir().expect("temp dir");
        let processes: Vec<ImportProcess> = (0..3)
            .map(|index| {
                let body = json!({"import_supplier": "OLD_CO",
                                  "external_account_number": format!("ACC-{index}")});
                let payload =
                    read_account(body, AccountLimits { max_items: 100 }).expect("an account");
                ImportProcess::stage(None, payload, None, Utc::now())
                    .expect("staged")
                    .0
            })
            .collect();
        {
            // What an earlier version left: the processes, and no listing of them.
            let db = sled::open(dir.path()).expect("sled");
            let imports = db.open_tree("imports").expect("tree");
            for process in &processes {
                imports
                    .insert(
                        pair_key("OLD_CO", &process.external_account_number),
                        encode(process),
                    )
                    .expect("insert");
            }
            db.flush().expect("flush");
        }
        let expected: Vec<ImportListing> = processes.iter().map(ImportListing::of).collect();
        for _ in 0..2 {
            let store = SledStore::open(dir.path()).expect("store");
            let listed: Vec<ImportListing> = store
                .import_listings("OLD_CO")
                .try_collect()
                .await
                .expect("the listings");
            assert_eq!(listed, expected);
            assert_eq!(
                store.import_listing("OLD_CO", "ACC-1").await.expect("read"),
                Some(expected[1].clone())
            );
        }
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

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[expect(
        clippy::await_holding_lock,
        reason = "the awaits are `poll!`s, which return at once; the journal's own thread is the one that waits on the lock, never a task"
    )]
    async fn a_change_to_a_process_reads_the_change_before_it_even_before_sled_holds_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SledStore::open(dir.path()).expect("store");
        crate::store::contract::staged(&store, "OLD_CO", "ACC-1", None).await;
        // Read once more, so that the process is kept decoded and verified.
        let staged = store
            .import_process("OLD_CO", "ACC-1")
            .await
            .expect("read")
            .expect("staged");

        // A change journaled and not yet made in sled (the writer is held back)...
        let held = store.journal.hold_rounds();
        let changed_at = staged.updated_at + chrono::Duration::seconds(1);
        let mut change = |current: Option<&ImportProcess>| {
            let mut process = current.cloned().expect("the staged process");
            process.updated_at = changed_at;
            Ok(ImportChange::process(process))
        };
        let mut first = store.change_import("OLD_CO", "ACC-1", &mut change);
        assert!(
            futures_util::poll!(&mut first).is_pending(),
            "journaled, not yet durable"
        );
        // ...is what the next change to the process reads (not the copy kept decoded, not
        // sled's).
        let mut seen = None;
        let mut read_again = |current: Option<&ImportProcess>| {
            let process = current.cloned().expect("the process");
            seen = Some(process.updated_at);
            Ok(ImportChange::process(process))
        };
        let mut second = store.change_import("OLD_CO", "ACC-1", &mut read_again);
        assert!(futures_util::poll!(&mut second).is_pending());
        drop(held);
        first.await.expect("first change");
        second.await.expect("second change");
        assert_eq!(seen, Some(changed_at));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[expect(
        clippy::await_holding_lock,
        reason = "the awaits are `poll!`s, which return at once; the journal's own thread is the one that waits on the lock, never a task"
    )]
    async fn a_component_another_plugin_was_just_given_is_kept_before_sled_holds_that() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SledStore::open(dir.path()).expect("store");
        let plugin = crate::store::contract::plugin_of;
        let (first, second) = (b"first".as_slice(), b"second".as_slice());
        store
            .put_plugin(&plugin("OLD_CO", first), first)
            .await
            .expect("installed");
        // NEW_CO given the first component, journaled and not yet made in sled...
        let held = store.journal.hold_rounds();
        let given = plugin("NEW_CO", first);
        let mut new_co = store.put_plugin(&given, first);
        assert!(futures_util::poll!(&mut new_co).is_pending());
        // ...is seen when OLD_CO's plugin is replaced: the first component stays.
        let replaced = plugin("OLD_CO", second);
        let mut old_co = store.put_plugin(&replaced, second);
        assert!(futures_util::poll!(&mut old_co).is_pending());
        drop(held);
        new_co.await.expect("NEW_CO");
        old_co.await.expect("OLD_CO");
        let sha256 = crate::plugins::sha256_hex(first);
        assert_eq!(
            store
                .plugin_component(&sha256)
                .await
                .expect("read")
                .as_deref(),
            Some(first)
        );
    }

    #[test]
    fn runs_join_consecutive_numbers_only() {
        assert_eq!(consecutive_runs(&[]), []);
        assert_eq!(
            consecutive_runs(&[1, 2, 3, 5, 7, 8, u64::MAX]),
            [(1, 3), (5, 5), (7, 8), (u64::MAX, u64::MAX)]
        );
    }
}
