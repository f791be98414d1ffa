//! The imported accounts: the platform account each migration creates, the records kept on
//! it (its ledger, notes, statements, payment instructions, meter points) and the unit of work
//! through which every change to them is made.

use super::StoreFuture;
use super::error::StoreError;
use crate::domain::campaign::Counts;
use crate::domain::events::Event;
use crate::domain::import_process::PlatformAccount;
use crate::domain::ledger::{AccountSummary, LedgerEntry, Transaction};
use crate::domain::meter_points::MeterPoint;
use crate::domain::notes::Note;
use crate::domain::payment_instruction::PaymentInstruction;
use crate::domain::statements::Statement;
use chrono::{DateTime, Utc};
use futures_util::future::BoxFuture;
use std::collections::BTreeMap;

/// The platform accounts and what is kept on them.
pub trait AccountStore: Send + Sync {
    fn account<'a>(&'a self, number: &'a str) -> StoreFuture<'a, Option<PlatformAccount>>;
    /// `count` numbers never handed out before ([`AccountUnit::next_id`]'s), in increasing
    /// order: the ids of an account's opening records, made before the change that keeps them.
    fn new_ids(&self, count: usize) -> StoreFuture<'_, Vec<u64>>;
    /// Opens a unit of work on account `number`'s records, waiting for the one open on it.
    fn account_unit<'a>(
        &'a self,
        number: &'a str,
    ) -> BoxFuture<'a, Result<Box<dyn AccountUnit>, StoreError>>;
    /// Account `number`'s ledger summary, read without a unit of work (its default when
    /// nothing was posted): what a report reads of each account.
    fn account_summary<'a>(&'a self, number: &'a str) -> StoreFuture<'a, AccountSummary>;
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
}

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
    /// Moves the counters of `supplier` (the account's) by `counts` with this change.
    fn count(&mut self, supplier: &str, counts: &Counts) -> Result<(), StoreError>;
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

/// The records a migration opens a new account with: what its document carries (the ledger,
/// statements, notes, payment instructions), kept by the change that creates the account
/// ([`super::ImportChange::opening`]), as its units of work would keep them, with no unit of the
/// account before it. Ids come from [`AccountStore::new_ids`].
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
