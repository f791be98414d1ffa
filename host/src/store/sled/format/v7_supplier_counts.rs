//! Version 7: each supplier's counters (its campaign report's figures) are kept
//! ([`crate::store::sled::supplier_counts`]), moved by every change.
//!
//! Up to version 6 there were none, and no account kept its reconciliation. This step gives
//! every account with a ledger summary its reconciliation, from what is stored
//! ([`Reconciliation::of_stored`]: its document's declaration, and the transactions posted
//! since), then counts the counters as the changes would have moved them: every import
//! process (staged, its state, a failed dry run, its error's code) and every platform account
//! (its records and its reconciliation). It writes the counters whole, so that a step run
//! again after a crash counts again from the start rather than adding twice; a summary
//! already given its reconciliation keeps it.

use crate::domain::campaign::{Counts, Reconciliation, RecordCounts};
use crate::domain::import_process::{ImportProcess, PlatformAccount};
use crate::domain::ledger::{AccountSummary, Transaction};
use crate::domain::storage::StoreError;
use crate::store::sled::accounts::AccountTable;
use crate::store::sled::codec::{decode, encode, pair_key, split_pair_key};
use crate::store::sled::supplier_counts::{self, value_record};
use crate::store::sled::transaction_index::batch_json;
use std::collections::HashMap;

pub(super) fn upgrade(db: &sled::Db) -> Result<(), StoreError> {
    let mut suppliers: HashMap<String, Counts> = HashMap::new();
    for entry in db.open_tree("imports")?.iter() {
        let (key, value) = entry?;
        let process: ImportProcess = decode(&key, &value)?;
        let supplier = split_pair_key(&key).map_or(&key[..], |(supplier, _)| supplier);
        suppliers
            .entry(String::from_utf8_lossy(supplier).into_owned())
            .or_default()
            .add_all(&Counts::of_process_change(None, &process));
    }
    let tree = |table: AccountTable| db.open_tree(table.tree_name());
    let (notes, statements, instructions, summaries, batches) = (
        tree(AccountTable::Notes)?,
        tree(AccountTable::Statements)?,
        tree(AccountTable::PaymentInstructions)?,
        tree(AccountTable::Summary)?,
        tree(AccountTable::TransactionBatches)?,
    );
    for entry in db.open_tree("accounts")?.iter() {
        let (key, value) = entry?;
        let account: PlatformAccount = decode(&key, &value)?;
        let prefix = pair_key(&account.number, "");
        let mut transactions: Vec<Transaction> = Vec::new();
        for batch in batches.scan_prefix(&prefix) {
            let (key, record) = batch?;
            transactions.extend(decode::<Vec<Transaction>>(
                &key,
                &batch_json(&key, &record)?,
            )?);
        }
        let summary: AccountSummary = match summaries.get(&prefix)? {
            Some(record) => {
                let mut summary: AccountSummary = decode(&prefix, &record)?;
                if summary.reconciliation.is_none() {
                    summary.reconciliation = Some(Reconciliation::of_stored(
                        account.data.document(),
                        &transactions,
                    ));
                    summaries.insert(&prefix, encode(&summary))?;
                }
                summary
            }
            None => AccountSummary::default(),
        };
        let records = RecordCounts {
            notes: notes.scan_prefix(&prefix).count(),
            transactions: transactions.len(),
            statements: statements.scan_prefix(&prefix).count(),
            payment_instructions: instructions.scan_prefix(&prefix).count(),
        };
        suppliers
            .entry(account.supplier_code.clone())
            .or_default()
            .add_all(&Counts::of_account(
                &summary,
                account.data.document(),
                records,
            ));
    }
    let counts = db.open_tree(supplier_counts::TREE)?;
    counts.clear()?;
    for (supplier, counted) in &suppliers {
        for (name, value) in &counted.0 {
            counts.insert(pair_key(supplier, name), value_record(*value))?;
        }
    }
    tracing::info!(
        suppliers = suppliers.len(),
        "each supplier's counters counted from the accounts stored before they were kept"
    );
    db.flush()?;
    Ok(())
}
