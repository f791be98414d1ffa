//! Version 4: what waits to be published is the log from the relay's cursor on, and when the
//! relay published an event is recorded by runs of `seq`s.
//!
//! Up to version 3 a directory may hold an `outbox` tree (each event waiting, under its `seq`,
//! as its JSON or its stream record: kept by the versions before the cursor, beside the log),
//! may have no cursor (those same versions), and may record publication times one event at a
//! time (`published`: `seq` → RFC 3339). This step:
//! - makes sure every event waiting in `outbox` is in the log (it always was: the log and the
//!   outbox were written in one change);
//! - sets the cursor to the first event waiting, or, with nothing waiting, where it was (a
//!   directory without one: past the last event logged, every event of which was published
//!   or waiting);
//! - records as published, by runs, every event between the new cursor and the old one that
//!   was not waiting, each with its time where `published` had one (the relay's cursor then
//!   passes them as it passes any event published past one not yet published);
//! - records every other time of `published` as a run, and drops `outbox` and `published`.
//!
//! The log and what the relay sees are as before: the same events wait, in the same order, and
//! each event's publication time reads the same.

use super::drop_tree;
use crate::domain::events::Event;
use crate::domain::storage::StoreError;
use crate::events::stream_record::StreamRecord;
use crate::store::sled::codec::be_u64;
use crate::store::sled::event_log::{for_each_logged, last_logged_seq};
use crate::store::sled::outbox::NEXT_UNPUBLISHED;
use std::ops::ControlFlow;

/// The tree of version 3 and before in which events waited to be published.
pub(super) const OUTBOX_TREE: &str = "outbox";
/// The tree of version 3 and before that recorded each event's publication on its own.
pub(super) const PUBLISHED_TREE: &str = "published";

pub(super) fn upgrade(db: &sled::Db) -> Result<(), StoreError> {
    let events = db.open_tree("events")?;
    let outbox = db.open_tree(OUTBOX_TREE)?;
    let cursor = db.open_tree("outbox_cursor")?;
    let published = db.open_tree(PUBLISHED_TREE)?;
    let runs = db.open_tree("published_runs")?;

    let mut first_waiting = None;
    for entry in outbox.iter() {
        let (key, value) = entry?;
        let seq = be_u64(&key);
        first_waiting = Some(first_waiting.map_or(seq, |first: u64| first.min(seq)));
        if !is_logged(&events, seq)? {
            events.insert(key, stream_record(seq, &value)?.into_bytes())?;
        }
    }
    let recorded = cursor.get(NEXT_UNPUBLISHED)?.map(|bytes| be_u64(&bytes));
    let next = match recorded {
        Some(next) => next,
        None => last_logged_seq(&events)?.map_or(0, |last| last + 1),
    };
    let new_next = first_waiting.map_or(next, |first| first.min(next));

    // Every time recorded on its own, by runs of consecutive events published at once.
    let mut timed = Runs::new(&runs);
    for entry in published.iter() {
        let (key, at) = entry?;
        timed.add(be_u64(&key), &at)?;
    }
    timed.finish()?;
    // The events the new cursor is before and the old one was past, not waiting: published,
    // at a time not recorded.
    let mut untimed = Runs::new(&runs);
    for_each_logged(&events, new_next, |seq, _| {
        if seq >= next {
            return Ok(ControlFlow::Break(()));
        }
        if !outbox.contains_key(seq.to_be_bytes())? && !published.contains_key(seq.to_be_bytes())? {
            untimed.add(seq, &[])?;
        }
        Ok(ControlFlow::Continue(()))
    })?;
    untimed.finish()?;
    cursor.insert(NEXT_UNPUBLISHED, &new_next.to_be_bytes())?;
    db.flush()?;
    drop_tree(db, OUTBOX_TREE)?;
    drop_tree(db, PUBLISHED_TREE)?;
    Ok(())
}

/// Runs of published events being recorded: consecutive `seq`s, given in order, that share
/// one time make one run; an event a run recorded already is left out.
struct Runs<'a> {
    runs: &'a sled::Tree,
    /// The run being built: its first and last `seq`, and its time.
    open: Option<(u64, u64, Vec<u8>)>,
}

impl<'a> Runs<'a> {
    fn new(runs: &'a sled::Tree) -> Self {
        Self { runs, open: None }
    }

    fn add(&mut self, seq: u64, at: &[u8]) -> Result<(), StoreError> {
        if in_a_run(self.runs, seq)? {
            return Ok(());
        }
        if let Some((_, last, time)) = &mut self.open
            && last.checked_add(1) == Some(seq)
            && time.as_slice() == at
        {
            *last = seq;
            return Ok(());
        }
        self.finish()?;
        self.open = Some((seq, seq, at.to_vec()));
        Ok(())
    }

