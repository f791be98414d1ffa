//! Records of the sled store kept decoded in memory: those every request reads (its API key,
//! its supplier, the import listing of the account it is about), and the import processes
//! written or read lately (a migration reads the process its staging wrote, twice).
//!
//! A record is kept with the bytes it was decoded from and the write count of its key's
//! stripe when they were read ([`WriteGenerations`]). A read whose stripe has not been
//! written since answers the record kept, without reading sled. Otherwise it reads the bytes
//! again from sled (what is durable: a change not yet made in sled is not seen) and parses them
//! only when they differ from those kept. A write keeps the record it encoded, so the read
//! after it parses nothing; it is kept unverified, to be compared with sled's bytes once, since
//! it is not durable yet. A cache that reaches its bound starts again empty.
//!
//! Reading the three records every note needs from sled costs more than cloning them from
//! memory: sled's page cache, and freeing the garbage of the writer's node copies on the way.

use super::codec::decode;
use super::generations::WriteGenerations;
use crate::bounded_map::BoundedMap;
use crate::domain::storage::StoreError;
use serde::de::DeserializeOwned;
use sled::IVec;
use std::sync::Arc;

/// At most this many records of a tree are kept decoded, unless said otherwise.
const KEPT: usize = 1024;

/// The write count of a record kept unverified: no stripe reaches it.
const UNVERIFIED: u64 = u64::MAX;

/// Reads a record from its key and stored bytes.
pub(super) type RecordReader<T> = fn(&[u8], &[u8]) -> Result<T, StoreError>;

/// A record kept: the write count of its stripe when its bytes were read, the bytes, the record.
type Kept<T> = (u64, IVec, T);

/// The records of one tree last decoded, by key.
pub(super) struct DecodedRecords<T> {
    records: BoundedMap<IVec, Kept<T>>,
    generations: Arc<WriteGenerations>,
    read: RecordReader<T>,
}

impl<T: Clone + DeserializeOwned> DecodedRecords<T> {
    /// Records stored as JSON, at most [`KEPT`] of them kept.
    pub(super) fn new(generations: Arc<WriteGenerations>) -> Self {
        Self::keeping(KEPT, generations, decode::<T>)
    }
}

impl<T: Clone> DecodedRecords<T> {
    /// At most `kept` records kept, each read from its bytes by `read`.
    pub(super) fn keeping(
        kept: usize,
        generations: Arc<WriteGenerations>,
        read: RecordReader<T>,
    ) -> Self {
        Self {
            records: BoundedMap::new(kept),
            generations,
            read,
        }
    }

    /// Keeps `record`, just encoded as `bytes` to be stored at `key` (or decoded from them),
    /// unverified: the next [`Self::get`] compares its bytes with sled's.
    pub(super) fn written(&self, key: &[u8], bytes: IVec, record: T) {
        self.records
            .keep(IVec::from(key), (UNVERIFIED, bytes, record));
    }

    /// The record `key` holds in `tree`, if any.
    pub(super) fn get(&self, tree: &sled::Tree, key: &[u8]) -> Result<Option<T>, StoreError> {
        let generation = self.generations.current(&tree.name(), key);
        let unchanged = self.records.with(key, |(read_at, _, record)| {
            (*read_at == generation).then(|| record.clone())
        });
        if let Some(record) = unchanged.flatten() {
            return Ok(Some(record));
        }
        let Some(bytes) = tree.get(key)? else {
            return Ok(None);
        };
        // Decoded from the bytes sled holds: verified as of `generation`, kept where it is.
        let verified = self.records.with(key, |(read_at, decoded_from, record)| {
            (*decoded_from == bytes).then(|| {
                *read_at = generation;
                record.clone()
            })
        });
        if let Some(record) = verified.flatten() {
            return Ok(Some(record));
        }
        let record = (self.read)(key, &bytes)?;
        self.records
            .keep(IVec::from(key), (generation, bytes, record.clone()));
        Ok(Some(record))
    }

