//! An account's unit of work on sled ([`AccountUnit`]).
//!
//! A unit holds its account's lock (one of a fixed set of stripes, by the number's hash) from
//! the moment it opens until it commits or is dropped, so two units of one account never
//! interleave and what a unit read stays true. It buffers its writes (reads see them) and
//! commits them with its events as one change of the journal ([`super::journal`]), then
//! waits for it to be durable. The notes' and transactions' indexes it needs are taken from
//! the store's memory while it holds the lock, and given back once its change is durable.

use super::SledStore;
use super::accounts::{AccountTable, batch_record, numbered};
use super::codec::{decode, encode, pair_key};
use super::event_records::LoggedEvents;
use super::journal::{Changes, Journal};
use super::kept_indexes::TakenIndex;
use super::note_index::AccountNotes;
use super::transaction_index::{AccountTransactions, Location, decode_batch};
use crate::domain::campaign::Counts;
use crate::domain::events::Event;
use crate::domain::ledger::{AccountSummary, LedgerEntry, Transaction};
use crate::domain::meter_points::MeterPoint;
use crate::domain::notes::Note;
use crate::domain::payment_instruction::{PaymentInstruction, instruction_key};
use crate::domain::statements::Statement;
use crate::domain::storage::{AccountUnit, StoreError};
use chrono::{DateTime, Utc};
use futures_util::future::BoxFuture;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use tokio::sync::{Mutex, OwnedMutexGuard};

/// Writes of this many records or more are committed off the async worker
/// ([`super::blocking`]): encoding a large change for the journal takes milliseconds, which
/// the worker's other tasks would wait for.
const LARGE_CHANGE_WRITES: usize = 100;

/// How many locks the accounts share.
const LOCK_STRIPES: usize = 256;

/// The per-account locks: the lock of an account is the stripe its number hashes to.
#[derive(Debug)]
pub(super) struct AccountLocks(Vec<Arc<Mutex<()>>>);

impl Default for AccountLocks {
    fn default() -> Self {
        Self(
            (0..LOCK_STRIPES)
                .map(|_| Arc::new(Mutex::new(())))
                .collect(),
        )
    }
}

impl AccountLocks {
    async fn lock(&self, number: &str) -> OwnedMutexGuard<()> {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        number.hash(&mut hasher);
        let stripe = (hasher.finish() % LOCK_STRIPES as u64) as usize;
        self.0[stripe].clone().lock_owned().await
    }
}

/// One account's unit of work on sled.
struct SledAccountUnit {
    store: SledStore,
    number: String,
    /// Every write, in order (a key written twice is written twice).
    writes: Vec<(AccountTable, String, Vec<u8>)>,
    /// The last write of each key, for the unit's own reads.
    written: HashMap<(AccountTable, String), usize>,
    /// The keys this unit read and found no record at: nothing else writes them while it
    /// holds the account's lock, so inserting one there does not look again (a transaction is
    /// read before it is added: one sled lookup per transaction instead of two).
    absent: HashSet<(AccountTable, String)>,
    events: Vec<Event>,
    /// How the change moves its supplier's counters.
    counts: Option<(String, Counts)>,
    /// The account's notes' dedupe index, once a note was looked for, with the notes this unit
    /// added: given back to the store's [`super::note_index::NoteIndexes`] when the unit's
    /// change is durable.
    note_index: Option<TakenIndex<AccountNotes>>,
    /// The transactions this unit added, in order, with their ledger entries, and the position
    /// of each id: one batch record when the unit commits.
    added_transactions: Vec<(Transaction, LedgerEntry)>,
    added_ids: HashMap<String, usize>,
    /// The account's transaction index, once a transaction was looked for, with the batch this
    /// unit adds once it commits.
    transaction_index: Option<TakenIndex<AccountTransactions>>,
    /// The batch records this unit decoded, by their place in the index.
    decoded_batches: HashMap<u32, Vec<Transaction>>,
    _lock: OwnedMutexGuard<()>,
}