    /// Records the run being built.
    fn finish(&mut self) -> Result<(), StoreError> {
        if let Some((first, last, at)) = self.open.take() {
            let mut value = first.to_be_bytes().to_vec();
            value.extend_from_slice(&at);
            self.runs.insert(last.to_be_bytes(), value)?;
        }
        Ok(())
    }
}

/// Whether the log holds event `seq`.
fn is_logged(events: &sled::Tree, seq: u64) -> Result<bool, StoreError> {
    let mut found = false;
    for_each_logged(events, seq, |at, _| {
        found = at == seq;
        Ok(ControlFlow::Break(()))
    })?;
    Ok(found)
}

/// Whether a run of `runs` (keyed by its last `seq`, its first in the value's first eight
/// bytes) holds `seq`.
fn in_a_run(runs: &sled::Tree, seq: u64) -> Result<bool, StoreError> {
    Ok(match runs.range(seq.to_be_bytes()..).next().transpose()? {
        Some((_, value)) => value.get(..8).is_some_and(|first| be_u64(first) <= seq),
        None => false,
    })
}

/// The stream record of an outbox record (its JSON, or its stream record already).
fn stream_record(seq: u64, stored: &[u8]) -> Result<StreamRecord, StoreError> {
    let corrupt = |source| StoreError::Corrupt {
        key: format!("outbox/{seq}"),
        source,
    };
    if stored.first() == Some(&b'{') {
        let event: Event = serde_json::from_slice(stored).map_err(corrupt)?;
        return Ok(StreamRecord::encode(&event));
    }
    StreamRecord::from_stored(stored).map_err(|error| corrupt(serde::de::Error::custom(error)))
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{at, event, fixture};
    use super::*;
    use crate::domain::storage::{EventLog, Outbox};
    use crate::store::sled::SledStore;
    use crate::store::sled::outbox::tests::pending_seqs;
    use std::collections::HashSet;

    async fn pending(store: &SledStore) -> Vec<u64> {
        pending_seqs(store, 100).await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn what_waited_in_the_outbox_waits_from_the_cursor_and_nothing_else_is_sent_again() {
        let dir = fixture("v3-relay-cursor");
        let store = SledStore::open(dir.path()).expect("upgraded");
        assert_eq!(pending(&store).await, [14, 16]);
        assert_eq!(store.outbox_len().await.expect("len"), 2);
        let waiting = store
            .pending_events(100, &HashSet::new())
            .await
            .expect("pending");
        assert_eq!(waiting[0].record, StreamRecord::encode(&event(14)));
        let log = store.events_after(None, 100).await.expect("log");
        let published: Vec<(u64, Option<DateTime>)> = log
            .iter()
            .map(|logged| (logged.seq, logged.published_at))
            .collect();
        assert_eq!(
            published,
            [
                (10, Some(at(100))),
                (11, Some(at(100))),
                (12, Some(at(200))),
                (13, None),
                (14, None),
                (15, None),
                (16, None)
            ],
            "the times recorded one by one read the same"
        );

        // Retention takes what was published before the first event waiting, and no more.
        let now = chrono::Utc::now();
        assert_eq!(store.prune_events(now, 100).await.expect("pruned"), 4);
        let kept: Vec<u64> = store
            .events_after(None, 100)
            .await
            .expect("log")
            .iter()
            .map(|logged| logged.seq)
            .collect();
        assert_eq!(kept, [14, 15, 16]);

        // The relay publishes what waited: the cursor passes 15 too, which was published.
        store.mark_published(&[14, 16], now).await.expect("marked");
        assert!(pending(&store).await.is_empty());
        let later = store.events_after(None, 10).await.expect("log");
        assert_eq!(
            later[0].published_at.map(|at| at.timestamp_millis()),
            Some(now.timestamp_millis())
        );
        drop(store);

        let store = SledStore::open(dir.path()).expect("reopened");
        assert!(pending(&store).await.is_empty(), "nothing is sent twice");
        drop(store);
        let db = sled::open(dir.path()).expect("sled");
        for gone in [OUTBOX_TREE, PUBLISHED_TREE] {
            assert!(
                !db.tree_names()
                    .iter()
                    .any(|name| name.as_ref() == gone.as_bytes()),
                "{gone}"
            );
        }
    }

    type DateTime = chrono::DateTime<chrono::Utc>;
}
