//! The records of the sled event log: every event Ferry stores, by `seq`, several to a record,
//! in the form the relay sends ([`StreamRecord`]).
//!
//! A change's events are encoded for the log before the change takes the journal's commit lock
//! ([`LoggedEvents`]); under it they are only given their `seq`s. A record holds one stored
//! event (what a change with one event writes), or a group of up to [`EVENT_GROUP_MAX`] events
//! with consecutive `seq`s from the record's key, compressed (LZ4). The events of a group share
//! most of their bytes (field names, type, source, the payload's keys, much of the ids and
//! times): 64 ledger-entry events of 33 KB compress to 2 KB ([`compressed`]). Uncompressed,
//! the log's leaves took about half of what sled wrote while 1000-item batches ran.

use super::codec::{compressed, decompressed};
use super::event_ids::IdIndex;
use crate::domain::events::Event;
use crate::domain::storage::StoreError;
use crate::events::stream_record::StreamRecord;
use chrono::{DateTime, Utc};
use std::borrow::Cow;

/// At most this many events share one record of the log: a 1000-transaction batch writes 16
/// records there rather than 1000.
pub(super) const EVENT_GROUP_MAX: usize = 64;

/// First byte of a compressed group: then the group's body (for each event, its length, u32
/// big endian, and its stored bytes) as an LZ4 block, its size first (u32, little endian).
const COMPRESSED_GROUP_TAG: u8 = 0x02;

/// A change's events in the forms the log stores them, made before the change takes the commit
/// lock: the records of the log, the first holding the first [`EVENT_GROUP_MAX`] events, and
/// of the id index.
pub(in crate::store) struct LoggedEvents {
    count: usize,
    pub(super) records: Vec<Vec<u8>>,
    pub(super) index: IdIndex,
}

impl LoggedEvents {
    pub(in crate::store) fn new(events: &[Event]) -> Self {
        let mut stored: Vec<StreamRecord> = events.iter().map(StreamRecord::encode).collect();
        let records = if stored.len() == 1 {
            vec![stored.swap_remove(0).into_bytes()]
        } else {
            stored.chunks(EVENT_GROUP_MAX).map(encode_record).collect()
        };
        Self {
            count: events.len(),
            records,
            index: IdIndex::of(events.iter().map(|event| event.id.as_str())),
        }
    }

    pub(super) fn len(&self) -> usize {
        self.count
    }
}

/// The record of the log holding `stored` (events with consecutive `seq`s).
pub(super) fn encode_record(stored: &[StreamRecord]) -> Vec<u8> {
    if let [single] = stored {
        return single.as_bytes().to_vec();
    }
    let size = stored.iter().map(|event| 4 + event.as_bytes().len()).sum();
    let mut body = Vec::with_capacity(size);
    for event in stored {
        // A stored event is bounded by the request body limit, far below 4 GiB.
        body.extend_from_slice(&(event.as_bytes().len() as u32).to_be_bytes());
        body.extend_from_slice(event.as_bytes());
    }
    compressed(COMPRESSED_GROUP_TAG, &body)
}

