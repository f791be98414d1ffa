//! The sled event log's index from an event's id to its `seq`, for the admin log's
//! `after=<event id>`: a few records per change, not one per event.
//!
//! Every id Ferry makes is a UUIDv7, whose first six bytes are the millisecond it was made
//! in. A change's events are indexed by that millisecond: one record for each millisecond its
//! events were made in, keyed by the millisecond and the change's first `seq`, holding each
//! such event's other ten bytes and its `seq`'s offset from the first. A 1000-transaction
//! batch makes its thousand events within a few milliseconds, so it writes a few records here
//! where it wrote a thousand, each a sled insert (and, every few, a leaf split). Looking an id
//! up reads the records of its millisecond: the changes whose events were made then.
//!
//! An id that is not a UUID in its canonical form (none Ferry makes) is indexed on its own, in
//! a tree of its own (`event_ids`: the id → its `seq`).

use super::codec::be_u64;
use super::journal::Changes;

/// Bytes of a UUID that name the millisecond it was made in (UUIDv7).
const MILLISECOND_BYTES: usize = 6;
/// The rest of a UUID.
const REST_BYTES: usize = 16 - MILLISECOND_BYTES;
/// One event of a record: its id's last ten bytes, then its offset from the change's first
/// `seq` (u32, big endian).
const ENTRY_BYTES: usize = REST_BYTES + 4;

/// The UUID of `id` if it is one in its canonical form (lower-case hex with hyphens, as Ferry
/// writes them), so that looking it up finds what the same text would have found.
pub(super) fn canonical_uuid(id: &str) -> Option<[u8; 16]> {
    let uuid = uuid::Uuid::try_parse(id).ok()?;
    let mut text = [0u8; uuid::fmt::Hyphenated::LENGTH];
    (uuid.hyphenated().encode_lower(&mut text) == id).then(|| *uuid.as_bytes())
}

/// A change's index records, made before the change takes the commit lock: all but their
/// keys' first `seq`, which is handed out under it ([`IdIndex::write`]).
pub(super) struct IdIndex {
    /// Each millisecond the change's events were made in, in the order first met: its
    /// events' other ten id bytes and offsets from the change's first `seq`.
    by_millisecond: Vec<([u8; MILLISECOND_BYTES], Vec<u8>)>,
    /// The ids that are not canonical UUIDs, with their offsets.
    others: Vec<(u64, String)>,
}

impl IdIndex {
    /// The index records of a change's events, whose `seq`s will run in the order of `ids`.
    pub(super) fn of<'a>(ids: impl IntoIterator<Item = &'a str>) -> IdIndex {
        let mut index = IdIndex {
            by_millisecond: Vec::new(),
            others: Vec::new(),
        };
        for (offset, id) in ids.into_iter().enumerate() {
            let (Some(uuid), Ok(offset32)) = (canonical_uuid(id), u32::try_from(offset)) else {
                index.others.push((offset as u64, id.to_owned()));
                continue;
            };
            let (millisecond, rest) = uuid.split_at(MILLISECOND_BYTES);
            // A change's events are made in order, so their milliseconds come in runs.
            let at = match index
                .by_millisecond
                .iter()
                .rposition(|(at, _)| at == millisecond)
            {
                Some(at) => at,
                None => {
                    let mut at = [0u8; MILLISECOND_BYTES];
                    at.copy_from_slice(millisecond);
                    index.by_millisecond.push((at, Vec::new()));
                    index.by_millisecond.len() - 1
                }
            };
            let record = &mut index.by_millisecond[at].1;
            record.extend_from_slice(rest);
            record.extend_from_slice(&offset32.to_be_bytes());
        }
        index
    }

    /// Adds the records, for a change whose first `seq` is `first`: those by millisecond to
    /// `by_millisecond`, any other id to `by_id`.
    pub(super) fn write(
        self,
        changes: &mut Changes,
        by_millisecond: &sled::Tree,
        by_id: &sled::Tree,
        first: u64,
    ) {
        for (offset, id) in self.others {
            changes.insert(by_id, id.into_bytes(), &(first + offset).to_be_bytes());
        }
        for (millisecond, record) in self.by_millisecond {
            let mut key = [0u8; MILLISECOND_BYTES + 8];
            key[..MILLISECOND_BYTES].copy_from_slice(&millisecond);
            key[MILLISECOND_BYTES..].copy_from_slice(&first.to_be_bytes());
            changes.insert(by_millisecond, &key, record);
        }
    }
}

