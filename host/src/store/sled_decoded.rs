//! Records of the sled store that every request reads (its API key, its supplier), kept
//! decoded beside the bytes they were decoded from.
//!
//! A read still gets the record's bytes from sled, so it sees every write at once, but it
//! parses them only when they differ from the bytes it parsed last: comparing a few hundred
//! bytes is cheaper than parsing them with their dates (~3 % of a note's CPU at 32 connections
//! for the two records). The trees these records live in are small; a cache that reaches
//! [`KEPT`] records starts again empty.

use super::sled_store::decode;
use crate::bounded_map::BoundedMap;
use crate::domain::storage::StoreError;
use serde::de::DeserializeOwned;
use sled::IVec;

/// At most this many records of a tree are kept decoded.
const KEPT: usize = 1024;

/// The records of one tree last decoded, by key, each with the bytes it was decoded from.
pub(super) struct DecodedRecords<T> {
    records: BoundedMap<IVec, (IVec, T)>,
}

impl<T: Clone> Default for DecodedRecords<T> {
    fn default() -> Self {
        Self {
            records: BoundedMap::new(KEPT),
        }
    }
}

impl<T: Clone + DeserializeOwned> DecodedRecords<T> {
    /// The record `key` holds in `tree`, if any.
    pub(super) fn get(&self, tree: &sled::Tree, key: &[u8]) -> Result<Option<T>, StoreError> {
        let Some(bytes) = tree.get(key)? else {
            return Ok(None);
        };
        if let Some((decoded_from, record)) = self.records.get(key)
            && decoded_from == bytes
        {
            return Ok(Some(record));
        }
        let record: T = decode(key, &bytes)?;
        self.records.keep(IVec::from(key), (bytes, record.clone()));
        Ok(Some(record))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Clone, PartialEq, Deserialize)]
    struct Record {
        name: String,
    }

    fn tree() -> (tempfile::TempDir, sled::Tree) {
        let dir = tempfile::tempdir().expect("temp");
        let db = sled::open(dir.path()).expect("sled");
        let tree = db.open_tree("records").expect("tree");
        (dir, tree)
    }

    #[test]
    fn a_record_read_again_is_the_one_stored_now() {
        let (_dir, tree) = tree();
        let records = DecodedRecords::<Record>::default();
        let named = |name: &str| Record { name: name.into() };

        assert_eq!(records.get(&tree, b"a").expect("read"), None);
        tree.insert(b"a", br#"{"name":"first"}"#.as_slice())
            .expect("insert");
        assert_eq!(
            records.get(&tree, b"a").expect("read"),
            Some(named("first"))
        );
        assert_eq!(
            records.get(&tree, b"a").expect("read"),
            Some(named("first"))
        );

        tree.insert(b"a", br#"{"name":"second"}"#.as_slice())
            .expect("insert");
        assert_eq!(
            records.get(&tree, b"a").expect("read"),
            Some(named("second"))
        );

        tree.remove(b"a").expect("remove");
        assert_eq!(records.get(&tree, b"a").expect("read"), None);

        tree.insert(b"a", b"not json".as_slice()).expect("insert");
        assert!(matches!(
            records.get(&tree, b"a"),
            Err(StoreError::Corrupt { .. })
        ));
    }

    #[test]
    fn a_full_cache_starts_again() {
        let (_dir, tree) = tree();
        let records = DecodedRecords::<Record>::default();
        for index in 0..=KEPT {
            let key = index.to_string();
            tree.insert(key.as_bytes(), br#"{"name":"n"}"#.as_slice())
                .expect("insert");
            records.get(&tree, key.as_bytes()).expect("read");
        }
        assert_eq!(records.records.len(), 1);
    }
}
