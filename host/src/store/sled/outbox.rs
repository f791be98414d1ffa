//! The relay's outbox on sled: the event log itself, read from a cursor.
//!
//! Events are stored once, in the event log, in the form the relay sends ([`StreamRecord`],
//! several to a record: [`super::event_log`]). Their `seq`s are handed out under
//! the journal's commit lock and the writer makes the changes in sled in the journal's order,
//! so what sled holds of the log is always a prefix in `seq` order, and all of it durable.
//! What is not published yet is every logged event from the cursor on ([`RelayCursor`]): no
//! outbox record per event to write, and none to remove once published; one cursor write per
//! relay round instead.
//!
//! The cursor is one record (`outbox_cursor`); the runs of events the relay recorded published
//! past it (`published_runs`, which also give the log its publication times) are read back
//! into memory when the store opens. A directory with no cursor recorded has published
//! nothing.

use super::SledStore;
use super::StoreError;
use super::codec::be_u64;
use super::journal::Changes;
use crate::domain::storage::StoreFuture;
use crate::domain::storage::{Outbox, PendingEvent};
use crate::events::stream_record::StreamRecord;
use chrono::{DateTime, Utc};
use std::collections::{BTreeSet, HashSet};
use std::ops::ControlFlow;

/// The key of the cursor in the `outbox_cursor` tree: the first `seq` not known published
/// (u64, big endian).
pub(super) const NEXT_UNPUBLISHED: &[u8] = b"next_unpublished";

/// Where the relay stands in the log: every logged event before `next` is published, and so
/// is each one in `ahead` (published out of order, past one that is not yet). The relay marks
/// its batches in log order, so `ahead` is empty but for the moment of a mark.
#[derive(Debug, Default)]
pub(super) struct RelayCursor {
    next: u64,
    ahead: BTreeSet<u64>,
}

impl SledStore {
    /// The relay's cursor after the journal's replay: as last recorded (none: the start of
    /// the log), with the runs recorded published past it.
    pub(super) fn open_relay_cursor(&self) -> Result<RelayCursor, StoreError> {
        let next = self
            .outbox_cursor
            .get(NEXT_UNPUBLISHED)?
            .map_or(0, |bytes| be_u64(&bytes));
        let mut cursor = RelayCursor {
            next,
            ahead: BTreeSet::new(),
        };
        for run in self.published_runs.range(next.to_be_bytes()..) {
            let (last, value) = run?;
            let first = value.get(..8).map_or(0, be_u64).max(next);
            cursor.ahead.extend(first..=be_u64(&last));
        }
        self.advance(&mut cursor)?;
        Ok(cursor)
    }

    /// Moves `cursor.next` past the logged events in `cursor.ahead`, in log order.
    fn advance(&self, cursor: &mut RelayCursor) -> Result<(), StoreError> {
        if cursor.ahead.is_empty() {
            return Ok(());
        }
        let mut next = cursor.next;
        self.for_each_logged(cursor.next, |seq, _| {
            Ok(if cursor.ahead.remove(&seq) {
                next = seq + 1;
                ControlFlow::Continue(())
            } else {
                ControlFlow::Break(())
            })
        })?;
        cursor.next = next;
        // Anything left below is out of the log already.
        cursor.ahead = cursor.ahead.split_off(&next);
        Ok(())
    }

    /// How many events wait to be published: a walk over them, made without holding the
    /// cursor, which the relay would otherwise wait for meanwhile.
    pub(super) fn unpublished_len(&self) -> Result<usize, StoreError> {
        let (next, ahead) = {
            let cursor = self.lock_relay_cursor();
            (cursor.next, cursor.ahead.clone())
        };
        let mut count = 0;
        self.for_each_logged(next, |seq, _| {
            if !ahead.contains(&seq) {
                count += 1;
            }
            Ok(ControlFlow::Continue(()))
        })?;
        Ok(count)
    }