    /// The record stored at `key` as `bytes` (read through the journal: maybe not yet durable),
    /// kept unverified.
    pub(super) fn decoded(&self, key: &[u8], bytes: IVec) -> Result<T, StoreError> {
        let kept = self.records.with(key, |(_, decoded_from, record)| {
            (*decoded_from == bytes).then(|| record.clone())
        });
        if let Some(record) = kept.flatten() {
            return Ok(record);
        }
        let record = (self.read)(key, &bytes)?;
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

    fn named(name: &str) -> Record {
        Record { name: name.into() }
    }

    struct Fixture {
        _dir: tempfile::TempDir,
        tree: sled::Tree,
        generations: Arc<WriteGenerations>,
    }

    impl Fixture {
        fn new() -> Self {
            let dir = tempfile::tempdir().expect("temp");
            let db = sled::open(dir.path()).expect("sled");
            let tree = db.open_tree("records").expect("tree");
            Self {
                _dir: dir,
                tree,
                generations: Arc::default(),
            }
        }

        fn records(&self, kept: usize) -> DecodedRecords<Record> {
            DecodedRecords::keeping(kept, self.generations.clone(), decode::<Record>)
        }

        /// Writes `key` as the journal's writer does: in sled, then counted.
        fn store(&self, key: &[u8], value: Option<&[u8]>) {
            match value {
                Some(value) => self.tree.insert(key, value).map(drop),
                None => self.tree.remove(key).map(drop),
            }
            .expect("write");
            self.generations.written(&self.tree.name(), key);
        }

        /// Writes `key` in sled behind the write counts' back: only a read that goes to sled
        /// sees it.
        fn store_uncounted(&self, key: &[u8], value: &[u8]) {
            self.tree.insert(key, value).expect("insert");
        }
    }

    #[test]
    fn a_record_read_again_is_the_one_stored_now() {
        let fixture = Fixture::new();
        let records = fixture.records(KEPT);
        let read = || records.get(&fixture.tree, b"a");

        assert_eq!(read().expect("read"), None);
        fixture.store(b"a", Some(br#"{"name":"first"}"#));
        assert_eq!(read().expect("read"), Some(named("first")));
        assert_eq!(read().expect("read"), Some(named("first")));

        fixture.store(b"a", Some(br#"{"name":"second"}"#));
        assert_eq!(read().expect("read"), Some(named("second")));

        fixture.store(b"a", None);
        assert_eq!(read().expect("read"), None);

        fixture.store(b"a", Some(b"not json"));
        assert!(matches!(read(), Err(StoreError::Corrupt { .. })));
    }

    #[test]
    fn a_record_whose_stripe_was_not_written_is_answered_without_reading_sled() {
        let fixture = Fixture::new();
        let records = fixture.records(KEPT);
        fixture.store(b"a", Some(br#"{"name":"first"}"#));
        assert_eq!(
            records.get(&fixture.tree, b"a").expect("read"),
            Some(named("first"))
        );
        // Not counted: a read that went to sled would answer "uncounted".
        fixture.store_uncounted(b"a", br#"{"name":"uncounted"}"#);
        assert_eq!(
            records.get(&fixture.tree, b"a").expect("read"),
            Some(named("first"))
        );
        fixture.generations.written(&fixture.tree.name(), b"a");
        assert_eq!(
            records.get(&fixture.tree, b"a").expect("read"),
            Some(named("uncounted"))
        );
    }

    #[test]
    fn a_record_written_is_answered_once_sled_holds_its_bytes_and_not_before() {
        let fixture = Fixture::new();
        let records = fixture.records(8);
        let old = br#"{"name":"old"}"#.as_slice();
        let new = br#"{"name":"new"}"#.as_slice();
        fixture.store(b"a", Some(old));
        assert_eq!(
            records.get(&fixture.tree, b"a").expect("read"),
            Some(named("old"))
        );
        // Committed, not yet durable: sled still holds the old bytes, and so does the answer.
        records.written(b"a", IVec::from(new), named("new"));
        assert_eq!(
            records.get(&fixture.tree, b"a").expect("read"),
            Some(named("old"))
        );
        // Kept as if written with these bytes, under a name the bytes do not hold: a read
        // that parsed them would answer "new".
        records.written(b"a", IVec::from(new), named("kept"));
        fixture.store(b"a", Some(new));
        assert_eq!(
            records.get(&fixture.tree, b"a").expect("read"),
            Some(named("kept")),
            "bytes equal to those kept are not parsed again"
        );
        // Verified now: answered from memory until its stripe is written again (an uncounted
        // write is not seen).
        fixture.store_uncounted(b"a", br#"{"name":"uncounted"}"#);
        assert_eq!(
            records.get(&fixture.tree, b"a").expect("read"),
            Some(named("kept")),
            "a record verified against sled is kept as of its stripe's count"
        );
        fixture.store(b"a", Some(br#"{"name":"later"}"#));
        assert_eq!(
            records.get(&fixture.tree, b"a").expect("read"),
            Some(named("later")),
            "bytes other than those kept are parsed"
        );
    }

    #[test]
    fn a_full_cache_starts_again() {
        let fixture = Fixture::new();
        let records = fixture.records(KEPT);
        for index in 0..=KEPT {
            let key = index.to_string();
            fixture.store(key.as_bytes(), Some(br#"{"name":"n"}"#));
            records.get(&fixture.tree, key.as_bytes()).expect("read");
        }
        assert_eq!(records.records.len(), 1);
    }
}