impl SledAccountUnit {
    fn read<T: DeserializeOwned>(
        &mut self,
        table: AccountTable,
        key: &str,
    ) -> Result<Option<T>, StoreError> {
        let at = (table, key.to_owned());
        if let Some(&index) = self.written.get(&at) {
            let (_, key, bytes) = &self.writes[index];
            return decode(key.as_bytes(), bytes).map(Some);
        }
        let full = pair_key(&self.number, key);
        match self.store.account_tree(table).get(&full)? {
            Some(bytes) => decode(&full, &bytes).map(Some),
            None => {
                self.absent.insert(at);
                Ok(None)
            }
        }
    }

    /// Whether a record is at `key` (written by this unit or kept), without reading it.
    fn exists(&self, table: AccountTable, key: &str) -> Result<bool, StoreError> {
        let at = (table, key.to_owned());
        if self.written.contains_key(&at) {
            return Ok(true);
        }
        if self.absent.contains(&at) {
            return Ok(false);
        }
        Ok(self
            .store
            .account_tree(table)
            .contains_key(pair_key(&self.number, key))?)
    }

    fn write<T: Serialize>(&mut self, table: AccountTable, key: String, value: &T) {
        self.written.insert((table, key.clone()), self.writes.len());
        self.writes.push((table, key, encode(value)));
    }

    /// The account's notes' dedupe index: the one the store keeps, or else read from its notes.
    fn note_index(&mut self) -> Result<&mut TakenIndex<AccountNotes>, StoreError> {
        let store = &self.store;
        store
            .note_indexes
            .taken(&mut self.note_index, &self.number, || {
                Ok(AccountNotes::from_notes(
                    store.records::<Note>(&self.number, AccountTable::Notes)?,
                ))
            })
    }

    /// The account's transaction index: the one the store keeps, or else read from its
    /// transactions.
    fn transaction_index(&mut self) -> Result<&mut TakenIndex<AccountTransactions>, StoreError> {
        let store = &self.store;
        store
            .transaction_indexes
            .taken(&mut self.transaction_index, &self.number, || {
                AccountTransactions::read(
                    &self.number,
                    store.account_tree(AccountTable::TransactionBatches),
                )
            })
    }

    /// The transaction `id` of the account: added by this unit, or stored.
    fn find_transaction(&mut self, id: &str) -> Result<Option<Transaction>, StoreError> {
        if let Some(&position) = self.added_ids.get(id) {
            return Ok(Some(self.added_transactions[position].0.clone()));
        }
        let mut places = self.transaction_index()?.index().get(id);
        let first = places.next();
        // Another place only if another of the account's ids shares this one's key.
        let more: Vec<Location> = places.collect();
        for Location { batch, position } in first.into_iter().chain(more) {
            let found = self
                .batch(batch)?
                .get(position as usize)
                .filter(|transaction| transaction.transaction_id == id)
                .cloned();
            if found.is_some() {
                return Ok(found);
            }
        }
        Ok(None)
    }

    /// The transactions of the index's `batch`th batch record, decoded once per unit.
    fn batch(&mut self, batch: u32) -> Result<&[Transaction], StoreError> {
        if !self.decoded_batches.contains_key(&batch) {
            let Some(key_part) = self
                .transaction_index()?
                .index()
                .batch_key(batch)
                .map(str::to_owned)
            else {
                return Ok(&[]);
            };
            let key = pair_key(&self.number, &key_part);
            let transactions = match self
                .store
                .account_tree(AccountTable::TransactionBatches)
                .get(&key)?
            {
                Some(bytes) => decode_batch(&key, &bytes)?,
                None => Vec::new(),
            };
            self.decoded_batches.insert(batch, transactions);
        }
        Ok(self.decoded_batches.get(&batch).map_or(&[], Vec::as_slice))
    }