    /// The first `seq` not known published: the cursor's.
    pub(super) fn first_unpublished(&self) -> u64 {
        self.lock_relay_cursor().next
    }

    fn lock_relay_cursor(&self) -> std::sync::MutexGuard<'_, RelayCursor> {
        self.relay_cursor
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Outbox for SledStore {
    fn pending_events<'a>(
        &'a self,
        limit: usize,
        skip: &'a HashSet<u64>,
    ) -> StoreFuture<'a, Vec<PendingEvent>> {
        Box::pin(async move {
            let mut pending = Vec::with_capacity(limit.min(4096));
            let stored = |seq: u64, bytes: &[u8]| {
                StreamRecord::from_stored(bytes).map_err(|source| StoreError::Outbox {
                    seq,
                    source: Box::new(source),
                })
            };
            let cursor = self.lock_relay_cursor();
            self.for_each_logged(cursor.next, |seq, bytes| {
                if pending.len() >= limit {
                    return Ok(ControlFlow::Break(()));
                }
                if !skip.contains(&seq) && !cursor.ahead.contains(&seq) {
                    let record = stored(seq, bytes)?;
                    pending.push(PendingEvent { seq, record });
                }
                Ok(ControlFlow::Continue(()))
            })?;
            Ok(pending)
        })
    }

    fn mark_published<'a>(&'a self, seqs: &'a [u64], at: DateTime<Utc>) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let when = at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
            let mut sorted = seqs.to_vec();
            sorted.sort_unstable();
            sorted.dedup();
            // One change: the runs recorded and the cursor moved. Made in sled at once, and journaled without waiting
            // for it: a crash before the record is on disk leaves the events unpublished, and
            // the relay's reconciliation with the stream keeps them from being sent twice.
            // The cursor in memory is the one the relay reads meanwhile: the journal's writer
            // makes each cursor write in sled again after the fact, perhaps after a later one.
            let mut changes = Changes::default();
            for (first, last) in consecutive_runs(&sorted) {
                let mut value = Vec::with_capacity(8 + when.len());
                value.extend_from_slice(&first.to_be_bytes());
                value.extend_from_slice(when.as_bytes());
                changes.insert(&self.published_runs, &last.to_be_bytes(), value);
            }
            let mut cursor = self.lock_relay_cursor();
            let before = cursor.next;
            cursor
                .ahead
                .extend(sorted.iter().copied().filter(|&seq| seq >= before));
            self.advance(&mut cursor)?;
            if cursor.next != before {
                changes.insert(
                    &self.outbox_cursor,
                    NEXT_UNPUBLISHED,
                    &cursor.next.to_be_bytes(),
                );
            }
            self.journal.make_now(changes)?;
            Ok(())
        })
    }
}

