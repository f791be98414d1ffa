//! The platform accounts and their records on sled ([`AccountStore`]): one tree per kind of
//! record, keyed by the platform account number and the record's own key. Records are changed
//! through a unit of work ([`super::account_unit`]), and a migration's change writes a new
//! account's opening records ([`SledStore::write_opening`]) as its units would.

use super::SledStore;
use super::codec::{decode, encode, pair_key};
use super::journal::Changes;
use super::transaction_index::{batch_json, batch_key, encode_batch};
use crate::domain::import_process::PlatformAccount;
use crate::domain::ledger::{AccountSummary, LedgerEntry, Transaction};
use crate::domain::meter_points::MeterPoint;
use crate::domain::payment_instruction::instruction_key;
use crate::domain::storage::{
    AccountOpening, AccountRecords, AccountStore, AccountUnit, StoreError, StoreFuture,
};
use futures_util::future::BoxFuture;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// The kinds of per-account records, one tree each (`account_<kind>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum AccountTable {
    /// Notes, keyed by their id, zero-padded (so they list in order). Their dedupe index is
    /// derived from them, in memory ([`super::note_index`]).
    Notes,
    /// Historical statements, keyed by statement id.
    Statements,
    /// Payment instructions, keyed by vendor and reference.
    PaymentInstructions,
    /// One summary record per account (balance, latest statement), key `""`.
    Summary,
    /// The registration state of each meter point, keyed by MPAN / MPRN.
    MeterPoints,
    /// Imported transactions, one record per unit that added some (an array of
    /// [`TransactionRecord`]s, each transaction with its ledger entry, [`batch_key`]): found
    /// by transaction id through [`super::transaction_index`].
    TransactionBatches,
}

impl AccountTable {
    pub(super) const ALL: [AccountTable; 6] = [
        Self::Notes,
        Self::Statements,
        Self::PaymentInstructions,
        Self::Summary,
        Self::MeterPoints,
        Self::TransactionBatches,
    ];

    fn index(self) -> usize {
        self as usize
    }

    /// The name of the table's tree.
    pub(super) fn tree_name(self) -> String {
        format!("account_{self:?}")
    }
}

/// What a batch record keeps of a transaction: the transaction's own fields and its ledger
/// entry, one record for both. Read as a [`Transaction`], the entry is ignored;
/// [`KeptLedgerEntry`] reads the entry alone. Every transaction Ferry posts has an entry; one
/// kept without, by version 1 of the format, is kept so (`docs/STORAGE.md`).
#[derive(Serialize)]
pub(super) struct TransactionRecord<'a> {
    #[serde(flatten)]
    pub(super) transaction: &'a Transaction,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) ledger_entry: Option<&'a LedgerEntry>,
}

/// The ledger entry of a transaction record ([`TransactionRecord`]), read apart from the
/// transaction's own fields.
#[derive(Deserialize)]
pub(super) struct KeptLedgerEntry {
    #[serde(default)]
    pub(super) ledger_entry: Option<LedgerEntry>,
}

/// The key of a numbered record: zero-padded, so that keys list in number order.
pub(super) fn numbered(id: u64) -> String {
    format!("{id:020}")
}

/// The batch record of transactions added together with their ledger entries, in order: its
/// key and bytes (none: no transactions).
pub(super) fn batch_record<'a>(
    added: impl Iterator<Item = (&'a Transaction, &'a LedgerEntry)>,
) -> Option<(String, Vec<u8>)> {
    let records: Vec<TransactionRecord<'a>> = added
        .map(|(transaction, ledger_entry)| TransactionRecord {
            transaction,
            ledger_entry: Some(ledger_entry),
        })
        .collect();
    let first = records.first()?;
    let first_entry = first.ledger_entry.map_or(0, |entry| entry.id);
    let key = batch_key(first_entry, &first.transaction.transaction_id);
    Some((key, encode_batch(&records)))
}

