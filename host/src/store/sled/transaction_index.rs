//! The transactions' id index on sled, kept in memory: for each account, where each of its
//! transactions is stored, by transaction id.
//!
//! A unit stores the transactions it adds as one record (a batch: `account_TransactionBatches`,
//! [`batch_key`]), so a batch of 1000 is one sled insert instead of 1000. Finding one
//! transaction by id (is it already added?) then needs this index: it is
//! derived from the records, read once per account by the first unit that looks for a
//! transaction ([`AccountTransactions::read`]), and then kept up to date by the units that add
//! batches ([`super::kept_indexes`]). Nothing of it is written to disk.
//!
//! A batch record is the JSON array of its transactions compressed (LZ4, [`encode_batch`]):
//! the transactions of a batch share most of their bytes, and sled rewrites a leaf whole when
//! it splits or consolidates it, so an uncompressed batch of 1000 would cost its 400 KB
//! several times over in sled's writes.

use super::codec::{
    compressed, corrupt_record, decode, decompressed, encode, pair_key, split_pair_key,
};
use super::kept_indexes::{AccountIndex, KeptIndexes};
use super::note_index::digest;
use crate::domain::storage::StoreError;
use rustc_hash::FxHashMap;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::hash_map::Entry;

/// First byte of a batch record ([`encode_batch`]): its JSON array follows, compressed.
const COMPRESSED_BATCH_TAG: u8 = 0x02;

/// The record of a batch of transactions: their JSON array, compressed.
pub(super) fn encode_batch<T: Serialize>(transactions: &[T]) -> Vec<u8> {
    encode_batch_json(&encode(&transactions))
}

/// The record of a batch of transactions whose JSON array is `json`.
pub(super) fn encode_batch_json(json: &[u8]) -> Vec<u8> {
    compressed(COMPRESSED_BATCH_TAG, json)
}

/// Whether `record` is a batch record as [`encode_batch`] writes it (version 1 of the format
/// also wrote the JSON array alone, which the upgrader compresses).
pub(super) fn is_compressed_batch(record: &[u8]) -> bool {
    record.first() == Some(&COMPRESSED_BATCH_TAG)
}

/// The JSON array of the batch record at `key`, decompressed.
pub(super) fn batch_json(key: &[u8], record: &[u8]) -> Result<Vec<u8>, StoreError> {
    match record.split_first() {
        Some((&COMPRESSED_BATCH_TAG, block)) => decompressed(block)
            .ok_or_else(|| corrupt_record(key, "a batch of transactions does not decompress")),
        _ => Err(corrupt_record(key, "not a batch of transactions")),
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

/// Where a transaction is stored: at `position` in the batch record whose key is the index's
/// `batch`th ([`AccountTransactions::batch_key`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Location {
    pub(super) batch: u32,
    pub(super) position: u32,
}

/// A [`Location`] in the eight bytes an index keeps it in: the batch in the high half, the
/// position in the low one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Place(u64);

impl Place {
    fn of(location: Location) -> Place {
        Place((u64::from(location.batch) << 32) | u64::from(location.position))
    }

    fn location(self) -> Location {
        // The halves of a u64: the casts take exactly 32 bits each.
        #[allow(clippy::cast_possible_truncation)]
        let (batch, position) = ((self.0 >> 32) as u32, self.0 as u32);
        Location { batch, position }
    }
}

/// What an index keys a transaction by: the first 64 bits of its id's SHA-256, half of the
/// note index's digest. A slot then takes 16 bytes (with an 8-byte [`Place`]) where a 128-bit
/// digest and a [`Location`] would take 32, which at a million transactions is tens of MiB.
/// Two ids of an account can share a key, by chance or on purpose (2³² hashes
/// find a pair), so the index keeps every place of a shared key, and whoever reads the
/// transactions found checks their ids.
fn id_key(id: &str) -> u64 {
    // The digest's high half: its first eight bytes.
    #[allow(clippy::cast_possible_truncation)]
    let key = (digest(id) >> 64) as u64;
    key
}

/// Where each of one account's transactions is, by its id's key ([`id_key`]).
#[derive(Debug, Default)]
pub(super) struct AccountTransactions {
    places: FxHashMap<u64, Place>,
    /// The places of transactions whose key an earlier one of the account had already, in
    /// the order they were added: almost always none.
    shared: Vec<(u64, Place)>,
    /// The keys of the account's batch records (after the account's number).
    batches: Vec<String>,
}

/// The one field of a stored transaction the index needs.
#[derive(Deserialize)]
struct TransactionId {
    transaction_id: String,
}

impl AccountTransactions {
    /// The index of account `number`'s transactions, from its batch records (`batches`).
    pub(super) fn read(number: &str, batches: &sled::Tree) -> Result<Self, StoreError> {
        let mut index = Self::default();
        let prefix = pair_key(number, "");
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

    /// Where the transaction `id` may be: the places of the account's transactions whose id
    /// has the same key, in the order they were added (almost always one at most).
    pub(super) fn get(&self, id: &str) -> impl Iterator<Item = Location> + use<'_> {
        let key = id_key(id);
        let first = self.places.get(&key).copied();
        // Only a key with a first place can have more.
        let more = first.map_or(&[][..], |_| &self.shared[..]);
        first
            .into_iter()
            .chain(
                more.iter()
                    .filter(move |(shared, _)| *shared == key)
                    .map(|&(_, place)| place),
            )
            .map(Place::location)
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
            self.add(id, Location { batch, position });
        }
    }

    /// Records `location` under the key of `id`.
    fn add(&mut self, id: &str, location: Location) {
        let (key, place) = (id_key(id), Place::of(location));
        match self.places.entry(key) {
            Entry::Vacant(vacant) => {
                vacant.insert(place);
            }
            Entry::Occupied(_) => self.shared.push((key, place)),
        }
    }

    /// Records `location` under the key of `id`, as if the transaction there had the same key
    /// as `id` ([`Self::add`], for another module's tests).
    #[cfg(test)]
    pub(super) fn add_under_key_of(&mut self, id: &str, location: Location) {
        self.add(id, location);
    }
}

