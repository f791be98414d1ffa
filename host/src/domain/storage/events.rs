//! The event log and its outbox. The domain writes events through the log, each in the same
//! atomic change as what it describes ([`EventLog`] for events on their own, and the import
//! changes and units of work that carry theirs); the relay reads what waits to be published
//! through the [`Outbox`] and records what it published. A backend implements both.

use super::StoreFuture;
use crate::domain::events::Event;
use crate::events::stream_record::StreamRecord;
use chrono::{DateTime, Utc};
use std::collections::HashSet;

/// Every event Ferry made, in the order of their `seq`s, kept until retention takes it out.
pub trait EventLog: Send + Sync {
    /// Writes events to the log on their own (operator-published events, dry runs).
    fn publish_events<'a>(&'a self, events: &'a [Event]) -> StoreFuture<'a, ()>;
    /// The event log after `after` (a `seq`), oldest first.
    fn events_after(&self, after: Option<u64>, limit: usize) -> StoreFuture<'_, Vec<Event>>;
    /// The `seq` of the event with this id.
    fn event_seq<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<u64>>;
    /// How many events wait in the outbox.
    fn outbox_len(&self) -> StoreFuture<'_, usize>;
    /// Takes the oldest events out of the log, in log order, about `limit` at a time, while
    /// each was published and made before `made_before`: an event the relay has not published
    /// is never taken, nor any after it. How many were taken (a backend that keeps events in
    /// groups takes whole groups, so it may take a few more than `limit`, or none where a
    /// group is not wholly due). What is left is the log after them, as it was.
    fn prune_events(&self, made_before: DateTime<Utc>, limit: usize) -> StoreFuture<'_, usize>;
}

/// An event waiting in the outbox, in the form the relay sends.
#[derive(Debug, Clone)]
pub struct PendingEvent {
    pub seq: u64,
    pub record: StreamRecord,
}

/// The relay's side of the log: the events waiting to be published, in the form the relay
/// sends, and the record of what it published.
pub trait Outbox: Send + Sync + 'static {
    /// The oldest events not yet published, in log order, leaving out those in `skip` (the
    /// ones the relay is already sending).
    fn pending_events<'a>(
        &'a self,
        limit: usize,
        skip: &'a HashSet<u64>,
    ) -> StoreFuture<'a, Vec<PendingEvent>>;
    /// Marks events published (by `seq`): out of the outbox, `published_at` in the log.
    fn mark_published<'a>(&'a self, seqs: &'a [u64], at: DateTime<Utc>) -> StoreFuture<'a, ()>;
}