    /// Writes the transactions this unit added as one batch record, and records them in the
    /// index (given back once durable).
    fn write_added_transactions(&mut self) -> Result<(), StoreError> {
        let Some((batch, bytes)) = batch_record(
            self.added_transactions
                .iter()
                .map(|(transaction, entry)| (transaction, entry)),
        ) else {
            return Ok(());
        };
        let added = std::mem::take(&mut self.added_transactions);
        self.added_ids.clear();
        self.transaction_index()?.change().add_batch(
            batch.clone(),
            added
                .iter()
                .map(|(transaction, _)| transaction.transaction_id.as_str()),
        );
        self.writes
            .push((AccountTable::TransactionBatches, batch, bytes));
        Ok(())
    }

    /// Writes `value` at `key` unless a record is there: [`StoreError::Duplicate`] if one is.
    fn insert<T: Serialize>(
        &mut self,
        table: AccountTable,
        what: &'static str,
        key: String,
        value: &T,
    ) -> Result<(), StoreError> {
        if self.exists(table, &key)? {
            return Err(StoreError::Duplicate { what, key });
        }
        self.write(table, key, value);
        Ok(())
    }
}

fn ready<'a, T: Send + 'a>(value: T) -> BoxFuture<'a, T> {
    Box::pin(std::future::ready(value))
}

impl AccountUnit for SledAccountUnit {
    fn summary(&mut self) -> BoxFuture<'_, Result<AccountSummary, StoreError>> {
        ready(
            self.read(AccountTable::Summary, "")
                .map(Option::unwrap_or_default),
        )
    }

    fn set_summary(&mut self, summary: &AccountSummary) -> Result<(), StoreError> {
        self.write(AccountTable::Summary, String::new(), summary);
        Ok(())
    }

    fn transaction<'a>(
        &'a mut self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Transaction>, StoreError>> {
        ready(self.find_transaction(id))
    }

    fn add_transaction<'a>(
        &'a mut self,
        transaction: &'a Transaction,
        entry: &'a LedgerEntry,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let id = &transaction.transaction_id;
        let added = match self.find_transaction(id) {
            Ok(Some(_)) => Err(StoreError::Duplicate {
                what: "transaction",
                key: id.clone(),
            }),
            Ok(None) => {
                self.added_ids
                    .insert(id.clone(), self.added_transactions.len());
                self.added_transactions
                    .push((transaction.clone(), entry.clone()));
                Ok(())
            }
            Err(error) => Err(error),
        };
        ready(added)
    }

    fn note_dates<'a>(
        &'a mut self,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Vec<DateTime<Utc>>, StoreError>> {
        ready(self.note_index().map(|index| index.index().dates(key)))
    }

    fn add_note(
        &mut self,
        note: &Note,
        key: &str,
        dates: &[DateTime<Utc>],
    ) -> Result<(), StoreError> {
        self.note_index()?.change().set(key, dates);
        self.write(AccountTable::Notes, numbered(note.id), note);
        Ok(())
    }

    fn has_statement<'a>(&'a mut self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        ready(self.exists(AccountTable::Statements, id))
    }

    fn add_statement<'a>(
        &'a mut self,
        statement: &'a Statement,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        ready(self.insert(
            AccountTable::Statements,
            "historical statement",
            statement.statement_id.clone(),
            statement,
        ))
    }

    fn payment_instruction<'a>(
        &'a mut self,
        vendor: &'a str,
        reference: &'a str,
    ) -> BoxFuture<'a, Result<Option<PaymentInstruction>, StoreError>> {
        ready(self.read(
            AccountTable::PaymentInstructions,
            &instruction_key(vendor, reference),
        ))
    }

    fn add_payment_instruction<'a>(
        &'a mut self,
        instruction: &'a PaymentInstruction,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        ready(self.insert(
            AccountTable::PaymentInstructions,
            "payment instruction",
            instruction_key(&instruction.vendor, &instruction.reference),
            instruction,
        ))
    }

    fn meter_point<'a>(
        &'a mut self,
        mpxn: &'a str,
    ) -> BoxFuture<'a, Result<Option<MeterPoint>, StoreError>> {
        ready(self.read(AccountTable::MeterPoints, mpxn))
    }

    fn set_meter_point(&mut self, point: &MeterPoint) -> Result<(), StoreError> {
        self.write(AccountTable::MeterPoints, point.mpxn.clone(), point);
        Ok(())
    }

    fn next_id(&mut self) -> BoxFuture<'_, Result<u64, StoreError>> {
        Box::pin(std::future::ready(Ok(self.store.next_id())))
    }

    fn enqueue(&mut self, event: Event) -> Result<(), StoreError> {
        self.events.push(event);
        Ok(())
    }

    fn count(&mut self, supplier: &str, counts: &Counts) -> Result<(), StoreError> {
        match &mut self.counts {
            Some((of, kept)) if of == supplier => kept.add_all(counts),
            _ => self.counts = Some((supplier.to_owned(), counts.clone())),
        }
        Ok(())
    }

    fn commit(self: Box<Self>) -> BoxFuture<'static, Result<(), StoreError>> {
        Box::pin(async move {
            let mut unit = *self;
            unit.write_added_transactions()?;
            let SledAccountUnit {
                store,
                number,
                writes,
                events,
                counts,
                note_index,
                transaction_index,
                _lock,
                ..
            } = unit;
            let counts = counts.filter(|(_, counts)| !counts.is_empty());
            // The indexes are true of what is stored once the change is durable; they go back
            // before the account's lock does, so that the next unit of the account finds them
            // (or, should they not be back yet, reads the records, the change among them). A
            // unit that failed, or whose future was dropped while it waited, lets them go.
            let give_back = || {
                if let Some(index) = note_index {
                    index.give_back();
                }
                if let Some(index) = transaction_index {
                    index.give_back();
                }
            };
            if writes.is_empty() && events.is_empty() && counts.is_none() {
                give_back();
                return Ok(());
            }
            store.health.check()?;
            let large = writes.len() + events.len() >= LARGE_CHANGE_WRITES;
            let apply = || store.apply_account_writes(&number, writes, &events, counts.as_ref());
            let record = if large {
                super::blocking::blocking(apply)
            } else {
                apply()
            };
            // Durable before the unit ends (and its lock with it), even if this future is
            // dropped while it waits: the change is in neither sled nor the overlay until
            // then, so a unit taking the lock earlier would not see it.
            let Some(record) = record else {
                give_back();
                return Ok(());
            };
            let held = HeldUntilDurable {
                lock: Some(_lock),
                journal: store.journal.clone(),
                record,
            };
            let durable = store
                .journal
                .durable(record)
                .await
                .map_err(|error| store.health.noted(error));
            if durable.is_ok() {
                give_back();
            }
            held.release();
            durable
        })
    }
}

