//! The relay's side of the outbox: the events waiting to be published, in the form the relay
//! sends, and the record of what it published. The domain writes the outbox through the
//! storage port ([`crate::domain::storage::Store`]), in the same atomic change as what the
//! events describe; a backend implements this trait beside it.

use super::stream_record::StreamRecord;
use crate::domain::storage::StoreFuture;
use chrono::{DateTime, Utc};
use std::collections::HashSet;

/// An event waiting in the outbox, in the form the relay sends.
#[derive(Debug, Clone)]
pub struct PendingEvent {
    pub seq: u64,
    pub record: StreamRecord,
}

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
