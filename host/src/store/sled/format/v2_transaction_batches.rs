//! Version 2: an account's imported transactions are kept in batch records, each transaction
//! with its ledger entry, and every batch record is compressed.
//!
//! Version 1 may hold transactions one record each (`account_Transactions`, keyed by account
//! and transaction id), some with their ledger entry inside (`ledger_entry`), the others with
//! it kept apart (`account_LedgerEntries`, keyed by account and entry id); and batch records
//! written uncompressed (the JSON array itself, first byte `[`). This step writes each
//! account's records of one transaction as batch records (at most [`BATCH_MAX`] transactions
//! each, in ledger-entry order, each with its entry), compresses the batch records written
//! uncompressed, and drops both older trees.
//!
//! Run again after a crash, it finds the batches it wrote already there (their keys are the
//! same) and the entries of transactions already moved in them. An entry kept apart that
//! belongs to no transaction of its account was never written by Ferry: the step stops on it
//! rather than lose it.

use super::drop_tree;
use crate::domain::ledger::{LedgerEntry, Transaction};
use crate::domain::storage::StoreError;
use crate::store::sled::accounts::{AccountTable, KeptLedgerEntry, TransactionRecord};
use crate::store::sled::codec::{corrupt_record, decode, pair_key, split_pair_key};
use crate::store::sled::transaction_index::{
    batch_key, decode_batch, encode_batch, encode_batch_json, is_compressed_batch,
};
use sled::IVec;
use std::collections::{BTreeMap, HashSet};

/// The tree of version 1 in which each transaction was a record of its own.
pub(super) const OWN_TRANSACTIONS_TREE: &str = "account_Transactions";
/// The tree of version 1 in which ledger entries were kept apart from their transactions.
pub(super) const LEDGER_ENTRIES_TREE: &str = "account_LedgerEntries";

/// At most this many transactions go to one batch record written by this step: what one
/// request may add at most, so that no record is larger than the ones units write.
const BATCH_MAX: usize = 1000;

/// A transaction as version 1 kept it on its own: the transaction, and its ledger entry when
/// the record holds it (read apart: [`KeptLedgerEntry`]).
struct OwnRecord {
    transaction: Transaction,
    ledger_entry: Option<LedgerEntry>,
}

/// A transaction on its way to a batch record, with its ledger entry (none only for a
/// transaction version 1 kept without one).
struct Paired {
    transaction: Transaction,
    ledger_entry: Option<LedgerEntry>,
}