/// The first `seq` of the change a record's `key` names.
fn first_seq(key: &[u8]) -> Option<u64> {
    let first = key.get(MILLISECOND_BYTES..)?;
    <[u8; 8]>::try_from(first).ok().map(u64::from_be_bytes)
}

/// The keys of the records `by_millisecond` holds for events all before `bound` (a `seq`):
/// those of the log's events taken out below it. Read in the order of their milliseconds up
/// to the first record of a change from `bound` on; a change whose ids were made before
/// another's but given later `seq`s may leave the other's record for a later call to find.
pub(super) fn records_before(
    by_millisecond: &sled::Tree,
    bound: u64,
) -> Result<Vec<sled::IVec>, sled::Error> {
    let mut keys = Vec::new();
    for record in by_millisecond.iter() {
        let (key, entries) = record?;
        let first = first_seq(&key).unwrap_or(u64::MAX);
        if first >= bound {
            break;
        }
        let last_offset = entries
            .chunks_exact(ENTRY_BYTES)
            .filter_map(|entry| <[u8; 4]>::try_from(&entry[REST_BYTES..]).ok())
            .map(u32::from_be_bytes)
            .max()
            .unwrap_or(0);
        if first.saturating_add(u64::from(last_offset)) < bound {
            keys.push(key);
        }
    }
    Ok(keys)
}

/// Adds the event `id`, logged at `seq`, to the records `by_millisecond` holds, on its own:
/// for an event of a directory upgraded from version 4 of the format. Nothing for an id that
/// is not a canonical UUID, which has no record there.
pub(super) fn index_one(
    by_millisecond: &sled::Tree,
    id: &str,
    seq: u64,
) -> Result<(), sled::Error> {
    let Some(uuid) = canonical_uuid(id) else {
        return Ok(());
    };
    let (millisecond, rest) = uuid.split_at(MILLISECOND_BYTES);
    let mut key = [0u8; MILLISECOND_BYTES + 8];
    key[..MILLISECOND_BYTES].copy_from_slice(millisecond);
    key[MILLISECOND_BYTES..].copy_from_slice(&seq.to_be_bytes());
    let mut entry = rest.to_vec();
    entry.extend_from_slice(&0u32.to_be_bytes());
    let record = match by_millisecond.get(key)? {
        // A change whose first event is this one wrote a record here already.
        Some(written) if written.chunks_exact(ENTRY_BYTES).any(|kept| kept == entry) => {
            return Ok(());
        }
        Some(written) => [written.as_ref(), &entry].concat(),
        None => entry,
    };
    by_millisecond.insert(key, record)?;
    Ok(())
}

/// The `seq` of the event `id`: read from the records `by_millisecond` holds for a canonical
/// UUID, from `by_id` for any other id.
pub(super) fn seq_of(
    by_millisecond: &sled::Tree,
    by_id: &sled::Tree,
    id: &str,
) -> Result<Option<u64>, sled::Error> {
    if let Some(uuid) = canonical_uuid(id) {
        let (millisecond, rest) = uuid.split_at(MILLISECOND_BYTES);
        for record in by_millisecond.scan_prefix(millisecond) {
            let (key, entries) = record?;
            let Some(first) = first_seq(&key) else {
                continue;
            };
            for entry in entries.chunks_exact(ENTRY_BYTES) {
                let (entry_rest, offset) = entry.split_at(REST_BYTES);
                if entry_rest == rest {
                    let offset = <[u8; 4]>::try_from(offset).map_or(0, u32::from_be_bytes);
                    return Ok(Some(first + u64::from(offset)));
                }
            }
        }
        return Ok(None);
    }
    Ok(by_id.get(id.as_bytes())?.map(|seq| be_u64(&seq)))
}
