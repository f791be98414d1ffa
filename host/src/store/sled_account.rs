//! An account's records on sled: one tree per kind of record, keyed by the platform account
//! number and the record's own key, and the units of work that change them.
//!
//! A unit holds its account's lock (one of a fixed set of stripes, by the number's hash) from
//! the moment it opens until it commits or is dropped, so two units of one account never
//! interleave and what a unit read stays true. It buffers its writes (reads see them) and
//! commits them with its events as one change of the journal ([`super::journal`]), then
//! waits for it to be durable.

use super::journal::Changes;
use super::sled_store::{EncodedEvent, SledStore, decode, encode, pair_key};
use crate::domain::events::Event;
use crate::domain::ledger::{AccountSummary, LedgerEntry, Transaction};
use crate::domain::meter_points::MeterPoint;
use crate::domain::notes::Note;
use crate::domain::payment_instruction::{PaymentInstruction, instruction_key};
use crate::domain::statements::Statement;
use crate::domain::storage::{AccountRecords, AccountUnit, StoreError};
use chrono::{DateTime, Utc};
use futures_util::future::BoxFuture;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use tokio::sync::{Mutex, OwnedMutexGuard};

/// The kinds of per-account records, one tree each (`account_<kind>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum AccountTable {
    /// Notes, keyed by their id, zero-padded (so they list in order).
    Notes,
    /// The creation dates of the notes of each dedupe key.
    NoteIndex,
    /// Imported transactions, keyed by the supplier's transaction id.
    Transactions,
    /// Ledger entries, keyed by their id, zero-padded.
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
    pub(super) const ALL: [AccountTable; 8] = [
        Self::Notes,
        Self::NoteIndex,
        Self::Transactions,
        Self::LedgerEntries,
        Self::Statements,
        Self::PaymentInstructions,
        Self::Summary,
        Self::MeterPoints,
    ];

    fn index(self) -> usize {
        self as usize
    }
}

/// The key of a numbered record: zero-padded, so that keys list in number order.
fn numbered(id: u64) -> String {
    format!("{id:020}")
}

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
    events: Vec<Event>,
    _lock: OwnedMutexGuard<()>,
}

impl SledAccountUnit {
    fn read<T: DeserializeOwned>(
        &self,
        table: AccountTable,
        key: &str,
    ) -> Result<Option<T>, StoreError> {
        if let Some(&index) = self.written.get(&(table, key.to_owned())) {
            let (_, key, bytes) = &self.writes[index];
            return decode(key.as_bytes(), bytes).map(Some);
        }
        let full = pair_key(&self.number, key);
        match self.store.account_tree(table).get(&full)? {
            Some(bytes) => decode(&full, &bytes).map(Some),
            None => Ok(None),
        }
    }

    /// Whether a record is at `key` (written by this unit or kept), without reading it.
    fn exists(&self, table: AccountTable, key: &str) -> Result<bool, StoreError> {
        if self.written.contains_key(&(table, key.to_owned())) {
            return Ok(true);
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
        ready(self.read(AccountTable::Transactions, id))
    }

    fn add_transaction<'a>(
        &'a mut self,
        transaction: &'a Transaction,
        entry: &'a LedgerEntry,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let added = self
            .insert(
                AccountTable::Transactions,
                "transaction",
                transaction.transaction_id.clone(),
                transaction,
            )
            .map(|()| self.write(AccountTable::LedgerEntries, numbered(entry.id), entry));
        ready(added)
    }

    fn note_dates<'a>(
        &'a mut self,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Vec<DateTime<Utc>>, StoreError>> {
        ready(
            self.read(AccountTable::NoteIndex, key)
                .map(Option::unwrap_or_default),
        )
    }

    fn add_note(
        &mut self,
        note: &Note,
        key: &str,
        dates: &[DateTime<Utc>],
    ) -> Result<(), StoreError> {
        self.write(AccountTable::Notes, numbered(note.id), note);
        self.write(AccountTable::NoteIndex, key.to_owned(), &dates);
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

    fn commit(self: Box<Self>) -> BoxFuture<'static, Result<(), StoreError>> {
        Box::pin(async move {
            let SledAccountUnit {
                store,
                number,
                writes,
                events,
                _lock,
                ..
            } = *self;
            if writes.is_empty() && events.is_empty() {
                return Ok(());
            }
            store.health.check()?;
            let large = writes.len() + events.len() >= LARGE_CHANGE_WRITES;
            let apply = || store.apply_account_writes(&number, writes, &events);
            if large {
                super::blocking::blocking(apply);
            } else {
                apply();
            }
            // Durable before the unit ends (and its lock with it).
            crate::domain::storage::Store::flush(&store).await
        })
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
                events: Vec::new(),
                _lock: lock,
            });
            Ok(unit)
        })
    }

    /// Commits a unit's writes and events as one change (blind writes, under the account's
    /// lock: nothing else writes these keys meanwhile). Everything is encoded before the
    /// commit lock is taken; under it, the events are given their seqs.
    fn apply_account_writes(
        &self,
        number: &str,
        writes: Vec<(AccountTable, String, Vec<u8>)>,
        events: &[Event],
    ) {
        let mut changes = Changes::default();
        for (table, key, bytes) in writes {
            changes.insert(self.account_tree(table), pair_key(number, &key), bytes);
        }
        let events: Vec<EncodedEvent> = events.iter().map(EncodedEvent::new).collect();
        self.journal
            .commit_blind(changes, |changes| self.write_events(changes, events));
    }

    fn account_tree(&self, table: AccountTable) -> &sled::Tree {
        &self.account_trees[table.index()]
    }

    /// Every record of one kind of account `number`, in key order.
    fn records<T: DeserializeOwned>(
        &self,
        number: &str,
        table: AccountTable,
    ) -> Result<Vec<T>, StoreError> {
        self.account_tree(table)
            .scan_prefix(pair_key(number, ""))
            .map(|entry| {
                let (key, value) = entry?;
                decode(&key, &value)
            })
            .collect()
    }

    pub(super) fn read_account_records(&self, number: &str) -> Result<AccountRecords, StoreError> {
        let mut transactions: Vec<Transaction> =
            self.records(number, AccountTable::Transactions)?;
        transactions.sort_by_key(|transaction| transaction.ledger_entry_id);
        Ok(AccountRecords {
            summary: self
                .records(number, AccountTable::Summary)?
                .into_iter()
                .next()
                .unwrap_or_default(),
            notes: self.records(number, AccountTable::Notes)?,
            transactions,
            ledger_entries: self.records(number, AccountTable::LedgerEntries)?,
            statements: self.records(number, AccountTable::Statements)?,
            payment_instructions: self.records(number, AccountTable::PaymentInstructions)?,
            meter_points: self.records(number, AccountTable::MeterPoints)?,
        })
    }

    pub(super) fn read_meter_points(&self, number: &str) -> Result<Vec<MeterPoint>, StoreError> {
        self.records(number, AccountTable::MeterPoints)
    }
}
