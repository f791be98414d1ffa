//! The transactions' id index on sled, kept in memory: for each account, where each of its
//! transactions is stored, by transaction id.
//!
//! A unit stores the transactions it adds as one record (a batch: `account_TransactionBatches`,
//! [`batch_key`]), so a batch of 1000 is one sled insert instead of 1000. Finding one
//! transaction by id (is it already added?) then needs this index: it is
//! derived from the records, read once per account by the first unit that looks for a
//! transaction ([`AccountTransactions::read`]), and then kept up to date by the units that add
//! batches ([`super::sled_kept_indexes`]). Nothing of it is written to disk. Records written
//! by versions before, one per transaction keyed by its id (`account_Transactions`), are
//! indexed too, and stay where they are.
//!
//! A batch record is the JSON array of its transactions compressed (LZ4, [`encode_batch`]):
//! the transactions of a batch share most of their bytes, and sled rewrites a leaf whole when
//! it splits or consolidates it, so a batch of 1000 cost its 400 KB several times over in
//! sled's writes. Batch records of the version before, the JSON array itself, are read as
//! they are ([`batch_json`]).

use super::sled_kept_indexes::{AccountIndex, KeptIndexes};
use super::sled_note_index::{KeyDigest, digest};
use super::sled_store::{
    compressed, corrupt_record, decode, decompressed, encode, pair_key, split_pair_key,
};
use crate::domain::storage::StoreError;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::HashMap;

/// First byte of a compressed batch record ([`encode_batch`]). The version before wrote the
/// JSON array alone, whose first byte is `[`.
const COMPRESSED_BATCH_TAG: u8 = 0x02;

/// The record of a batch of transactions: their JSON array, compressed.
pub(super) fn encode_batch<T: Serialize>(transactions: &[T]) -> Vec<u8> {
    compressed(COMPRESSED_BATCH_TAG, &encode(&transactions))
}

/// The JSON array of the batch record at `key`: decompressed, or as the version before wrote
/// it.
pub(super) fn batch_json<'a>(key: &[u8], record: &'a [u8]) -> Result<Cow<'a, [u8]>, StoreError> {
    match record.split_first() {
        Some((&COMPRESSED_BATCH_TAG, block)) => decompressed(block)
            .map(Cow::Owned)
            .ok_or_else(|| corrupt_record(key, "a batch of transactions does not decompress")),
        _ => Ok(Cow::Borrowed(record)),
    }
}

/// The transactions of the batch record at `key`, read as `T`.
pub(super) fn decode_batch<T: DeserializeOwned>(
    key: &[u8],
    record: &[u8],
) -> Result<Vec<T>, StoreError> {
    decode(key, &batch_json(key, record)?)
}

/// Every account's transaction index kept in memory.
pub(super) type TransactionIndexes = KeptIndexes<AccountTransactions>;

/// Where a transaction is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Location {
    /// In a record of its own, keyed by its id (versions before batches).
    Own,
    /// At `position` in the batch record whose key is the index's `batch`th
    /// ([`AccountTransactions::batch_key`]).
    Batch { batch: u32, position: u32 },
}

/// Where each of one account's transactions is, by a digest of its id. A digest can match
/// another id: whoever reads the transaction found checks its id.
#[derive(Debug, Default)]
pub(super) struct AccountTransactions {
    places: HashMap<KeyDigest, Location>,
    /// The keys of the account's batch records (after the account's number).
    batches: Vec<String>,
}

/// The one field of a stored transaction the index needs.
#[derive(Deserialize)]
struct TransactionId {
    transaction_id: String,
}

impl AccountTransactions {
    /// The index of account `number`'s transactions, from its records of one transaction
    /// (`own`, keyed by id) and its batch records (`batches`).
    pub(super) fn read(
        number: &str,
        own: &sled::Tree,
        batches: &sled::Tree,
    ) -> Result<Self, StoreError> {
        let mut index = Self::default();
        let prefix = pair_key(number, "");
        for record in own.scan_prefix(&prefix).keys() {
            let key = record?;
            if let Some((_, id)) = split_pair_key(&key) {
                index
                    .places
                    .insert(digest(&String::from_utf8_lossy(id)), Location::Own);
            }
        }
        for record in batches.scan_prefix(&prefix) {
            let (key, value) = record?;
            let batch = split_pair_key(&key)
                .map(|(_, batch)| String::from_utf8_lossy(batch).into_owned())
                .unwrap_or_default();
            let ids: Vec<TransactionId> = decode_batch(&key, &value)?;
            index.add_batch(batch, ids.iter().map(|id| id.transaction_id.as_str()));
        }
        Ok(index)
    }

    /// Where the transaction `id` is, if the account has one by that id (or by an id of the
    /// same digest).
    pub(super) fn get(&self, id: &str) -> Option<Location> {
        self.places.get(&digest(id)).copied()
    }

