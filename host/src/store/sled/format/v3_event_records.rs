//! Version 3: every event of the log is stored as its stream record, and a record of several
//! events is a compressed group.
//!
//! Up to version 2 the log may hold records of earlier layouts: an event's JSON alone (first
//! byte `{`), and groups written uncompressed ([`GROUP_TAG`]), whose events may be JSON too.
//! This step rewrites each such record, under the same key, as the current code writes it
//! ([`encode_record`]): the events' `seq`s, order and content stay. An event's JSON becomes
//! its stream record, which holds its time to the millisecond, as every event's is made.

use crate::domain::events::Event;
use crate::domain::storage::StoreError;
use crate::events::stream_record::StreamRecord;
use crate::store::sled::codec::be_u64;
use crate::store::sled::event_records::{LogRecord, corrupt, encode_record};
use std::borrow::Cow;

/// First byte of a group written uncompressed (version 2 and before): then, for each event,
/// its length (u32, big endian) and its stored bytes.
pub(super) const GROUP_TAG: u8 = 0x01;

/// The tree of the event log.
const EVENTS_TREE: &str = "events";

pub(super) fn upgrade(db: &sled::Db) -> Result<(), StoreError> {
    let events = db.open_tree(EVENTS_TREE)?;
    for record in events.iter() {
        let (key, value) = record?;
        let first = be_u64(&key);
        let read = match value.split_first() {
            Some((&GROUP_TAG, body)) => LogRecord::Group(Cow::Borrowed(body)),
            _ => LogRecord::read(first, &value)?,
        };
        let mut rewrite = value.first() == Some(&GROUP_TAG);
        let mut stored = Vec::new();
        for (seq, bytes) in (first..).zip(read.events()) {
            let bytes = bytes.ok_or_else(|| corrupt(first, "a group of events cut short"))?;
            if bytes.first() == Some(&b'{') {
                rewrite = true;
                let event: Event =
                    serde_json::from_slice(bytes).map_err(|source| StoreError::Corrupt {
                        key: format!("events/{seq}"),
                        source,
                    })?;
                stored.push(StreamRecord::encode(&event));
            } else {
                stored.push(StreamRecord::from_stored(bytes).map_err(|error| {
                    StoreError::Corrupt {
                        key: format!("events/{seq}"),
                        source: serde::de::Error::custom(error),
                    }
                })?);
            }
        }
        if rewrite {
            events.insert(key, encode_record(&stored))?;
        }
    }
    Ok(())
}

/// A group as version 2 and before wrote it, uncompressed.
#[cfg(test)]
pub(super) fn uncompressed_group(stored: &[StreamRecord]) -> Vec<u8> {
    let mut record = vec![GROUP_TAG];
    for event in stored {
        let len = u32::try_from(event.as_bytes().len()).unwrap_or(u32::MAX);
        record.extend_from_slice(&len.to_be_bytes());
        record.extend_from_slice(event.as_bytes());
    }
    record
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{event, fixture};
    use super::*;
    use crate::domain::storage::{EventLog, Outbox};
    use crate::store::sled::SledStore;
    use std::collections::HashSet;

    #[tokio::test]
    async fn events_of_json_and_uncompressed_groups_read_the_same_as_stream_records() {
        let dir = fixture("v2-event-records");
        let store = SledStore::open(dir.path()).expect("upgraded");
        let expected: Vec<Event> = (10..=19)
            .map(|n| Event {
                seq: u64::from(n),
                ..event(n)
            })
            .collect();
        let log = store.events_after(None, 100).await.expect("log");
        assert_eq!(log, expected);
        let from_inside = store.events_after(Some(12), 2).await.expect("log");
        assert_eq!(from_inside, expected[3..5]);
        for logged in &expected {
            let pending = store
                .pending_events(100, &HashSet::new())
                .await
                .expect("pending");
            assert!(
                pending.iter().any(|waiting| waiting.seq == logged.seq
                    && waiting.record == StreamRecord::encode(logged)),
                "{} waits as its stream record",
                logged.seq
            );
        }
        drop(store);

        let db = sled::open(dir.path()).expect("sled");
        let events = db.open_tree(EVENTS_TREE).expect("tree");
        let keys: Vec<u64> = events
            .iter()
            .keys()
            .map(|key| be_u64(&key.expect("key")))
            .collect();
        assert_eq!(keys, [10, 11, 14, 16, 19], "each record where it was");
        for record in events.iter() {
            let (_, value) = record.expect("read");
            assert!(
                !matches!(value.first(), Some(&GROUP_TAG | b'{')),
                "rewritten: {value:?}"
            );
        }
    }
}