pub(super) fn upgrade(db: &sled::Db) -> Result<(), StoreError> {
    let batches = db.open_tree(AccountTable::TransactionBatches.tree_name())?;
    compress_batches(&batches)?;
    let own = db.open_tree(OWN_TRANSACTIONS_TREE)?;
    let apart = db.open_tree(LEDGER_ENTRIES_TREE)?;
    // One account at a time: its records of one transaction each, and its entries apart.
    for_each_account(&own, |number, records| {
        let records = records
            .iter()
            .map(|(key, value)| {
                Ok(OwnRecord {
                    transaction: decode(key, value)?,
                    ledger_entry: decode::<KeptLedgerEntry>(key, value)?.ledger_entry,
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        let mut entries = Vec::new();
        for entry in apart.scan_prefix(pair_key(number, "")) {
            let (key, value) = entry?;
            entries.push(decode(&key, &value)?);
        }
        let transactions = paired(number, records, entries, &batches)?;
        write_batches(&batches, number, &transactions)
    })?;
    // The entries apart of accounts with no record of one transaction left: each must be in
    // a batch already (moved by this step before a crash).
    for_each_account(&apart, |number, entries| {
        if own.scan_prefix(pair_key(number, "")).next().is_some() {
            return Ok(());
        }
        let entries = entries
            .iter()
            .map(|(key, value)| decode(key, value))
            .collect::<Result<Vec<LedgerEntry>, StoreError>>()?;
        paired(number, Vec::new(), entries, &batches).map(drop)
    })?;
    // The batches durable before the records they replace go.
    batches.flush()?;
    drop_tree(db, OWN_TRANSACTIONS_TREE)?;
    drop_tree(db, LEDGER_ENTRIES_TREE)?;
    Ok(())
}

/// Writes account `number`'s `transactions` as batch records of at most [`BATCH_MAX`], each
/// keyed by its first transaction (the same keys, run again).
fn write_batches(
    batches: &sled::Tree,
    number: &str,
    transactions: &[Paired],
) -> Result<(), StoreError> {
    for chunk in transactions.chunks(BATCH_MAX) {
        let Some(first) = chunk.first() else {
            continue;
        };
        let first_entry = first.ledger_entry.as_ref().map_or(0, |entry| entry.id);
        let key = pair_key(
            number,
            &batch_key(first_entry, &first.transaction.transaction_id),
        );
        let records: Vec<TransactionRecord<'_>> = chunk
            .iter()
            .map(|paired| TransactionRecord {
                transaction: &paired.transaction,
                ledger_entry: paired.ledger_entry.as_ref(),
            })
            .collect();
        batches.insert(key, encode_batch(&records))?;
    }
    Ok(())
}

/// Calls `visit` with each account's number and its records in `tree` (keys `number\0…`),
/// one account at a time, in key order.
fn for_each_account(
    tree: &sled::Tree,
    mut visit: impl FnMut(&str, &[(IVec, IVec)]) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let mut current: Option<(String, Vec<(IVec, IVec)>)> = None;
    for record in tree.iter() {
        let (key, value) = record?;
        let (number, _) = split_pair_key(&key).ok_or_else(|| not_a_pair(&key))?;
        let number = String::from_utf8_lossy(number).into_owned();
        match &mut current {
            Some((at, records)) if *at == number => records.push((key, value)),
            _ => {
                if let Some((at, records)) = current.take() {
                    visit(&at, &records)?;
                }
                current = Some((number, vec![(key, value)]));
            }
        }
    }
    match current {
        Some((at, records)) => visit(&at, &records),
        None => Ok(()),
    }
}

/// Rewrites, compressed, the batch records written uncompressed.
fn compress_batches(batches: &sled::Tree) -> Result<(), StoreError> {
    for record in batches.iter() {
        let (key, value) = record?;
        if !is_compressed_batch(&value) {
            batches.insert(key, encode_batch_json(&value))?;
        }
    }
    Ok(())
}

/// The transactions account `number` kept one record each, each with its ledger entry (from
/// the record, or else the entry kept apart for it), in ledger-entry order. `entries` are the
/// entries kept apart; each must be some transaction's, here or in a batch already.
fn paired(
    number: &str,
    records: Vec<OwnRecord>,
    entries: Vec<LedgerEntry>,
    batches: &sled::Tree,
) -> Result<Vec<Paired>, StoreError> {
    let mut apart: BTreeMap<u64, LedgerEntry> =
        entries.into_iter().map(|entry| (entry.id, entry)).collect();
    let mut transactions: Vec<Paired> = records
        .into_iter()
        .map(|record| {
            let ledger_entry = record
                .ledger_entry
                .or_else(|| entry_of(&record.transaction, &apart).and_then(|id| apart.remove(&id)));
            Paired {
                transaction: record.transaction,
                ledger_entry,
            }
        })
        .collect();
    if !apart.is_empty() {
        let batched = batched_entry_ids(number, batches)?;
        if let Some(orphan) = apart.keys().find(|id| !batched.contains(id)) {
            return Err(corrupt_record(
                &pair_key(number, &format!("{orphan:020}")),
                "a ledger entry kept apart belongs to no transaction of its account",
            ));
        }
    }
    transactions.sort_by(|a, b| {
        let entry = |t: &Paired| t.ledger_entry.as_ref().map(|entry| entry.id);
        entry(a).cmp(&entry(b)).then_with(|| {
            a.transaction
                .transaction_id
                .cmp(&b.transaction.transaction_id)
        })
    });
    Ok(transactions)
}

/// The id of the entry kept apart for `transaction`: the one it names, or else the one that
/// names it.
fn entry_of(transaction: &Transaction, apart: &BTreeMap<u64, LedgerEntry>) -> Option<u64> {
    transaction
        .ledger_entry_id
        .filter(|id| apart.contains_key(id))
        .or_else(|| {
            apart
                .values()
                .find(|entry| entry.transaction_id == transaction.transaction_id)
                .map(|entry| entry.id)
        })
}

/// The ids of the ledger entries account `number`'s batch records hold.
fn batched_entry_ids(number: &str, batches: &sled::Tree) -> Result<HashSet<u64>, StoreError> {
    let mut ids = HashSet::new();
    for record in batches.scan_prefix(pair_key(number, "")) {
        let (key, value) = record?;
        let kept: Vec<KeptLedgerEntry> = decode_batch(&key, &value)?;
        ids.extend(
            kept.into_iter()
                .filter_map(|kept| kept.ledger_entry.map(|entry| entry.id)),
        );
    }
    Ok(ids)
}

fn not_a_pair(key: &[u8]) -> StoreError {
    corrupt_record(key, "not an account's record key")
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{fixture, transaction};
    use super::*;
    use crate::domain::storage::AccountStore;
    use crate::store::sled::SledStore;
    use crate::store::sled::account_unit::tests::assert_kept;

    #[tokio::test]
    async fn transactions_of_one_record_each_and_entries_apart_are_read_from_batches() {
        let dir = fixture("v1-transactions");
        let store = SledStore::open(dir.path()).expect("upgraded");
        let posted: Vec<_> = [("T-old", 5), ("T-inside", 6), ("T-plain", 7), ("T-new", 9)]
            .into_iter()
            .map(|(id, entry)| transaction(id, entry))
            .collect();
        let (transactions, entries): (Vec<_>, Vec<_>) = posted.iter().cloned().unzip();
        let records = store.read_account_records("A-00000001").expect("records");
        assert_eq!(records.transactions, transactions);
        assert_eq!(records.ledger_entries, entries);
        let (mut unnamed, unnamed_entry) = transaction("T-unnamed", 3);
        unnamed.ledger_entry_id = None;
        let records = store.read_account_records("A-00000002").expect("records");
        assert_eq!(records.transactions, std::slice::from_ref(&unnamed));
        assert_eq!(records.ledger_entries, std::slice::from_ref(&unnamed_entry));

        // Found by id, and refused again, wherever version 1 kept them.
        let mut unit = store.account_unit("A-00000001").await.expect("a unit");
        for (kept, entry) in &posted {
            assert_kept(unit.as_mut(), kept, entry).await;
        }
        drop(unit);
        let mut unit = store.account_unit("A-00000002").await.expect("a unit");
        assert_kept(unit.as_mut(), &unnamed, &unnamed_entry).await;
        drop(unit);
        drop(store);

        let db = sled::open(dir.path()).expect("sled");
        let names = db.tree_names();
        for gone in [OWN_TRANSACTIONS_TREE, LEDGER_ENTRIES_TREE] {
            assert!(
                !names.iter().any(|name| name.as_ref() == gone.as_bytes()),
                "{gone}"
            );
        }
        let batches = db
            .open_tree(AccountTable::TransactionBatches.tree_name())
            .expect("tree");
        for record in batches.iter() {
            let (key, value) = record.expect("read");
            assert!(is_compressed_batch(&value), "{key:?}");
        }
    }

    #[test]
    fn the_step_run_again_over_its_own_batches_writes_them_once() {
        let done = fixture("v1-transactions");
        let db = sled::open(done.path()).expect("sled");
        upgrade(&db).expect("upgraded");
        let batches = db
            .open_tree(AccountTable::TransactionBatches.tree_name())
            .expect("tree");
        let written: Vec<_> = batches.iter().collect::<Result<_, _>>().expect("read");

        // A crash after the batches were written and before the older trees went.
        let half = fixture("v1-transactions");
        let again = sled::open(half.path()).expect("sled");
        let half_batches = again
            .open_tree(AccountTable::TransactionBatches.tree_name())
            .expect("tree");
        for (key, value) in &written {
            half_batches.insert(key, value).expect("insert");
        }
        upgrade(&again).expect("upgraded again");
        let rewritten: Vec<_> = half_batches.iter().collect::<Result<_, _>>().expect("read");
        assert_eq!(rewritten, written);
    }

    #[test]
    fn an_entry_apart_that_no_transaction_has_stops_the_step() {
        let dir = fixture("v1-transactions");
        let db = sled::open(dir.path()).expect("sled");
        let (_, stray) = transaction("T-nowhere", 42);
        db.open_tree(LEDGER_ENTRIES_TREE)
            .expect("tree")
            .insert(
                pair_key("A-00000001", &format!("{:020}", 42)),
                crate::store::sled::codec::encode(&stray),
            )
            .expect("insert");
        let error = upgrade(&db).expect_err("refused");
        assert!(error.to_string().contains("no transaction"), "{error}");
        assert!(
            db.tree_names()
                .iter()
                .any(|name| name.as_ref() == OWN_TRANSACTIONS_TREE.as_bytes()),
            "nothing dropped"
        );
    }
}