    /// The key of the `batch`th batch record (after the account's number).
    pub(super) fn batch_key(&self, batch: u32) -> Option<&str> {
        self.batches.get(batch as usize).map(String::as_str)
    }

    /// Records the transactions of the batch record at `key` (after the account's number), in
    /// their order in it.
    pub(super) fn add_batch<'a>(&mut self, key: String, ids: impl IntoIterator<Item = &'a str>) {
        let batch = u32::try_from(self.batches.len()).unwrap_or(u32::MAX);
        self.batches.push(key);
        for (position, id) in ids.into_iter().enumerate() {
            let position = u32::try_from(position).unwrap_or(u32::MAX);
            self.places
                .insert(digest(id), Location::Batch { batch, position });
        }
    }
}

impl AccountIndex for AccountTransactions {
    const KEPT: usize = 1_000_000;
    /// An id's digest and its place, in a hash map.
    const ENTRY_BYTES: usize = 40;

    fn weight(&self) -> usize {
        self.places.len().max(1)
    }
}

/// The key of a batch record (after the account's number): its first transaction's ledger
/// entry id, zero-padded, so that batches list in the order they were added, then that
/// transaction's id, which no other batch of the account holds.
pub(super) fn batch_key(first_entry: u64, first_transaction: &str) -> String {
    format!("{first_entry:020}:{first_transaction}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_record_is_compressed_and_read_in_either_form() {
        let transactions: Vec<serde_json::Value> = (0..1000)
            .map(|n| {
                serde_json::json!({
                    "transaction_id": format!("T-{n}"),
                    "transaction_date": "2025-01-15",
                    "amount": "12.34",
                    "type": "CHARGE",
                    "status": "TRANSACTION_IMPORT_SUCCESS",
                })
            })
            .collect();
        let json = encode(&transactions);
        let record = encode_batch(&transactions);
        assert_eq!(record.first(), Some(&COMPRESSED_BATCH_TAG));
        assert!(
            record.len() * 3 < json.len(),
            "{} bytes of {}",
            record.len(),
            json.len()
        );
        let ids = |record: &[u8]| -> Vec<String> {
            decode_batch::<TransactionId>(b"A-1/batch", record)
                .expect("read")
                .into_iter()
                .map(|id| id.transaction_id)
                .collect()
        };
        assert_eq!(ids(&record).len(), 1000);
        assert_eq!(ids(&record)[999], "T-999");
        assert_eq!(ids(&record), ids(&json), "the JSON array as written before");
        let cut_short = &record[..record.len() - 10];
        assert!(matches!(
            decode_batch::<TransactionId>(b"A-1/batch", cut_short),
            Err(StoreError::Corrupt { .. })
        ));

        // The index reads compressed batches.
        let dir = tempfile::tempdir().expect("dir");
        let db = sled::open(dir.path()).expect("db");
        let (own, batches) = (
            db.open_tree("own").expect("tree"),
            db.open_tree("batches").expect("tree"),
        );
        batches
            .insert(pair_key("A-1", &batch_key(1, "T-0")), record)
            .expect("insert");
        let index = AccountTransactions::read("A-1", &own, &batches).expect("read");
        assert_eq!(
            index.get("T-999"),
            Some(Location::Batch {
                batch: 0,
                position: 999
            })
        );
    }

    #[test]
    fn the_index_finds_transactions_of_their_own_and_in_batches() {
        let dir = tempfile::tempdir().expect("dir");
        let db = sled::open(dir.path()).expect("db");
        let own = db.open_tree("own").expect("tree");
        let batches = db.open_tree("batches").expect("tree");
        own.insert(pair_key("A-1", "T-old"), b"{}".to_vec())
            .expect("insert");
        own.insert(pair_key("A-2", "T-other"), b"{}".to_vec())
            .expect("insert");
        batches
            .insert(
                pair_key("A-1", &batch_key(7, "T-1")),
                br#"[{"transaction_id":"T-1","amount":"1"},{"transaction_id":"T-2"}]"#.to_vec(),
            )
            .expect("insert");
        let mut index = AccountTransactions::read("A-1", &own, &batches).expect("read");
        assert_eq!(index.get("T-old"), Some(Location::Own));
        assert_eq!(
            index.get("T-2"),
            Some(Location::Batch {
                batch: 0,
                position: 1
            })
        );
        assert_eq!(index.batch_key(0), Some(batch_key(7, "T-1").as_str()));
        assert_eq!(index.get("T-other"), None, "another account's");
        assert_eq!(index.weight(), 3);
        index.add_batch(batch_key(9, "T-3"), ["T-3"]);
        assert_eq!(
            index.get("T-3"),
            Some(Location::Batch {
                batch: 1,
                position: 0
            })
        );
        assert_eq!(index.batch_key(1), Some(batch_key(9, "T-3").as_str()));
    }
}