/// An account's lock held by a committing unit until its change is durable. Dropped before
/// [`Self::release`] (the commit's future dropped while it waited: a client gone), it hands
/// the lock to a task that lets it go once the journal has made the change durable, or has
/// failed.
struct HeldUntilDurable {
    lock: Option<OwnedMutexGuard<()>>,
    journal: Arc<Journal>,
    record: u64,
}

impl HeldUntilDurable {
    /// The change is durable (or failed): the lock goes now.
    fn release(mut self) {
        self.lock = None;
    }
}

impl Drop for HeldUntilDurable {
    fn drop(&mut self) {
        let Some(lock) = self.lock.take() else {
            return;
        };
        let journal = self.journal.clone();
        let record = self.record;
        let wait = async move {
            // Whatever the outcome: a failed journal takes no more writes.
            let _ = journal.durable(record).await;
            drop(lock);
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(wait);
            }
            Err(_) => {
                std::thread::spawn(move || futures_executor::block_on(wait));
            }
        }
    }
}

impl SledStore {
    pub(super) fn open_account_unit(
        &self,
        number: &str,
    ) -> BoxFuture<'_, Result<Box<dyn AccountUnit>, StoreError>> {
        let number = number.to_owned();
        Box::pin(async move {
            let lock = self.account_locks.lock(&number).await;
            let unit: Box<dyn AccountUnit> = Box::new(SledAccountUnit {
                store: self.clone(),
                number,
                writes: Vec::new(),
                written: HashMap::new(),
                absent: HashSet::new(),
                events: Vec::new(),
                counts: None,
                note_index: None,
                added_transactions: Vec::new(),
                added_ids: HashMap::new(),
                transaction_index: None,
                decoded_batches: HashMap::new(),
                _lock: lock,
            });
            Ok(unit)
        })
    }

    /// Commits a unit's writes and events as one change (blind writes, under the account's
    /// lock: nothing else writes these keys meanwhile), with how it moves its supplier's
    /// `counts`. Everything is encoded before the commit lock is taken; under it, the events
    /// are given their seqs and the counters moved. The change's journal record (none:
    /// nothing to write).
    fn apply_account_writes(
        &self,
        number: &str,
        writes: Vec<(AccountTable, String, Vec<u8>)>,
        events: &[Event],
        counts: Option<&(String, Counts)>,
    ) -> Option<u64> {
        let mut changes = Changes::default();
        self.list_account_writes(&mut changes, number, writes);
        let events = LoggedEvents::new(events);
        self.journal.commit_blind(changes, |changes| {
            self.write_events(changes, events);
            if let Some((supplier, counts)) = counts {
                self.supplier_counts.moved(changes, supplier, counts);
            }
        })
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::AccountTable;
    use crate::domain::ledger::{LedgerEntry, Transaction};
    use crate::domain::notes::{Note, NoteSource};
    use crate::domain::storage::{AccountStore, AccountUnit, StoreError};
    use crate::store::contract::transaction;
    use crate::store::sled::SledStore;
    use crate::store::sled::codec::pair_key;
    use crate::store::sled::note_index::NoteIndexes;
    use crate::store::sled::transaction_index::TransactionIndexes;
    use std::sync::Arc;

    fn note(id: u64, body: &str) -> Note {
        Note {
            id,
            body: Some(body.into()),
            document_paths: Vec::new(),
            created_at: "2024-01-01T10:00:00Z".parse().expect("time"),
            is_pinned: false,
            unpin_at: None,
            source: NoteSource::Import,
            external_id: None,
            is_archived: false,
        }
    }

    /// Adds `note` as the domain does: its key's dates read, then the note added to them.
    async fn add(unit: &mut dyn AccountUnit, note: &Note) {
        let mut dates = unit.note_dates(&note.key()).await.expect("dates");
        dates.push(note.created_at);
        unit.add_note(note, &note.key(), &dates).expect("added");
    }

    /// `unit` finds `kept` by its id, and refuses it again.
    pub(in crate::store::sled) async fn assert_kept(
        unit: &mut dyn AccountUnit,
        kept: &Transaction,
        entry: &LedgerEntry,
    ) {
        assert_eq!(
            unit.transaction(&kept.transaction_id).await.expect("read"),
            Some(kept.clone())
        );
        assert!(matches!(
            unit.add_transaction(kept, entry).await,
            Err(StoreError::Duplicate { .. })
        ));
    }

    /// The transaction `id`, added to `account` by a unit of its own, committed.
    async fn add_committed(
        store: &SledStore,
        account: &str,
        id: &str,
    ) -> (Transaction, LedgerEntry) {
        let (added, entry) = transaction(id);
        let mut unit = store.account_unit(account).await.expect("a unit");
        unit.add_transaction(&added, &entry).await.expect("added");
        unit.commit().await.expect("committed");
        (added, entry)
    }

    async fn dates(store: &SledStore, account: &str, note: &Note) -> usize {
        let mut unit = store.account_unit(account).await.expect("a unit");
        unit.note_dates(&note.key()).await.expect("dates").len()
    }

    /// The number of records of `table` account `number` has.
    fn records_of(store: &SledStore, table: AccountTable, number: &str) -> usize {
        store
            .account_tree(table)
            .scan_prefix(pair_key(number, ""))
            .count()
    }

    #[tokio::test]
    async fn the_notes_index_is_read_again_from_the_notes_when_it_was_let_go() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut store = SledStore::open(dir.path()).expect("store");
        store.note_indexes = Arc::new(NoteIndexes::new(2));
        let (first, second) = (note(1, "first"), note(2, "second"));
        let mut unit = store.account_unit("A-1").await.expect("a unit");
        add(unit.as_mut(), &first).await;
        add(
            unit.as_mut(),
            &Note {
                id: 5,
                ..first.clone()
            },
        )
        .await;
        add(unit.as_mut(), &second).await;
        assert_eq!(unit.note_dates(&first.key()).await.expect("dates").len(), 2);
        unit.commit().await.expect("committed");
        // Past the bound of 2: another account's index lets A-1's go.
        let mut unit = store.account_unit("A-2").await.expect("a unit");
        add(unit.as_mut(), &note(3, "other")).await;
        unit.commit().await.expect("committed");
        assert_eq!(dates(&store, "A-1", &first).await, 2, "read from the notes");
        assert_eq!(dates(&store, "A-1", &second).await, 1);

        // A unit dropped uncommitted leaves nothing of its notes in the index.
        let unsaved = note(4, "unsaved");
        let mut unit = store.account_unit("A-1").await.expect("a unit");
        add(unit.as_mut(), &unsaved).await;
        drop(unit);
        assert_eq!(dates(&store, "A-1", &unsaved).await, 0);
        assert_eq!(dates(&store, "A-1", &first).await, 2);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[expect(
        clippy::await_holding_lock,
        reason = "the awaits are `poll!`s, which return at once; the journal's own thread is the one that waits on the lock, never a task"
    )]
    async fn a_commit_dropped_while_it_waits_keeps_the_account_until_its_change_is_durable() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SledStore::open(dir.path()).expect("store");
        let account = "A-00000001";
        let (added, entry) = transaction("T-1");
        let mut unit = store.account_unit(account).await.expect("a unit");
        unit.add_transaction(&added, &entry).await.expect("added");
        // The change is journaled at the first poll, which then waits for the writer; the
        // request it belongs to goes away (its future dropped) before the writer's round,
        // which the test holds back until then.
        let held = store.journal.hold_rounds();
        let mut commit = unit.commit();
        assert!(
            futures_util::poll!(&mut commit).is_pending(),
            "journaled, not yet durable"
        );
        drop(commit);
        // The next unit on the account sees the change: it waits for the lock until the
        // change is durable (with the lock at once, it would read sled without the change, and
        // a transaction sent again would be added twice).
        let mut next = Box::pin(store.account_unit(account));
        assert!(
            futures_util::poll!(&mut next).is_pending(),
            "the account stays locked until the change is durable"
        );
        drop(held);
        let mut next = next.await.expect("a unit");
        assert_kept(next.as_mut(), &added, &entry).await;
    }

    #[tokio::test]
    async fn a_units_transactions_are_one_record_found_by_id_after_a_reopen() {
        let dir = tempfile::tempdir().expect("temp dir");
        let account = "A-00000001";
        let added: Vec<_> = (1..=3)
            .map(|n| {
                let (mut kept, mut entry) = transaction(&format!("T-{n}"));
                entry.id = 10 + n;
                kept.ledger_entry_id = Some(entry.id);
                (kept, entry)
            })
            .collect();
        {
            let store = SledStore::open(dir.path()).expect("store");
            let mut unit = store.account_unit(account).await.expect("a unit");
            for (kept, entry) in &added {
                assert_eq!(
                    unit.transaction(&kept.transaction_id).await.expect("read"),
                    None
                );
                unit.add_transaction(kept, entry).await.expect("added");
            }
            // The unit's own reads see what it added, and refuse it twice.
            assert_kept(unit.as_mut(), &added[1].0, &added[1].1).await;
            unit.commit().await.expect("committed");
            assert_eq!(
                records_of(&store, AccountTable::TransactionBatches, account),
                1
            );
            let (_, record) = store
                .account_tree(AccountTable::TransactionBatches)
                .first()
                .expect("read")
                .expect("the batch record");
            assert_ne!(
                record.first(),
                Some(&b'['),
                "compressed, not the JSON array"
            );
            // Found through the index the unit gave back.
            let mut unit = store.account_unit(account).await.expect("a unit");
            assert_eq!(
                unit.transaction("T-3").await.expect("read"),
                Some(added[2].0.clone())
            );
        }
        // And through the index read again from the records.
        let store = SledStore::open(dir.path()).expect("store");
        let mut unit = store.account_unit(account).await.expect("a unit");
        for (kept, entry) in &added {
            assert_kept(unit.as_mut(), kept, entry).await;
        }
        assert_eq!(unit.transaction("T-4").await.expect("read"), None);
        drop(unit);
        let records = store.read_account_records(account).expect("records");
        let (transactions, entries): (Vec<_>, Vec<_>) = added.into_iter().unzip();
        assert_eq!(records.transactions, transactions);
        assert_eq!(records.ledger_entries, entries);
    }

    #[tokio::test]
    async fn the_transaction_index_holds_only_what_units_committed() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut store = SledStore::open(dir.path()).expect("store");
        store.transaction_indexes = Arc::new(TransactionIndexes::new(2));
        let (first, _) = add_committed(&store, "A-1", "T-1").await;

        // A unit dropped uncommitted (a dry run) leaves nothing of its transactions, and gives
        // the index back as it found it.
        let (unsaved, unsaved_entry) = transaction("T-unsaved");
        let mut unit = store.account_unit("A-1").await.expect("a unit");
        unit.add_transaction(&unsaved, &unsaved_entry)
            .await
            .expect("added");
        drop(unit);
        assert_eq!(store.transaction_indexes.weight(), 1, "given back");
        let mut unit = store.account_unit("A-1").await.expect("a unit");
        assert_eq!(unit.transaction("T-unsaved").await.expect("read"), None);
        assert_eq!(
            unit.transaction("T-1").await.expect("read"),
            Some(first.clone())
        );
        drop(unit);

        // Past the bound of 2, another account's index lets A-1's go: read again.
        let mut unit = store.account_unit("A-2").await.expect("a unit");
        for id in ["T-a", "T-b"] {
            let (kept, entry) = transaction(id);
            unit.add_transaction(&kept, &entry).await.expect("added");
        }
        unit.commit().await.expect("committed");
        assert!(store.transaction_indexes.take("A-1").is_none(), "let go");
        let mut unit = store.account_unit("A-1").await.expect("a unit");
        assert_eq!(unit.transaction("T-1").await.expect("read"), Some(first));
    }

    #[tokio::test]
    async fn a_transaction_whose_key_another_has_is_found_and_refused_again() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SledStore::open(dir.path()).expect("store");
        let (first, first_entry) = add_committed(&store, "A-1", "T-1").await;
        // T-1's place listed under T-9's key too, as if the two ids shared it.
        let mut index = store.transaction_indexes.take("A-1").expect("kept");
        let place = index.get("T-1").next().expect("T-1's place");
        index.add_under_key_of("T-9", place);
        store.transaction_indexes.give_back("A-1".into(), index);

        let (shared, shared_entry) = transaction("T-9");
        let mut unit = store.account_unit("A-1").await.expect("a unit");
        assert_eq!(
            unit.transaction("T-9").await.expect("read"),
            None,
            "the place under its key holds another transaction"
        );
        unit.add_transaction(&shared, &shared_entry)
            .await
            .expect("added");
        unit.commit().await.expect("committed");
        let mut unit = store.account_unit("A-1").await.expect("a unit");
        assert_kept(unit.as_mut(), &shared, &shared_entry).await;
        assert_kept(unit.as_mut(), &first, &first_entry).await;
    }
}