/// One record of the log, read: the stored events it holds, in `seq` order.
pub(super) enum LogRecord<'a> {
    Single(&'a [u8]),
    /// A group's body: each event's length (u32, big endian), then its stored bytes.
    Group(Cow<'a, [u8]>),
}

impl<'a> LogRecord<'a> {
    /// Reads the record at `seq` (its key), decompressing a compressed group.
    pub(super) fn read(seq: u64, record: &'a [u8]) -> Result<Self, StoreError> {
        match record.split_first() {
            Some((&COMPRESSED_GROUP_TAG, block)) => decompressed(block)
                .map(|body| Self::Group(Cow::Owned(body)))
                .ok_or_else(|| corrupt(seq, "a compressed group of events does not decompress")),
            _ => Ok(Self::Single(record)),
        }
    }

    /// Each stored event, in `seq` order; `None` where the record is cut short (corrupt).
    pub(super) fn events(&self) -> impl Iterator<Item = Option<&[u8]>> {
        let (single, mut rest) = match self {
            Self::Single(record) => (Some(*record), &[][..]),
            Self::Group(body) => (None, &body[..]),
        };
        let mut failed = false;
        let grouped = std::iter::from_fn(move || {
            if rest.is_empty() || failed {
                return None;
            }
            let stored = rest
                .split_first_chunk::<4>()
                .map(|(len, after)| (u32::from_be_bytes(*len) as usize, after))
                .and_then(|(len, after)| (after.len() >= len).then(|| after.split_at(len)));
            match stored {
                Some((stored, after)) => {
                    rest = after;
                    Some(Some(stored))
                }
                None => {
                    failed = true;
                    Some(None)
                }
            }
        });
        single.map(Some).into_iter().chain(grouped)
    }
}

/// The record of the log at `key` is not what Ferry wrote.
pub(super) fn corrupt(key: u64, problem: &'static str) -> StoreError {
    StoreError::Corrupt {
        key: format!("events/{key}"),
        source: serde::de::Error::custom(problem),
    }
}

/// The event of the log stored at `seq`.
pub(super) fn logged_event(seq: u64, bytes: &[u8]) -> Result<Event, StoreError> {
    let mut event = StreamRecord::from_stored(bytes)
        .and_then(|record| record.to_event())
        .map_err(|error| unreadable(seq, error))?;
    event.seq = seq;
    Ok(event)
}

/// When the event of the log stored at `seq` was made, read without decoding the rest of it.
pub(super) fn logged_time(seq: u64, bytes: &[u8]) -> Result<DateTime<Utc>, StoreError> {
    StreamRecord::stored_time(bytes).map_err(|error| unreadable(seq, error))
}

/// The event of the log stored at `seq` does not read, for the reason `error` gives.
fn unreadable(seq: u64, error: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt {
        key: format!("events/{seq}"),
        source: serde::de::Error::custom(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::sled::tests::event;

    fn read_back(seq: u64, record: &[u8]) -> Result<Vec<Vec<u8>>, StoreError> {
        let read = LogRecord::read(seq, record)?;
        read.events()
            .map(|stored| {
                stored
                    .map(<[u8]>::to_vec)
                    .ok_or_else(|| corrupt(seq, "cut short"))
            })
            .collect()
    }

    #[test]
    fn a_group_is_kept_compressed_and_read_back_event_by_event() {
        let events: Vec<Event> = (0..64).map(event).collect();
        let stored: Vec<StreamRecord> = events.iter().map(StreamRecord::encode).collect();
        let logged = LoggedEvents::new(&events);
        assert_eq!(logged.records.len(), 1);
        let record = &logged.records[0];
        assert_eq!(record[0], COMPRESSED_GROUP_TAG);
        let raw: usize = stored.iter().map(|event| 4 + event.as_bytes().len()).sum();
        assert!(
            record.len() * 3 < raw,
            "compressed to {} bytes of {raw}",
            record.len()
        );
        let expected: Vec<Vec<u8>> = stored.iter().map(|s| s.as_bytes().to_vec()).collect();
        assert_eq!(read_back(1, record).expect("read"), expected);
    }

    #[test]
    fn a_change_is_cut_into_groups_and_a_single_event_is_stored_as_it_is() {
        let events: Vec<Event> = (0..150).map(event).collect();
        let logged = LoggedEvents::new(&events);
        assert_eq!(logged.len(), 150);
        let sizes: Vec<usize> = logged
            .records
            .iter()
            .enumerate()
            .map(|(i, record)| read_back(i as u64, record).expect("read").len())
            .collect();
        assert_eq!(sizes, [64, 64, 22]);

        let one = LoggedEvents::new(&events[..1]);
        assert_eq!(
            one.records,
            [StreamRecord::encode(&events[0]).as_bytes().to_vec()]
        );
    }

    #[test]
    fn a_damaged_compressed_group_is_corrupt_not_a_panic_or_a_huge_allocation() {
        let events: Vec<Event> = (0..10).map(event).collect();
        let record = LoggedEvents::new(&events).records.remove(0);
        // Cut short.
        let cut = &record[..record.len() / 2];
        assert!(matches!(
            read_back(3, cut),
            Err(StoreError::Corrupt { key, .. }) if key == "events/3"
        ));
        // A size past any group's.
        let mut huge = record.clone();
        huge[1..5].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            read_back(3, &huge),
            Err(StoreError::Corrupt { .. })
        ));
        // No size at all.
        assert!(matches!(
            read_back(3, &[COMPRESSED_GROUP_TAG, 1]),
            Err(StoreError::Corrupt { .. })
        ));
    }
}