impl AccountStore for SledStore {
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

    fn account_summary<'a>(&'a self, number: &'a str) -> StoreFuture<'a, AccountSummary> {
        let key = pair_key(number, "");
        let summary = self
            .account_tree(AccountTable::Summary)
            .get(&key)
            .map_err(StoreError::from)
            .and_then(|record| match record {
                Some(bytes) => decode(&key, &bytes),
                None => Ok(AccountSummary::default()),
            });
        Box::pin(std::future::ready(summary))
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
}

impl SledStore {
    /// Lists the writes of a new account's opening records, as its units of work would write
    /// them: the summary, one batch record of its transactions with their ledger entries, its
    /// notes, statements and payment instructions. The indexes kept in memory are read from
    /// them by the account's first unit.
    pub(super) fn write_opening(
        &self,
        changes: &mut Changes,
        number: &str,
        opening: &AccountOpening,
    ) {
        let mut writes = Vec::with_capacity(
            1 + opening.notes.len() + opening.statements.len() + opening.payment_instructions.len(),
        );
        writes.push((
            AccountTable::Summary,
            String::new(),
            encode(&opening.summary),
        ));
        if let Some((batch, bytes)) =
            batch_record(opening.transactions.iter().zip(&opening.ledger_entries))
        {
            writes.push((AccountTable::TransactionBatches, batch, bytes));
        }
        for note in &opening.notes {
            writes.push((AccountTable::Notes, numbered(note.id), encode(note)));
        }
        for statement in &opening.statements {
            writes.push((
                AccountTable::Statements,
                statement.statement_id.clone(),
                encode(statement),
            ));
        }
        for instruction in &opening.payment_instructions {
            writes.push((
                AccountTable::PaymentInstructions,
                instruction_key(&instruction.vendor, &instruction.reference),
                encode(instruction),
            ));
        }
        self.list_account_writes(changes, number, writes);
    }

    /// Lists `writes` of account `number`'s records in `changes`.
    pub(super) fn list_account_writes(
        &self,
        changes: &mut Changes,
        number: &str,
        writes: Vec<(AccountTable, String, Vec<u8>)>,
    ) {
        for (table, key, bytes) in writes {
            changes.insert(self.account_tree(table), pair_key(number, &key), bytes);
        }
    }

    pub(super) fn account_tree(&self, table: AccountTable) -> &sled::Tree {
        &self.account_trees[table.index()]
    }

    /// Every record of one kind of account `number`, in key order.
    pub(super) fn records<T: DeserializeOwned>(
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
        let mut transactions = Vec::new();
        let mut ledger_entries = Vec::new();
        for record in self
            .account_tree(AccountTable::TransactionBatches)
            .scan_prefix(pair_key(number, ""))
        {
            let (key, value) = record?;
            let batch = batch_json(&key, &value)?;
            transactions.extend(decode::<Vec<Transaction>>(&key, &batch)?);
            ledger_entries.extend(
                decode::<Vec<KeptLedgerEntry>>(&key, &batch)?
                    .into_iter()
                    .filter_map(|kept| kept.ledger_entry),
            );
        }
        transactions.sort_by_key(|transaction| transaction.ledger_entry_id);
        ledger_entries.sort_by_key(|entry| entry.id);
        Ok(AccountRecords {
            summary: self
                .records(number, AccountTable::Summary)?
                .into_iter()
                .next()
                .unwrap_or_default(),
            notes: self.records(number, AccountTable::Notes)?,
            transactions,
            ledger_entries,
            statements: self.records(number, AccountTable::Statements)?,
            payment_instructions: self.records(number, AccountTable::PaymentInstructions)?,
            meter_points: self.records(number, AccountTable::MeterPoints)?,
        })
    }

    pub(super) fn read_meter_points(&self, number: &str) -> Result<Vec<MeterPoint>, StoreError> {
        self.records(number, AccountTable::MeterPoints)
    }
}
