//! The event log on sled ([`EventLog`]): every event by `seq`, several to a record
//! ([`super::event_records`]), the index from an event's id to its `seq`
//! ([`super::event_ids`]), and the runs of events the relay recorded published
//! ([`super::outbox`]). Seqs are handed out under the journal's commit lock, so the log's
//! order is the journal's.

use super::SledStore;
use super::codec::be_u64;
use super::event_ids;
use super::event_records::{EVENT_GROUP_MAX, LogRecord, LoggedEvents, corrupt, logged_event};
use super::journal::Changes;
use crate::domain::events::Event;
use crate::domain::storage::{EventLog, StoreError, StoreFuture};
use chrono::{DateTime, Utc};
use std::ops::ControlFlow;

impl SledStore {
    /// Lists the writes of a change's events, under consecutive new `seq`s in their order: the
    /// event log's records ([`event_log`]; the relay reads them too) and the id
    /// index.
    pub(super) fn write_events(&self, changes: &mut Changes, events: LoggedEvents) {
        if events.len() == 0 {
            return;
        }
        let first = self.next_ids(events.len() as u64);
        events.index.write(
            changes,
            &self.event_ids_by_millisecond,
            &self.event_ids,
            first,
        );
        let keys = (first..).step_by(EVENT_GROUP_MAX);
        for (key, record) in keys.zip(events.records) {
            changes.insert(&self.events, &key.to_be_bytes(), record);
        }
    }

    /// When the relay published event `seq`, if it has.
    pub(super) fn published_at(&self, seq: u64) -> Result<Option<DateTime<Utc>>, StoreError> {
        let run = self
            .published_runs
            .range(seq.to_be_bytes()..)
            .next()
            .transpose()?;
        let at = match run {
            Some((_, value)) if value.len() >= 8 && be_u64(&value[..8]) <= seq => {
                Some(value[8..].to_vec())
            }
            _ => None,
        };
        Ok(at
            .and_then(|at| DateTime::parse_from_rfc3339(&String::from_utf8_lossy(&at)).ok())
            .map(|at| at.with_timezone(&Utc)))
    }

    /// Calls `visit` with each logged event's `seq` and stored bytes from `start` on, in
    /// order, until it breaks.
    pub(super) fn for_each_logged(
        &self,
        start: u64,
        visit: impl FnMut(u64, &[u8]) -> Result<ControlFlow<()>, StoreError>,
    ) -> Result<(), StoreError> {
        for_each_logged(&self.events, start, visit)
    }
}