impl AccountIndex for AccountTransactions {
    const KEPT: usize = 1_000_000;
    /// An id's key and its place, 16 bytes, in a hash map's slot with its control byte, in
    /// a table 44–87 % full (it doubles when it is 7/8 full).
    const ENTRY_BYTES: usize = 26;

    fn weight(&self) -> usize {
        (self.places.len() + self.shared.len()).max(1)
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
    fn a_batch_record_is_compressed_and_read_back() {
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
        assert_eq!(
            batch_json(b"A-1/batch", &record).expect("read"),
            json,
            "the JSON array, compressed"
        );
        assert_eq!(encode_batch_json(&json), record);
        assert!(is_compressed_batch(&record) && !is_compressed_batch(&json));
        assert!(
            matches!(
                decode_batch::<TransactionId>(b"A-1/batch", &json),
                Err(StoreError::Corrupt { .. })
            ),
            "the JSON array alone is version 1's, which the upgrader compresses"
        );
        let cut_short = &record[..record.len() - 10];
        assert!(matches!(
            decode_batch::<TransactionId>(b"A-1/batch", cut_short),
            Err(StoreError::Corrupt { .. })
        ));

        // The index reads compressed batches.
        let dir = tempfile::tempdir().expect("dir");
        let db = sled::open(dir.path()).expect("db");
        let batches = db.open_tree("batches").expect("tree");
        batches
            .insert(pair_key("A-1", &batch_key(1, "T-0")), record)
            .expect("insert");
        let index = AccountTransactions::read("A-1", &batches).expect("read");
        assert_eq!(
            index.get("T-999").next(),
            Some(Location {
                batch: 0,
                position: 999
            })
        );
    }

    #[test]
    fn the_index_finds_transactions_in_the_accounts_batches() {
        let dir = tempfile::tempdir().expect("dir");
        let db = sled::open(dir.path()).expect("db");
        let batches = db.open_tree("batches").expect("tree");
        let batch = |json: &[u8]| encode_batch_json(json);
        batches
            .insert(
                pair_key("A-1", &batch_key(7, "T-1")),
                batch(br#"[{"transaction_id":"T-1","amount":"1"},{"transaction_id":"T-2"}]"#),
            )
            .expect("insert");
        batches
            .insert(
                pair_key("A-2", &batch_key(8, "T-other")),
                batch(br#"[{"transaction_id":"T-other"}]"#),
            )
            .expect("insert");
        let mut index = AccountTransactions::read("A-1", &batches).expect("read");
        assert_eq!(
            index.get("T-2").next(),
            Some(Location {
                batch: 0,
                position: 1
            })
        );
        assert_eq!(index.batch_key(0), Some(batch_key(7, "T-1").as_str()));
        assert_eq!(index.get("T-other").next(), None, "another account's");
        assert_eq!(index.weight(), 2);
        index.add_batch(batch_key(9, "T-3"), ["T-3"]);
        assert_eq!(
            index.get("T-3").next(),
            Some(Location {
                batch: 1,
                position: 0
            })
        );
        assert_eq!(index.batch_key(1), Some(batch_key(9, "T-3").as_str()));
    }

    #[test]
    fn a_place_keeps_its_location_in_eight_bytes() {
        for location in [
            Location {
                batch: 0,
                position: 0,
            },
            Location {
                batch: 7,
                position: 999,
            },
            Location {
                batch: u32::MAX,
                position: 0,
            },
            Location {
                batch: 0,
                position: u32::MAX,
            },
            Location {
                batch: u32::MAX,
                position: u32::MAX,
            },
        ] {
            assert_eq!(Place::of(location).location(), location);
        }
        assert_eq!(std::mem::size_of::<(u64, Place)>(), 16);
    }

    #[test]
    fn ids_that_share_a_key_keep_every_place() {
        let mut index = AccountTransactions::default();
        index.add_batch(batch_key(1, "T-1"), ["T-1", "T-2"]);
        // Another id whose key is T-1's, in a later batch (a 64-bit key is shared by chance
        // or by design, not in a test's lifetime).
        index.add(
            "T-1",
            Location {
                batch: 1,
                position: 0,
            },
        );
        assert_eq!(
            index.get("T-1").collect::<Vec<_>>(),
            [
                Location {
                    batch: 0,
                    position: 0
                },
                Location {
                    batch: 1,
                    position: 0
                }
            ],
            "the first place first, then the shared one"
        );
        assert_eq!(
            index.get("T-2").collect::<Vec<_>>(),
            [Location {
                batch: 0,
                position: 1
            }],
            "a key of its own"
        );
        assert_eq!(index.get("T-3").next(), None);
        assert_eq!(index.weight(), 3);
    }
}
