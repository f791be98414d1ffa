//! Records of the sled store kept decoded beside the bytes they were decoded from: those
//! every request reads (its API key, its supplier), and the import processes written or read
//! lately (a migration reads the process its staging wrote, twice).
//!
//! A read still gets the record's bytes from sled (or from the journal's changes not yet in
//! sled), so it sees every write at once, but it parses them only when they differ from the
//! bytes it parsed last: comparing a few hundred bytes is cheaper than parsing them with their
//! dates (~3 % of a note's CPU at 32 connections for the two records). A write keeps the record
//! it encoded, so the next read of it parses nothing. A cache that reaches its bound starts
//! again empty.

use super::sled_store::decode;
use crate::bounded_map::BoundedMap;
use crate::domain::storage::StoreError;
use serde::de::DeserializeOwned;
use sled::IVec;

/// At most this many records of a tree are kept decoded, unless said otherwise.
const KEPT: usize = 1024;

/// The records of one tree last decoded, by key, each with the bytes it was decoded from.
pub(super) struct DecodedRecords<T> {
    records: BoundedMap<IVec, (IVec, T)>,
}

impl<T: Clone> Default for DecodedRecords<T> {
    fn default() -> Self {
        Self::keeping(KEPT)
    }
}

impl<T: Clone> DecodedRecords<T> {
    /// At most `kept` records kept decoded.
    pub(super) fn keeping(kept: usize) -> Self {
        Self {
            records: BoundedMap::new(kept),
        }
    }

    /// Keeps `record`, just encoded as `bytes` to be stored at `key` (or decoded from them).
    pub(super) fn written(&self, key: &[u8], bytes: IVec, record: T) {
        self.records.keep(IVec::from(key), (bytes, record));
    }
}

impl<T: Clone + DeserializeOwned> DecodedRecords<T> {
    /// The record `key` holds in `tree`, if any.
    pub(super) fn get(&self, tree: &sled::Tree, key: &[u8]) -> Result<Option<T>, StoreError> {
        tree.get(key)?
            .map(|bytes| self.decoded(key, bytes))
            .transpose()
    }

    /// The record stored at `key` as `bytes`.
    pub(super) fn decoded(&self, key: &[u8], bytes: IVec) -> Result<T, StoreError> {
        if let Some((decoded_from, record)) = self.records.get(key)
            && decoded_from == bytes
        {
            return Ok(record);
        }
        let record: T = decode(key, &bytes)?;
        self.written(key, bytes, record.clone());
        Ok(record)
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
    fn a_record_written_is_read_without_parsing_until_its_bytes_change() {
        let (_dir, tree) = tree();
        let records = DecodedRecords::<Record>::keeping(8);
        let stored = br#"{"name":"stored"}"#.as_slice();
        tree.insert(b"a", stored).expect("insert");
        // Kept as if written with these bytes, under a name the bytes do not hold: a read
        // that parsed them would answer "stored".
        records.written(
            b"a",
            IVec::from(stored),
            Record {
                name: "kept".into(),
            },
        );
        assert_eq!(
            records
                .get(&tree, b"a")
                .expect("read")
                .map(|record| record.name),
            Some("kept".to_owned())
        );

        tree.insert(b"a", br#"{"name":"later"}"#.as_slice())
            .expect("insert");
        assert_eq!(
            records
                .get(&tree, b"a")
                .expect("read")
                .map(|record| record.name),
            Some("later".to_owned()),
            "bytes other than those written are parsed"
        );
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