/// Calls `visit` with each event's `seq` and stored bytes in the log `events` from `start` on,
/// in order, until it breaks.
pub(super) fn for_each_logged(
    events: &sled::Tree,
    start: u64,
    mut visit: impl FnMut(u64, &[u8]) -> Result<ControlFlow<()>, StoreError>,
) -> Result<(), StoreError> {
    // The record holding `start` may begin before it (a group), then every one after.
    let holding = events.range(..start.to_be_bytes()).next_back();
    let records = holding
        .into_iter()
        .chain(events.range(start.to_be_bytes()..));
    for entry in records {
        let (key, value) = entry?;
        let first = be_u64(&key);
        let record = LogRecord::read(first, &value)?;
        for (seq, bytes) in (first..).zip(record.events()) {
            if seq < start {
                continue;
            }
            let bytes = bytes.ok_or_else(|| corrupt(first, "a group of events cut short"))?;
            if visit(seq, bytes)?.is_break() {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// The `seq` of the last event in the log `events`.
pub(super) fn last_logged_seq(events: &sled::Tree) -> Result<Option<u64>, StoreError> {
    let Some((key, _)) = events.last()? else {
        return Ok(None);
    };
    let mut last = None;
    for_each_logged(events, be_u64(&key), |seq, _| {
        last = Some(seq);
        Ok(ControlFlow::Continue(()))
    })?;
    Ok(last)
}

impl EventLog for SledStore {
    fn publish_events<'a>(&'a self, events: &'a [Event]) -> StoreFuture<'a, ()> {
        self.noting_failures(async move {
            self.health.check()?;
            let logged = LoggedEvents::new(events);
            self.journal.commit(|changes| {
                self.write_events(changes, logged);
                Ok(())
            })
        })
    }

    fn events_after(&self, after: Option<u64>, limit: usize) -> StoreFuture<'_, Vec<Event>> {
        Box::pin(async move {
            let start = after.map_or(0, |seq| seq.saturating_add(1));
            let mut events = Vec::with_capacity(limit.min(4096));
            self.for_each_logged(start, |seq, bytes| {
                if events.len() >= limit {
                    return Ok(ControlFlow::Break(()));
                }
                let mut event = logged_event(seq, bytes)?;
                event.published_at = self.published_at(seq)?;
                events.push(event);
                Ok(ControlFlow::Continue(()))
            })?;
            Ok(events)
        })
    }

    fn event_seq<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<u64>> {
        Box::pin(async move {
            Ok(event_ids::seq_of(
                &self.event_ids_by_millisecond,
                &self.event_ids,
                id,
            )?)
        })
    }

    fn outbox_len(&self) -> StoreFuture<'_, usize> {
        Box::pin(std::future::ready(self.unpublished_len()))
    }

    fn prune_events(&self, made_before: DateTime<Utc>, limit: usize) -> StoreFuture<'_, usize> {
        self.noting_failures(async move {
            self.health.check()?;
            if !self.log_start_is_due(made_before)? {
                return Ok(0);
            }
            // A walk over thousands of records: off the worker's queue meanwhile.
            super::blocking::blocking(|| self.prune_logged(made_before, limit))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::sled::tests::event;
    use std::collections::HashSet;

    #[tokio::test]
    async fn an_event_is_found_by_its_id_from_a_few_records_per_change() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SledStore::open(dir.path()).expect("store");
        // Two changes whose events were made in the same millisecond, and one that spans
        // two milliseconds: the records of a millisecond hold several changes' events.
        let made_at = |millisecond: u64, number: usize| {
            let mut event = event(number);
            let random = [number as u8; 10];
            event.id = uuid::Builder::from_unix_timestamp_millis(millisecond, &random)
                .into_uuid()
                .to_string();
            event
        };
        let first: Vec<Event> = (0..3).map(|n| made_at(1_700_000_000_000, n)).collect();
        let second: Vec<Event> = vec![
            made_at(1_700_000_000_000, 3),
            made_at(1_700_000_000_001, 4),
            made_at(1_700_000_000_001, 5),
        ];
        // Ids Ferry does not make: on their own, in a tree of their own.
        let mut unusual = event(6);
        unusual.id = "not-a-uuid".to_owned();
        let mut upper = event(7);
        upper.id = uuid::Uuid::now_v7().to_string().to_uppercase();
        let batch: Vec<Event> = (8..208).map(event).collect();
        for change in [&first[..], &second[..], &[unusual, upper][..], &batch[..]] {
            store.publish_events(change).await.expect("stored");
        }

        let log = store.events_after(None, 1000).await.expect("log");
        assert_eq!(log.len(), 208);
        for logged in &log {
            assert_eq!(
                store.event_seq(&logged.id).await.expect("seq"),
                Some(logged.seq),
                "{}",
                logged.id
            );
        }
        // An id is its exact text; an id never stored is not found.
        let shouted = log[0].id.to_uppercase();
        assert_eq!(store.event_seq(&shouted).await.expect("seq"), None);
        let unknown = uuid::Builder::from_unix_timestamp_millis(1_700_000_000_000, &[9; 10])
            .into_uuid()
            .to_string();
        assert_eq!(store.event_seq(&unknown).await.expect("seq"), None);
        assert_eq!(store.event_seq("").await.expect("seq"), None);

        // Writes: one record per change and millisecond, not one per event.
        assert_eq!(store.event_ids.len(), 2, "the two unusual ids");
        let batch_milliseconds: HashSet<[u8; 6]> = batch
            .iter()
            .map(|event| {
                let uuid = uuid::Uuid::parse_str(&event.id).expect("a UUID");
                <[u8; 6]>::try_from(&uuid.as_bytes()[..6]).expect("six bytes")
            })
            .collect();
        assert_eq!(
            store.event_ids_by_millisecond.len(),
            1 + 2 + batch_milliseconds.len(),
            "the first change's millisecond, the second's two, the batch's"
        );
    }

    #[tokio::test]
    async fn the_log_keeps_a_changes_events_in_groups_and_reads_from_inside_one() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SledStore::open(dir.path()).expect("store");
        let single = event(0);
        store
            .publish_events(std::slice::from_ref(&single))
            .await
            .expect("one");
        let events: Vec<Event> = (1..=150).map(event).collect();
        store.publish_events(&events).await.expect("a batch");
        assert_eq!(
            store.events.len(),
            1 + 3,
            "the single event, 150 in groups of 64, 64 and 22"
        );

        let log = store.events_after(None, 1000).await.expect("log");
        let ids: Vec<&str> = log.iter().map(|event| event.id.as_str()).collect();
        let expected: Vec<&str> = std::iter::once(single.id.as_str())
            .chain(events.iter().map(|event| event.id.as_str()))
            .collect();
        assert_eq!(ids, expected);
        let seqs: Vec<u64> = log.iter().map(|event| event.seq).collect();
        assert!(
            seqs[1..=150].windows(2).all(|pair| pair[1] == pair[0] + 1),
            "a change's events have consecutive seqs: {seqs:?}"
        );
        for (seq, event) in seqs.iter().zip(&log).skip(60).take(10) {
            assert_eq!(store.event_seq(&event.id).await.expect("seq"), Some(*seq));
        }

        // From inside a group, across into the next.
        let page = store.events_after(Some(seqs[60]), 8).await.expect("page");
        assert_eq!(
            page.iter().map(|event| event.seq).collect::<Vec<_>>(),
            seqs[61..69]
        );
        assert_eq!(page[0].id, log[61].id);
        let last = store.events_after(Some(seqs[148]), 8).await.expect("page");
        assert_eq!(
            last.iter().map(|event| event.seq).collect::<Vec<_>>(),
            seqs[149..]
        );
    }
}