/// The runs of consecutive numbers in sorted, distinct `seqs`, as (first, last).
fn consecutive_runs(seqs: &[u64]) -> Vec<(u64, u64)> {
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for &seq in seqs {
        match runs.last_mut() {
            Some((_, last)) if last.checked_add(1) == Some(seq) => *last = seq,
            _ => runs.push((seq, seq)),
        }
    }
    runs
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::tests::event;
    use super::*;
    use crate::domain::events::Event;
    use crate::domain::storage::{Durability, EventLog};

    async fn pending_ids(store: &SledStore) -> Vec<String> {
        store
            .pending_events(1000, &HashSet::new())
            .await
            .expect("pending")
            .iter()
            .map(|event| event.record.id().expect("id").to_owned())
            .collect()
    }

    pub(in crate::store::sled) async fn pending_seqs(store: &SledStore, limit: usize) -> Vec<u64> {
        store
            .pending_events(limit, &HashSet::new())
            .await
            .expect("pending")
            .iter()
            .map(|event| event.seq)
            .collect()
    }

    /// Marks the first `limit` pending events published, as the relay does.
    async fn publish_pending(store: &SledStore, limit: usize) {
        let seqs = pending_seqs(store, limit).await;
        store
            .mark_published(&seqs, Utc::now())
            .await
            .expect("marked");
    }

    fn ids(events: &[Event]) -> Vec<String> {
        events.iter().map(|event| event.id.clone()).collect()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_cursor_and_what_was_published_past_a_gap_outlast_a_restart() {
        let dir = tempfile::tempdir().expect("temp dir");
        let events: Vec<Event> = (0..6).map(event).collect();
        {
            let store = SledStore::open(dir.path()).expect("store");
            store.publish_events(&events).await.expect("logged");
            let seqs = pending_seqs(&store, 10).await;
            // 0 and 1 in order, then 4 past the gap of 2 and 3.
            store
                .mark_published(&[seqs[1], seqs[0], seqs[4]], Utc::now())
                .await
                .expect("marked");
            let left = [&events[2..4], &events[5..]].concat();
            assert_eq!(pending_ids(&store).await, ids(&left));
            assert_eq!(store.unpublished_len().expect("len"), 3);
            store.flush().await.expect("flushed");
        }
        let store = SledStore::open(dir.path()).expect("reopened");
        let left = [&events[2..4], &events[5..]].concat();
        assert_eq!(pending_ids(&store).await, ids(&left));
        // The gap filled: the cursor passes 4 as well.
        publish_pending(&store, 2).await;
        assert_eq!(pending_ids(&store).await, ids(&events[5..]));
        let cursor = store.lock_relay_cursor();
        assert!(cursor.ahead.is_empty(), "{cursor:?}");
    }

    #[tokio::test]
    async fn the_outbox_hands_out_stream_records_and_publication_is_recorded_per_run() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SledStore::open(dir.path()).expect("store");
        let events: Vec<Event> = (0..10).map(event).collect();
        store.publish_events(&events).await.expect("outbox");

        let pending = store
            .pending_events(100, &HashSet::new())
            .await
            .expect("pending");
        assert_eq!(pending.len(), 10);
        let ids: Vec<&str> = pending
            .iter()
            .map(|event| event.record.id().expect("id"))
            .collect();
        let expected: Vec<&str> = events.iter().map(|event| event.id.as_str()).collect();
        assert_eq!(ids, expected, "in log order, with their ids");

        // Events the relay already holds are left out.
        let seqs: Vec<u64> = pending.iter().map(|event| event.seq).collect();
        let skip: HashSet<u64> = seqs[..4].iter().copied().collect();
        let rest = store.pending_events(3, &skip).await.expect("pending");
        assert_eq!(
            rest.iter().map(|event| event.seq).collect::<Vec<_>>(),
            seqs[4..7]
        );

        // Two runs with a gap: 0,1,2 and 5,6.
        let at = DateTime::parse_from_rfc3339("2026-11-22T10:00:00.123Z")
            .expect("time")
            .with_timezone(&Utc);
        let published = [seqs[6], seqs[0], seqs[2], seqs[1], seqs[5]];
        store.mark_published(&published, at).await.expect("mark");
        assert_eq!(store.published_runs.len(), 2, "one record per run");
        assert_eq!(store.outbox_len().await.expect("len"), 5);

        let log = store.events_after(None, 100).await.expect("log");
        let published_at: Vec<bool> = log
            .iter()
            .map(|event| event.published_at == Some(at))
            .collect();
        assert_eq!(
            published_at,
            [
                true, true, true, false, false, true, true, false, false, false
            ]
        );
        assert!(
            log.iter()
                .all(|e| e.published_at.is_none() || e.published_at == Some(at))
        );
    }

    #[test]
    fn runs_join_consecutive_numbers_only() {
        assert_eq!(consecutive_runs(&[]), []);
        assert_eq!(
            consecutive_runs(&[1, 2, 3, 5, 7, 8, u64::MAX]),
            [(1, 3), (5, 5), (7, 8), (u64::MAX, u64::MAX)]
        );
    }
}
